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
echo "== staticcheck"
# Pinned; installed from the Go module proxy when missing or of another version.
STATICCHECK_VERSION=v0.8.2
sc="$(go env GOPATH)/bin/staticcheck"
have="$( [ -x "$sc" ] && go version -m "$sc" 2>/dev/null | awk '$1 == "mod" && $2 == "honnef.co/go/tools" {print $3}' || true)"
if [ "$have" != "$STATICCHECK_VERSION" ]; then
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$sc" ./...

echo "== services"
# PostgreSQL, MariaDB, S3 and DynamoDB on loopback (see scripts/services.sh).
. scripts/services.sh
lima_services

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== tui-test (the wizard in tmux, every gate of the demo, at 100x30 and 80x24)"
TUI_SIZE=100x30 bash scripts/tui-test.sh
TUI_SIZE=80x24 bash scripts/tui-test.sh

echo "== bench smoke (3,000 rows; make bench runs 1,000,000)"
(cd bench && go run . -rows 3000 -duckdb=false)

echo "== short fuzz"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh
