#!/usr/bin/env bash
# The test command of `make test` and CI: lint, unit and integration tests,
# and a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

echo "== gofmt"
unformatted="$(gofmt -l . | grep -v '^bench/' || true)"
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...

echo "== services"
# The PostgreSQL state store is tested against a real server; the script
# starts (or installs) one when none answers on 127.0.0.1:5432.
if bash scripts/ensure-postgres.sh; then
  export LIMA_REQUIRE_SERVICES=1
else
  echo "!!! PostgreSQL could not be made available: its tests will SKIP loudly (CI fails instead)"
fi

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== short fuzz"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh
