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
# PostgreSQL (the shared state store, the database source) and MariaDB (the
# database source) are tested against real servers; the scripts start them,
# or install them from Debian packages, when none answers on loopback.
services_ok=1
bash scripts/ensure-postgres.sh || { services_ok=0; echo "!!! PostgreSQL could not be made available"; }
bash scripts/ensure-mariadb.sh || { services_ok=0; echo "!!! MariaDB could not be made available"; }
# S3 (source, warehouse, raw/): versitygw on loopback, installed with go
# install when missing; the LIMA_TEST_S3_* variables point the tests at it.
if s3env="$(bash scripts/ensure-s3.sh --env)"; then
  eval "$s3env"
else
  services_ok=0; echo "!!! the S3 server (versitygw) could not be made available"
fi
if [ "$services_ok" = 1 ]; then
  export LIMA_REQUIRE_SERVICES=1
else
  echo "!!! their tests will SKIP loudly here (under CI they fail instead)"
fi

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== tui-test (the wizard in tmux, every gate of the demo)"
bash scripts/tui-test.sh

echo "== bench smoke (3,000 rows; make bench runs 1,000,000)"
(cd bench && go run . -rows 3000 -duckdb=false)

echo "== short fuzz"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh
