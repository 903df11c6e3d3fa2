#!/usr/bin/env bash
# make mutate: mutation testing (gremlins) of the packages that hold Lima's
# guarantees — gate 4 and the other gates, the loader, the ledger, the
# Iceberg sink, the sanitizer, the teardown and the redaction code. Each
# package is mutated on its own, its own tests run against every mutant,
# with the services up; the kill rate per package, every surviving mutant
# (file:line, mutator) and a total over the packages run are printed at the
# end. Not part of CI: a full run takes hours on a laptop. Run it before
# calling a change to these packages done, or on one package:
# bash scripts/mutate.sh ui/textsafe
#
# Arguments: package specs, default the guarantee packages below. A spec is
# a package folder (gates), or folder:regexp to mutate only the files of
# the folder whose name matches (flow:^teardown). Sub-folders are always
# left out: they are other packages, with their own spec.
#
# Environment:
#   MUTATE_WORKERS              parallel mutants (default 1: the tests are
#                               heavy and share the services)
#   MUTATE_TIMEOUT_COEFFICIENT  a mutant's test run may take this many times
#                               the first (coverage) run (default 10). The
#                               time includes compiling the mutated package,
#                               which the coverage run found cached: on a
#                               loaded machine a small coefficient turns slow
#                               compiles into false TIMED OUT mutants (ui at
#                               3: 66 of 92 timed out)
#   MUTATE_OUT                  folder for gremlins' JSON and logs (.mutate)
#   MUTATE_FLAGS                more gremlins flags (default --invert-logical:
#                               && and || swapped, on top of gremlins'
#                               default mutators)
#   MUTATE_DRY=1                find and count the mutants, run none
#   MUTATE_VIABLE=0             skip the re-check of KILLED mutants that do
#                               not build (scripts/mutantviable.go)
set -euo pipefail
cd "$(dirname "$0")/.."
# -count=1: the coverage run that sets the per-mutant timeout must not be
# answered from the test cache (a cached 0.7 s run made every mutant time out).
export GOFLAGS="${GOFLAGS:--buildvcs=false -count=1}"

GREMLINS_MODULE=github.com/go-gremlins/gremlins
GREMLINS_VERSION=v0.6.0
DEFAULT_SPECS=(
  ui/textsafe              # the sanitizer of untrusted text (ui.Sanitize and
                           # ui.EscapeJSON delegate to it; `ui` stays a spec
                           # of its own: bash scripts/mutate.sh ui)
  gates                    # gate 4 (reconcile), gate 5 (teardown), DSN redaction of gate 2
  engine/run               # conservation before commit, cdc ordering, replay, load-time DSN redaction
  engine/ledger            # the exception ledger
  engine/sink/icesink      # exactly-once commits
  'flow:^teardown'         # the teardown wiring (scope, blast radius growth, S3 objects)
)
# A package of its own for the redaction code, when there is one.
for d in internal/redact internal/secrets; do
  [ -d "$d" ] && DEFAULT_SPECS+=("$d")
done

workers="${MUTATE_WORKERS:-1}"
coef="${MUTATE_TIMEOUT_COEFFICIENT:-10}"
out="${MUTATE_OUT:-.mutate}"
read -r -a extra <<<"${MUTATE_FLAGS:---invert-logical}"
specs=("$@")
[ "${#specs[@]}" -gt 0 ] || specs=("${DEFAULT_SPECS[@]}")

command -v jq >/dev/null || { echo "mutate: jq is needed to read gremlins' results" >&2; exit 2; }

# gremlins, installed from the Go module proxy when missing or of another
# version.
bin="$(go env GOPATH)/bin/gremlins"
have="$( [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | awk '$1 == "mod" && $2 == "'"$GREMLINS_MODULE"'" {print $3}' || true)"
if [ "$have" != "$GREMLINS_VERSION" ]; then
  echo "== installing gremlins $GREMLINS_VERSION"
  go install "$GREMLINS_MODULE/cmd/gremlins@$GREMLINS_VERSION"
fi

echo "== services"
. scripts/services.sh
lima_services

