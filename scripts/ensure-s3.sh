#!/usr/bin/env bash
# Make an S3-compatible server (versitygw, posix backend) answer on loopback
# for the S3 tests and `make demo-s3`.
#
# Idempotent: when something already answers S3 on 127.0.0.1:$PORT with the
# test credentials it changes nothing. Otherwise:
#   1. if versitygw is not on PATH or in $(go env GOPATH)/bin:
#      go install github.com/versity/versitygw/cmd/versitygw@v1.8.0;
#   2. start it in the background on 127.0.0.1:$PORT with the posix backend
#      on $STATE/data (metadata in a sidecar folder $STATE/meta, so the file
#      system needs no extended attributes), log in $STATE/versitygw.log;
#   3. wait, bounded, until an unsigned request gets an S3 answer.
# It never stops or restarts a server that works.
#
# The credentials are throwaway loopback-only test values (not secrets);
# they are handed to the tests through environment variables and never
# written to a plan. With --env the script prints, on stdout, the export
# lines the tests read (LIMA_TEST_S3_*); everything else goes to stderr:
#
#   eval "$(bash scripts/ensure-s3.sh --env)"
#
# Environment: LIMA_S3_PORT (7070), LIMA_S3_WAIT (seconds, 60),
# LIMA_S3_STATE (state folder, default ${TMPDIR:-/tmp}/lima-s3-$UID),
# LIMA_TEST_S3_ACCESS_KEY / LIMA_TEST_S3_SECRET_KEY (the test root user).
set -euo pipefail

VERSION=v1.8.0
PORT="${LIMA_S3_PORT:-7070}"
WAIT="${LIMA_S3_WAIT:-60}"
HOST=127.0.0.1
STATE="${LIMA_S3_STATE:-${TMPDIR:-/tmp}/lima-s3-$(id -u)}"
ACCESS="${LIMA_TEST_S3_ACCESS_KEY:-limatest}"
SECRET="${LIMA_TEST_S3_SECRET_KEY:-limatest-loopback-only}"
REGION="${LIMA_TEST_S3_REGION:-us-east-1}"

say() { echo "ensure-s3: $*" >&2; }
die() {
  echo "ensure-s3: ERROR: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

case "$PORT" in '' | *[!0-9]*) die "LIMA_S3_PORT must be a port number, got '$PORT'" ;; esac
case "$WAIT" in '' | *[!0-9]*) die "LIMA_S3_WAIT must be a number of seconds, got '$WAIT'" ;; esac

print_env=0
[ "${1:-}" = "--env" ] && print_env=1

# answers: an S3 server replies to an unsigned ListBuckets with an S3 XML
# error (AccessDenied / SignatureDoesNotMatch …) or a bucket list.
answers() {
  local body
  body="$(curl -s --max-time 3 "http://$HOST:$PORT/" 2>/dev/null || true)"
  case "$body" in *"<Error>"* | *"ListAllMyBucketsResult"*) return 0 ;; esac
  return 1
}

port_busy() {
  (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
}

find_gw() {
  if have versitygw; then
    command -v versitygw
    return 0
  fi
  local bin
  for bin in "$(go env GOPATH 2>/dev/null)/bin/versitygw" "$(dirname "$0")/../.tools/versitygw"; do
    if [ -x "$bin" ]; then
      echo "$bin"
      return 0
    fi
  done
  return 1
}

install_gw() {
  have go || die "versitygw is not installed and there is no go to install it: install Go, or start an S3-compatible server on $HOST:$PORT"
  say "installing versitygw $VERSION (go install; takes a few minutes the first time)"
  GOFLAGS= go install "github.com/versity/versitygw/cmd/versitygw@$VERSION" >&2 || die "go install versitygw failed"
}

start_gw() {
  local gw="$1"
  install -d -m 0700 "$STATE" "$STATE/data" "$STATE/meta"
  say "starting $gw on $HOST:$PORT (posix backend, $STATE/data; log $STATE/versitygw.log)"
  # setsid: the server outlives this script and the test run; it is shared
  # by later runs (idempotent) and stopped by killing the pid in $STATE/pid.
  ROOT_ACCESS_KEY_ID="$ACCESS" ROOT_SECRET_ACCESS_KEY="$SECRET" \
    setsid "$gw" --port "$HOST:$PORT" --region "$REGION" --quiet \
    posix --sidecar "$STATE/meta" "$STATE/data" >"$STATE/versitygw.log" 2>&1 </dev/null &
  echo $! >"$STATE/pid"
}

wait_ready() {
  local i
  for ((i = 0; i < WAIT; i++)); do
    if answers; then
      say "S3 answers on $HOST:$PORT after ${i}s"
      return 0
    fi
    sleep 1
  done
  tail -20 "$STATE/versitygw.log" >&2 || true
  die "no S3 answer on $HOST:$PORT after ${WAIT}s (log: $STATE/versitygw.log)"
}

have curl || die "curl is needed to probe the S3 server"

if answers; then
  say "an S3 server already answers on $HOST:$PORT"
else
  if port_busy; then
    die "port $HOST:$PORT is taken by something that does not speak S3: free it or set LIMA_S3_PORT"
  fi
  gw="$(find_gw || true)"
  if [ -z "$gw" ]; then
    install_gw
    gw="$(find_gw)" || die "versitygw was installed but is not in $(go env GOPATH)/bin"
  fi
  start_gw "$gw"
  wait_ready
fi

# The tests' helper (internal/s3test) makes a signed request with these
# credentials first and says so plainly when a server started by someone
# else does not accept them.
say "ready: http://$HOST:$PORT (region $REGION)"
if [ "$print_env" = 1 ]; then
  echo "export LIMA_TEST_S3_ENDPOINT=http://$HOST:$PORT"
  echo "export LIMA_TEST_S3_REGION=$REGION"
  echo "export LIMA_TEST_S3_ACCESS_KEY=$ACCESS"
  echo "export LIMA_TEST_S3_SECRET_KEY=$SECRET"
fi
