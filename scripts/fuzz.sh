#!/usr/bin/env bash
# Runs every fuzz target for $FUZZTIME (default 60s; make test uses 5s).
# A target that fails with a crashing input fails the script at once. Go's
# fuzzer can also stop with "context deadline exceeded" when a worker is
# slow to answer at the end of -fuzztime on a loaded machine; that is not a
# finding (no failing input is written), so such a run is retried once.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-60s}"
# package:target pairs, discovered from the sources.
mapfile -t targets < <(grep -rlE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' --include='*_test.go' . | grep -v '^./bench/' | sort | while read -r f; do
  pkg="./$(dirname "${f#./}")"
  grep -oE '^func Fuzz[A-Za-z0-9_]+' "$f" | sed 's/^func //' | while read -r t; do echo "$pkg:$t"; done
done)
for pt in "${targets[@]}"; do
  pkg="${pt%%:*}"; t="${pt##*:}"
  for attempt in 1 2; do
    echo "fuzz $pkg $t ($FUZZTIME)"
    out="$(mktemp)"
    if go test -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$out"; then
      rm -f "$out"; break
    fi
    if grep -q "Failing input written" "$out" || ! grep -q "context deadline exceeded" "$out" || [ "$attempt" = 2 ]; then
      rm -f "$out"; echo "fuzz $pkg $t: FAILED"; exit 1
    fi
    rm -f "$out"; echo "fuzz $pkg $t: the fuzzer timed out without a finding; running it once more"
  done
done