mkdir -p "$out"
summary="$out/summary.txt"
counts="$out/counts.txt" # per package: killed timed-out lived not-covered not-viable
: >"$summary"
: >"$counts"
status=0
for spec in "${specs[@]}"; do
  dir="${spec%%:*}"
  keep=""
  [ "$spec" = "$dir" ] || keep="${spec#*:}"
  [ -d "$dir" ] || { echo "mutate: no folder $dir" >&2; status=2; continue; }
  # gremlins matches -E against paths relative to the package folder.
  excl=(-E '/')
  if [ -n "$keep" ]; then
    for f in "$dir"/*.go; do
      b="$(basename "$f")"
      case "$b" in *_test.go) continue ;; esac
      grep -Eq -- "$keep" <<<"$b" || excl+=(-E "^${b//./\\.}\$")
    done
  fi
  name="$(tr '/:^$' '____' <<<"$spec")"
  json="$out/$name.json"
  log="$out/$name.log"
  rm -f "$json"
  args=(unleash "./$dir" --workers "$workers" --timeout-coefficient "$coef" --output "$json" "${excl[@]}" "${extra[@]}")
  [ "${MUTATE_DRY:-}" = 1 ] && args+=(--dry-run)
  echo "== $spec: gremlins ${args[*]} (log: $log)"
  start=$(date +%s)
  if ! "$bin" "${args[@]}" >"$log" 2>&1; then
    echo "!!! gremlins failed on $spec; the end of $log:" >&2
    tail -20 "$log" >&2
    status=1
    continue
  fi
  secs=$(($(date +%s) - start))
  # gremlins v0.6.0 counts a mutant whose package does not build or fails
  # go test's vet checks as KILLED: re-apply each KILLED mutant alone as a
  # build overlay and type-check it; those that fail become NOT VIABLE and
  # leave the rate (scripts/mutantviable.go). MUTATE_VIABLE=0 skips it.
  if [ "${MUTATE_DRY:-}" != 1 ] && [ "${MUTATE_VIABLE:-1}" != 0 ]; then
    vstart=$(date +%s)
    if go run scripts/mutantviable.go -dir "$dir" -in "$json" -out "$out/$name.viable.json" >"$out/$name.viable.log" 2>&1; then
      json="$out/$name.viable.json"
      echo "   not viable re-check: $(tail -1 "$out/$name.viable.log") in $(($(date +%s) - vstart))s"
    else
      echo "!!! the not-viable re-check failed on $spec (gremlins' own statuses used); $out/$name.viable.log:" >&2
      tail -5 "$out/$name.viable.log" >&2
      status=1
    fi
  fi
  # The kill rate is gremlins' efficacy, killed / (killed + lived). Timed
  # out mutants are counted apart (a hang is caught, a slow compile is
  # not: they are listed to be looked at); NOT VIABLE ones did not compile.
  # NOT COVERED ones no test reached — or sit in a switch case's
  # expression, which Go's coverage profile does not count, so gremlins
  # never runs them: they are listed too.
  jq -r --arg spec "$spec" --arg dir "$dir" --arg secs "$secs" '
    [.files[] as $f | $f.mutations[] | . + {file: ($dir + "/" + $f.file_name)}] as $m
    | def n(s): [$m[] | select(.status == s)] | length;
      (n("KILLED")) as $k | (n("TIMED OUT")) as $t | (n("LIVED")) as $l
    | (n("NOT COVERED")) as $c | (n("NOT VIABLE")) as $v | (n("RUNNABLE")) as $r
    | "\($spec): " + (if ($k + $l) > 0 then "\((100 * $k / ($k + $l)) * 10 | round / 10)% killed" else "no mutant ran to the end" end)
      + " (\($k) killed, \($t) timed out, \($l) lived; \($c) not covered, \($v) not viable"
      + (if $r > 0 then ", \($r) found (dry run)" else "" end) + ") in \($secs)s",
      ($m[] | select(.status == "LIVED") | "    LIVED        \(.file):\(.line):\(.column) \(.type)"),
      ($m[] | select(.status == "TIMED OUT") | "    TIMED OUT    \(.file):\(.line):\(.column) \(.type)"),
      ($m[] | select(.status == "NOT COVERED") | "    NOT COVERED  \(.file):\(.line):\(.column) \(.type)"),
      ($m[] | select(.status == "NOT VIABLE") | "    NOT VIABLE   \(.file):\(.line):\(.column) \(.type)")
  ' "$json" | tee -a "$summary"
  jq -r '[.files[].mutations[].status] as $s | def n(x): [$s[] | select(. == x)] | length;
    "\(n("KILLED")) \(n("TIMED OUT")) \(n("LIVED")) \(n("NOT COVERED")) \(n("NOT VIABLE"))"' "$json" >>"$counts"
done
echo
echo "== mutation testing: kill rate per package (details in $summary)"
grep -v '^    ' "$summary" || true
# One figure over every package run: killed / (killed + lived), the same
# rate as per package; timed out and not covered mutants counted apart.
awk '{k += $1; t += $2; l += $3; c += $4; v += $5; n++}
  END {
    if (n == 0) exit
    printf "total over %d package(s): ", n
    if (k + l > 0) printf "%.1f%% killed", 100 * k / (k + l); else printf "no mutant ran to the end"
    printf " (%d killed, %d lived; %d timed out; %d not covered, %d not viable)\n", k, l, t, c, v
  }' "$counts"
# gremlins v0.6.0 reports a mutant that does not compile or fails vet (a
# string + made -, x == a && x == b) as KILLED and "not viable" as 0; the
# re-check above moves them to not viable (unless MUTATE_VIABLE=0).
[ "${MUTATE_VIABLE:-1}" != 0 ] || echo "note: MUTATE_VIABLE=0: gremlins $GREMLINS_VERSION counts mutants that do not build as killed (see docs/tests.md)"
exit "$status"
