#!/usr/bin/env bash
# Make a PostgreSQL reachable on 127.0.0.1:5432 for the integration tests
# (engine/ledger reads LIMA_TEST_POSTGRES_DSN, default
# postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
#
# Idempotent; when the server is up and user postgres logs in (the common
# case) it changes nothing. Otherwise:
#   1. start the installed cluster that owns the port
#      (pg_ctlcluster --skip-systemctl-redirect VERSION CLUSTER start);
#   2. if PostgreSQL is not installed and we are root:
#      apt-get update && apt-get install -y postgresql, then start it;
#   3. wait, bounded, until it accepts connections;
#   4. if user postgres cannot log in over 127.0.0.1 without a password (a
#      fresh Debian cluster asks for scram-sha-256 on host connections) and we
#      are root: put "host all postgres 127.0.0.1/32 trust" (loopback only) at
#      the top of that cluster's pg_hba.conf, keep a backup, and reload.
# It never stops, restarts, reinstalls or reconfigures a server that works.
#
# Environment: LIMA_PG_PORT (5432), LIMA_PG_CLUSTER (the cluster on that
# port, else "main"), LIMA_PG_VERSION (from pg_lsclusters, else the first in
# /etc/postgresql), LIMA_PG_WAIT (seconds, 60).
set -euo pipefail

PORT="${LIMA_PG_PORT:-5432}"
WAIT="${LIMA_PG_WAIT:-60}"
HOST=127.0.0.1
MARK="# lima scripts/ensure-postgres.sh: tests log in as postgres over loopback"

say() { echo "ensure-postgres: $*"; }
die() {
  echo "ensure-postgres: ERROR: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

case "$PORT" in '' | *[!0-9]*) die "LIMA_PG_PORT must be a port number, got '$PORT'" ;; esac
case "$WAIT" in '' | *[!0-9]*) die "LIMA_PG_WAIT must be a number of seconds, got '$WAIT'" ;; esac

# as_postgres runs a command as the postgres OS user (peer login on the socket).
as_postgres() {
  if [ "$(id -un)" = postgres ]; then
    "$@"
  elif have runuser; then
    runuser -u postgres -- "$@"
  else
    su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
  fi
}

ready() { pg_isready -q -h "$HOST" -p "$PORT" -t 3 >/dev/null 2>&1; }

can_login() {
  psql -w -h "$HOST" -p "$PORT" -U postgres -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$PORT") >/dev/null 2>&1; }

apt_install() {
  is_root || die "$* is not installed and this is not root: install it (Debian/Ubuntu: sudo apt-get install -y $*) or start a server on $HOST:$PORT"
  have apt-get || die "$* is not installed and there is no apt-get: install PostgreSQL and start it on $HOST:$PORT"
  say "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$@" >/dev/null
  say "installed $*"
}

# cluster prints "VERSION CLUSTER" of the installed cluster on PORT.
cluster() {
  local ver="${LIMA_PG_VERSION:-}" name="${LIMA_PG_CLUSTER:-}"
  if [ -z "$ver" ] || [ -z "$name" ]; then
    if have pg_lsclusters; then
      local line
      line="$(pg_lsclusters -h 2>/dev/null | awk -v p="$PORT" -v v="$ver" -v n="$name" \
        '$3 == p && (v == "" || $1 == v) && (n == "" || $2 == n) { print $1, $2; exit }')"
      if [ -n "$line" ]; then
        echo "$line"
        return
      fi
    fi
    if [ -z "$ver" ]; then
      local d
      for d in /etc/postgresql/*/; do # the first version, as ls | head -1
        [ -d "$d" ] && ver="$(basename "$d")" && break
      done
    fi
    [ -n "$name" ] || name=main
  fi
  [ -n "$ver" ] && echo "$ver $name"
}

start_cluster() {
  local ver name
  read -r ver name <<<"$(cluster)" || true
  [ -n "${ver:-}" ] || die "no PostgreSQL cluster found in /etc/postgresql"
  [ -d "/etc/postgresql/$ver/$name" ] || die "no cluster $ver/$name in /etc/postgresql (set LIMA_PG_VERSION / LIMA_PG_CLUSTER)"
  have pg_ctlcluster || die "pg_ctlcluster not found (postgresql-common); start cluster $ver/$name by hand"
  say "starting cluster $ver/$name (pg_ctlcluster --skip-systemctl-redirect $ver $name start)"
  if ! pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start; then
    local log="/var/log/postgresql/postgresql-$ver-$name.log"
    [ -r "$log" ] && tail -n 20 "$log" >&2
    # It may have been starting already: the wait below decides.
    say "pg_ctlcluster start failed; waiting anyway"
  fi
}

wait_ready() {
  local i
  for ((i = 0; i < WAIT; i++)); do
    if ready; then
      say "accepting connections on $HOST:$PORT after ${i}s"
      return 0
    fi
    sleep 1
  done
  die "PostgreSQL is not accepting connections on $HOST:$PORT after ${WAIT}s"
}

fix_access() {
  is_root || die "user postgres cannot log in on $HOST:$PORT without a password and this is not root: allow it in pg_hba.conf (host all postgres 127.0.0.1/32 trust) or set LIMA_TEST_POSTGRES_DSN with credentials"
  local ver name hba=""
  read -r ver name <<<"$(cluster)" || true
  # Ask the server which file it reads (peer login on the Unix socket).
  hba="$(as_postgres psql -w -p "$PORT" -d postgres -Atqc 'SHOW hba_file' 2>/dev/null || true)"
  if [ -z "$hba" ] && [ -n "${ver:-}" ]; then
    hba="/etc/postgresql/$ver/$name/pg_hba.conf"
  fi
  if [ -z "$hba" ] || [ ! -f "$hba" ]; then
    die "cannot find pg_hba.conf of the server on port $PORT; allow host all postgres 127.0.0.1/32 trust by hand"
  fi
  if grep -qF "$MARK" "$hba"; then
    say "$hba already has the loopback rule"
  else
    [ -e "$hba.lima-backup" ] || cp -p "$hba" "$hba.lima-backup"
    local tmp
    tmp="$(mktemp "$hba.XXXXXX")"
    {
      echo "$MARK"
      echo "host    all    postgres    127.0.0.1/32    trust"
      cat "$hba"
    } >"$tmp"
    chown --reference="$hba" "$tmp"
    chmod --reference="$hba" "$tmp"
    mv "$tmp" "$hba"
    say "added 'host all postgres 127.0.0.1/32 trust' at the top of $hba (backup: $hba.lima-backup)"
  fi
  if as_postgres psql -w -p "$PORT" -d postgres -Atqc 'SELECT pg_reload_conf()' >/dev/null 2>&1; then
    say "reloaded the configuration"
  elif [ -n "${ver:-}" ] && have pg_ctlcluster; then
    pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" reload
    say "reloaded cluster $ver/$name"
  else
    die "could not reload PostgreSQL; reload it by hand"
  fi
  sleep 1
}

# --- main ---

if ! have pg_isready || ! have psql; then
  if port_open; then
    say "something listens on $HOST:$PORT but the PostgreSQL client is missing"
    apt_install postgresql-client
  else
    apt_install postgresql
  fi
fi

if ready; then
  say "PostgreSQL already accepts connections on $HOST:$PORT"
else
  if ! have pg_ctlcluster || [ -z "$(cluster)" ]; then
    apt_install postgresql
  fi
  start_cluster
  wait_ready
fi

if can_login; then
  say "user postgres logs in on $HOST:$PORT; nothing else to do"
else
  say "user postgres cannot log in on $HOST:$PORT without a password"
  fix_access
  can_login || die "user postgres still cannot log in on $HOST:$PORT; see pg_hba.conf"
  say "user postgres logs in on $HOST:$PORT"
fi
say "ready: postgres://postgres@$HOST:$PORT/postgres?sslmode=disable"
