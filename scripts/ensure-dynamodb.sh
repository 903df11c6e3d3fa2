#!/usr/bin/env bash
# Make a DynamoDB emulator (dynalite, from npm) answer on loopback for the
# DynamoDB source tests.
#
# Idempotent: when something already answers the DynamoDB JSON protocol on
# 127.0.0.1:$PORT it changes nothing. Otherwise:
#   1. if dynalite is not installed in $CACHE: npm install dynalite@4.0.0
#      there (a cache folder outside the repository);
#   2. start it in the background on 127.0.0.1:$PORT (in memory), log in
#      $STATE/dynalite.log, pid in $STATE/pid;
#   3. wait, bounded, until it answers a ListTables request.
# It never stops or restarts a server that works.
#
# With --env the script prints, on stdout, the export lines the tests read
# (LIMA_TEST_DYNAMODB_*); everything else goes to stderr:
#
#   eval "$(bash scripts/ensure-dynamodb.sh --env)"
#
# Environment: LIMA_DYNAMODB_PORT (8000), LIMA_DYNAMODB_WAIT (seconds, 60),
# LIMA_DYNAMODB_CACHE (npm prefix, default ~/.cache/lima/dynalite),
# LIMA_DYNAMODB_STATE (default ${TMPDIR:-/tmp}/lima-dynamodb-$UID).
set -euo pipefail

VERSION=4.0.0
PORT="${LIMA_DYNAMODB_PORT:-8000}"
WAIT="${LIMA_DYNAMODB_WAIT:-60}"
HOST=127.0.0.1
CACHE="${LIMA_DYNAMODB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lima/dynalite}"
STATE="${LIMA_DYNAMODB_STATE:-${TMPDIR:-/tmp}/lima-dynamodb-$(id -u)}"
REGION="${LIMA_TEST_DYNAMODB_REGION:-us-east-1}"

say() { echo "ensure-dynamodb: $*" >&2; }
die() {
  echo "ensure-dynamodb: ERROR: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

case "$PORT" in '' | *[!0-9]*) die "LIMA_DYNAMODB_PORT must be a port number, got '$PORT'" ;; esac
case "$WAIT" in '' | *[!0-9]*) die "LIMA_DYNAMODB_WAIT must be a number of seconds, got '$WAIT'" ;; esac

print_env=0
[ "${1:-}" = "--env" ] && print_env=1

# answers: a DynamoDB endpoint replies to ListTables with a TableNames list
# (dynalite does not check the signature).
answers() {
  local body
  body="$(curl -s --max-time 3 -X POST "http://$HOST:$PORT/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H "X-Amz-Date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H "Authorization: AWS4-HMAC-SHA256 Credential=lima/20200101/$REGION/dynamodb/aws4_request, SignedHeaders=host, Signature=0" \
    -d '{}' 2>/dev/null || true)"
  case "$body" in *'"TableNames"'*) return 0 ;; esac
  return 1
}

port_busy() {
  (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
}

bin() { echo "$CACHE/node_modules/.bin/dynalite"; }

# ensure_node installs Node.js and npm from Debian's packages when they are
# missing (as the MariaDB and PostgreSQL scripts install their servers).
ensure_node() {
  have node && have npm && return 0
  [ "$(id -u)" -eq 0 ] && have apt-get || die "Node.js/npm are not installed and this is not a root Debian machine: install Node.js (Debian: apt-get install -y nodejs npm), or start a DynamoDB emulator on $HOST:$PORT"
  say "installing nodejs and npm (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm >/dev/null || die "apt-get install nodejs npm failed"
}

install_dynalite() {
  ensure_node
  say "installing dynalite $VERSION into $CACHE (npm; a minute the first time)"
  install -d -m 0700 "$CACHE"
  npm install --silent --no-audit --no-fund --prefix "$CACHE" "dynalite@$VERSION" >&2 || die "npm install dynalite failed"
}

start_dynalite() {
  install -d -m 0700 "$STATE"
  say "starting dynalite on $HOST:$PORT (in memory; log $STATE/dynalite.log)"
  # setsid: the server outlives this script and the test run; it is shared
  # by later runs (idempotent) and stopped by killing the pid in $STATE/pid.
  setsid node "$(bin)" --host "$HOST" --port "$PORT" >"$STATE/dynalite.log" 2>&1 </dev/null &
  echo $! >"$STATE/pid"
}

wait_ready() {
  local i
  for ((i = 0; i < WAIT; i++)); do
    if answers; then
      say "DynamoDB answers on $HOST:$PORT after ${i}s"
      return 0
    fi
    sleep 1
  done
  tail -20 "$STATE/dynalite.log" >&2 || true
  die "no DynamoDB answer on $HOST:$PORT after ${WAIT}s (log: $STATE/dynalite.log)"
}

have curl || die "curl is needed to probe the DynamoDB emulator"

if answers; then
  say "a DynamoDB endpoint already answers on $HOST:$PORT"
else
  if port_busy; then
    die "port $HOST:$PORT is taken by something that does not speak DynamoDB: free it or set LIMA_DYNAMODB_PORT"
  fi
  ensure_node
  [ -x "$(bin)" ] || install_dynalite
  [ -x "$(bin)" ] || die "dynalite was installed but $(bin) is missing"
  start_dynalite
  wait_ready
fi

say "ready: http://$HOST:$PORT (region $REGION)"
if [ "$print_env" = 1 ]; then
  echo "export LIMA_TEST_DYNAMODB_ENDPOINT=http://$HOST:$PORT"
  echo "export LIMA_TEST_DYNAMODB_REGION=$REGION"
fi
