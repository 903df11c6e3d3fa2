#!/usr/bin/env bash
# Make a MariaDB reachable on 127.0.0.1:3306 for the integration tests of
# engine/source/sqldb (LIMA_TEST_MYSQL_DSN, default
# root@tcp(127.0.0.1:3306)/test).
#
# Idempotent; when the server answers and root logs in over 127.0.0.1 with
# an empty password and database test exists (the common case) it changes
# nothing. Otherwise:
#   1. if mariadbd is not installed and we are root:
#      apt-get update && apt-get install -y mariadb-server;
#   2. start it (start-stop-daemon --start --oknodo --background
#      --exec /usr/sbin/mariadbd -- --user=mysql);
#   3. wait, bounded, until mysqladmin ping answers on 127.0.0.1;
#   4. as root over the Unix socket: create root@127.0.0.1 with an empty
#      password if it cannot log in (loopback only), and database test.
# It never stops, restarts, reinstalls or reconfigures a server that works.
#
# Environment: LIMA_MYSQL_PORT (3306), LIMA_MYSQL_WAIT (seconds, 60).
set -euo pipefail

PORT="${LIMA_MYSQL_PORT:-3306}"
WAIT="${LIMA_MYSQL_WAIT:-60}"
HOST=127.0.0.1
DAEMON=/usr/sbin/mariadbd

say() { echo "ensure-mariadb: $*"; }
die() {
  echo "ensure-mariadb: ERROR: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

case "$PORT" in '' | *[!0-9]*) die "LIMA_MYSQL_PORT must be a port number, got '$PORT'" ;; esac
case "$WAIT" in '' | *[!0-9]*) die "LIMA_MYSQL_WAIT must be a number of seconds, got '$WAIT'" ;; esac

ready() { mysqladmin --connect-timeout=3 -h "$HOST" -P "$PORT" ping >/dev/null 2>&1; }
can_login() { mysql --connect-timeout=3 -h "$HOST" -P "$PORT" -u root --password= -e 'SELECT 1' >/dev/null 2>&1; }
has_test_db() { mysql --connect-timeout=3 -h "$HOST" -P "$PORT" -u root --password= -e 'USE test' >/dev/null 2>&1; }
# as_admin runs SQL as root over the Unix socket (unix_socket authentication).
as_admin() { mysql --connect-timeout=3 -u root -e "$1"; }

apt_install() {
  is_root || die "$* is not installed and this is not root: install it (Debian/Ubuntu: sudo apt-get install -y $*) or start a server on $HOST:$PORT"
  have apt-get || die "$* is not installed and there is no apt-get: install MariaDB and start it on $HOST:$PORT"
  say "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$@" >/dev/null
  say "installed $*"
}

start_server() {
  is_root || die "MariaDB does not answer on $HOST:$PORT and this is not root: start it by hand"
  have start-stop-daemon || die "start-stop-daemon not found; start $DAEMON by hand"
  install -d -o mysql -g mysql -m 0755 /run/mysqld
  if [ ! -d /var/lib/mysql/mysql ]; then
    have mariadb-install-db || die "no data directory in /var/lib/mysql and no mariadb-install-db"
    say "initializing /var/lib/mysql (mariadb-install-db)"
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  say "starting $DAEMON (start-stop-daemon --oknodo)"
  start-stop-daemon --start --oknodo --background --exec "$DAEMON" -- --user=mysql --port="$PORT" --bind-address="$HOST"
}

wait_ready() {
  local i
  for ((i = 0; i < WAIT; i++)); do
    if ready; then
      say "answering on $HOST:$PORT after ${i}s"
      return 0
    fi
    sleep 1
  done
  die "MariaDB does not answer on $HOST:$PORT after ${WAIT}s (see /var/log/mysql or journal)"
}

# --- main ---

if ready; then
  say "MariaDB already answers on $HOST:$PORT"
else
  if [ ! -x "$DAEMON" ] || ! have mysqladmin || ! have mysql; then
    apt_install mariadb-server mariadb-client
  fi
  start_server
  wait_ready
fi

if ! can_login; then
  is_root || die "root cannot log in on $HOST:$PORT with an empty password and this is not root: set LIMA_TEST_MYSQL_DSN with credentials"
  say "root cannot log in on $HOST:$PORT with an empty password; adding root@127.0.0.1 (loopback only)"
  as_admin "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''; GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; FLUSH PRIVILEGES;" ||
    die "could not create root@127.0.0.1 over the Unix socket"
  can_login || die "root still cannot log in on $HOST:$PORT"
fi
if ! has_test_db; then
  say "creating database test"
  mysql -h "$HOST" -P "$PORT" -u root --password= -e 'CREATE DATABASE IF NOT EXISTS test' || die "could not create database test"
fi
say "ready: root@tcp($HOST:$PORT)/test"
