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
# PostgreSQL, MariaDB and S3 on loopback (see scripts/services.sh).
. scripts/services.sh
lima_services

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== tui-test (the wizard in tmux, every gate of the demo)"
bash scripts/tui-test.sh

echo "== bench smoke (3,000 rows; make bench runs 1,000,000)"
(cd bench && go run . -rows 3000 -duckdb=false)

echo "== short fuzz"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh
