#!/usr/bin/env bash
# Runs every fuzz target for $FUZZTIME (default 60s; make test uses 5s).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-60s}"
# package:target pairs, discovered from the sources.
mapfile -t targets < <(grep -rlE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' --include='*_test.go' . | grep -v '^./bench/' | while read -r f; do
  pkg="./$(dirname "${f#./}")"
  grep -oE '^func Fuzz[A-Za-z0-9_]+' "$f" | sed 's/^func //' | while read -r t; do echo "$pkg:$t"; done
done)
for pt in "${targets[@]}"; do
  pkg="${pt%%:*}"; t="${pt##*:}"
  echo "fuzz $pkg $t ($FUZZTIME)"
  go test -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME" "$pkg"
done
