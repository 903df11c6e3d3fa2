# Sourced by scripts/test.sh and scripts/mutate.sh: make the services the
# integration tests need available on loopback and point the tests at them.
#
# PostgreSQL (the shared state store, the database source) and MariaDB (the
# database source) are tested against real servers; the scripts start them,
# or install them from Debian packages, when none answers on loopback.
# S3 (source, warehouse, raw/): versitygw on loopback, installed with go
# install when missing; the LIMA_TEST_S3_* variables point the tests at it.
# DynamoDB (source): dynalite on loopback, installed with npm into
# ~/.cache/lima/dynalite when missing; LIMA_TEST_DYNAMODB_* point at it.
# When all four answer, LIMA_REQUIRE_SERVICES=1 makes a skipped integration
# test a failure; otherwise their tests skip loudly.
lima_services() {
  local ok=1 s3env ddbenv
  bash scripts/ensure-postgres.sh || { ok=0; echo "!!! PostgreSQL could not be made available"; }
  bash scripts/ensure-mariadb.sh || { ok=0; echo "!!! MariaDB could not be made available"; }
  if s3env="$(bash scripts/ensure-s3.sh --env)"; then
    eval "$s3env"
  else
    ok=0; echo "!!! the S3 server (versitygw) could not be made available"
  fi
  if ddbenv="$(bash scripts/ensure-dynamodb.sh --env)"; then
    eval "$ddbenv"
  else
    ok=0; echo "!!! the DynamoDB emulator (dynalite) could not be made available"
  fi
  if [ "$ok" = 1 ]; then
    export LIMA_REQUIRE_SERVICES=1
  else
    echo "!!! their tests will SKIP loudly here (under CI they fail instead)"
  fi
}
