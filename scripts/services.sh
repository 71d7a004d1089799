#!/usr/bin/env bash
# Starts the servers the tests and the benchmark need when they are not
# running, installing them with apt-get when absent: Redis (127.0.0.1:6379,
# no persistence), MariaDB (127.0.0.1:3306, root without a password over
# TCP); with --browser, Debian's Chromium for the browser tests; with
# --cluster, a six-node Redis Cluster on 127.0.0.1:7000-7005 (see
# redis-cluster.sh); with --replicas, a MariaDB primary with binary logging
# on 127.0.0.1:3310 and two replicas on 3311-3312 (see mysql-replica.sh).
set -euo pipefail

# One at a time on the machine: the test command of another checkout may
# run this script at the same moment. flock -o: the servers started here do
# not inherit the lock.
lockfile=/tmp/feedservice-test-runs/locks/services-script.lock
if [ -z "${FEEDSERVICE_SERVICES_LOCKED:-}" ] && command -v flock >/dev/null; then
  mkdir -p "$(dirname "$lockfile")"
  FEEDSERVICE_SERVICES_LOCKED=1 exec flock -o -w 600 -E 75 "$lockfile" bash "$0" "$@"
fi

say() { printf '== %s\n' "$*"; }

apt_install() {
  say "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # name, command...
  local name=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "$name did not come up" >&2; return 1
}

ensure_redis() {
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && return 0
  command -v redis-server >/dev/null || apt_install redis-server redis-tools
  say "starting redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_for redis redis-cli -h 127.0.0.1 -p 6379 ping
}

mariadb_tcp() { mysql -uroot -h127.0.0.1 -P3306 -e 'SELECT 1'; }

ensure_mariadb() {
  mariadb_tcp >/dev/null 2>&1 && return 0
  [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server mariadb-client
  say "starting mariadb"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_for mariadb mysqladmin ping
  if ! mariadb_tcp >/dev/null 2>&1; then
    # A fresh Debian install lets root in over the socket only; the tests
    # log in over TCP as root with an empty password, as on the dev machines.
    mysql -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD(''); FLUSH PRIVILEGES;"
  fi
  wait_for "mariadb over tcp" mariadb_tcp
}

# The test commands of several checkouts share this server, each test with
# its store's pools: Debian's default of 151 connections is soon exhausted
# ("Error 1040: Too many connections"). Raised at run time, as the replica
# servers are started with (mysql-replica.sh); never lowered.
test_max_connections=1000
raise_mariadb_connections() {
  local now
  now=$(mysql -uroot -h127.0.0.1 -P3306 -N -e 'SELECT @@max_connections' 2>/dev/null) || return 0
  if [ -n "$now" ] && [ "$now" -lt "$test_max_connections" ]; then
    say "mariadb max_connections $now -> $test_max_connections"
    mysql -uroot -h127.0.0.1 -P3306 -e "SET GLOBAL max_connections = $test_max_connections" || true
  fi
}

# The browser tests drive Debian's Chromium (playwright-core, no download).
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  apt_install chromium
}

ensure_redis
ensure_mariadb
raise_mariadb_connections
for arg in "$@"; do
  case $arg in
    --browser) ensure_chromium ;;
    --cluster) bash "$(dirname "$0")/redis-cluster.sh" >/dev/null ;;
    --replicas) bash "$(dirname "$0")/mysql-replica.sh" >/dev/null ;;
    *) echo "services.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

# Inboxes hold up to INBOX_CAP (800) entries: above zset-max-listpack-entries
# (128 by default) Redis stores a sorted set as a skiplist at about 5 times
# the memory per entry. Keep inboxes compact, as production should.
redis-cli -h 127.0.0.1 -p 6379 config set zset-max-listpack-entries 1024 >/dev/null
