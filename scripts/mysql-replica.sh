#!/usr/bin/env bash
# Starts a MariaDB primary with a binary log on 127.0.0.1:3310 and two
# replicas of it (GTID replication) on 3311 and 3312, for the replica run
# of the tests: separate mariadbd processes with their data under
# /tmp/feed-replica/, root without a password over TCP, test data only
# (no durability). The machine's own MariaDB on 3306 keeps no binary log
# and is left alone. Idempotent: servers already up are kept, a stopped
# replication is started again. Prints on its last line the settings the
# tests take:
#   TEST_MYSQL_DSN=root@tcp(127.0.0.1:3310)/ TEST_MYSQL_REPLICA_DSNS=root@tcp(127.0.0.1:3311)/,root@tcp(127.0.0.1:3312)/
# (internal/testenv gives the last replica to the test that stops
# replication, the others to every other test).
set -euo pipefail

# shellcheck source=test-servers.sh
. "$(dirname "$0")/test-servers.sh"
base=$replica_dir
host=$test_host
primary=$replica_primary
replicas=("${replica_ports[@]}")

# One at a time on the machine for these ports: the test command of another
# checkout may run this script at the same moment. flock -o: the servers
# started here do not inherit the lock.
lockfile=/tmp/feedservice-test-runs/locks/mysql-replica-script-$replica_primary.lock
if [ -z "${FEEDSERVICE_MYSQL_REPLICA_LOCKED:-}" ] && command -v flock >/dev/null; then
  mkdir -p "$(dirname "$lockfile")"
  FEEDSERVICE_MYSQL_REPLICA_LOCKED=1 exec flock -o -w 600 -E 75 "$lockfile" bash "$0" "$@"
fi

say() { printf '== %s\n' "$*" >&2; }

sqlp() { local port=$1; shift; mariadb -uroot -h"$host" -P"$port" --batch --skip-column-names "$@"; }

up() { sqlp "$1" -e 'SELECT 1' >/dev/null 2>&1; }

# status port field: a field of the replica's SHOW SLAVE STATUS.
status() { mariadb -uroot -h"$host" -P"$1" -e 'SHOW SLAVE STATUS\G' | awk -v f="$2:" '$1 == f {print $2}'; }

# mariadbd will not run as root unless told to; it runs as mysql where that
# user exists (as the machine's own server does).
user=mysql
id "$user" >/dev/null 2>&1 || user=$(id -un)

if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
  say "installing mariadb"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)

start() { # port server-id extra-options...
  local port=$1 id=$2; shift 2
  local dir=$base/$port
  up "$port" && return 0
  if [ ! -d "$dir/data/mysql" ]; then
    say "installing a data directory for port $port"
    rm -rf "$dir" && mkdir -p "$dir"
    chown "$user" "$dir"
    mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1
  fi
  say "starting mariadbd on port $port (server-id $id)"
  # Test data only: no fsync per commit. max-connections: the API suite
  # runs many servers side by side, each with its pools to all three.
  setsid "$mariadbd" --no-defaults --user="$user" --datadir="$dir/data" \
    --socket="$dir/mariadbd.sock" --pid-file="$dir/mariadbd.pid" \
    --port="$port" --bind-address="$host" --server-id="$id" \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 \
    --max-connections=1000 --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
    "$@" </dev/null >>"$dir/mariadbd.log" 2>&1 &
  for _ in $(seq 1 120); do up "$port" && return 0; sleep 0.25; done
  echo "mariadbd on port $port did not come up; see $dir/mariadbd.log" >&2
  exit 1
}

start "$primary" 1 --log-bin=mariadb-bin --binlog-format=ROW --log-basename=primary
sqlp "$primary" -e "CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';"

# The last replica is the one tests stop (internal/testenv's
# StoppableReplica), holding its machine-wide lock meanwhile: while a test
# of any checkout holds it, its replication is the test's business. What
# this script does to it, it does holding that lock.
stoppable=${replicas[-1]}
stoppable_lock=/tmp/feedservice-test-runs/locks/stoppable-replica-$host:$stoppable.lock
mkdir -p "$(dirname "$stoppable_lock")"

# replicate port: start the replica's replication if it is not running,
# and wait until it has applied the primary's position target.
replicate() {
  local port=$1
  if [ "$(status "$port" Slave_IO_Running)$(status "$port" Slave_SQL_Running)" != YesYes ]; then
    if [ "$(status "$port" Master_Port)" != "$primary" ]; then
      say "replica $port follows $primary"
      sqlp "$port" -e "CHANGE MASTER TO MASTER_HOST='$host', MASTER_PORT=$primary, MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;"
    fi
    sqlp "$port" -e "START SLAVE;"
  fi
  local got
  got=$(sqlp "$port" -e "SELECT MASTER_GTID_WAIT('$target', 30)")
  if [ "$got" != "0" ]; then
    echo "replica on port $port did not reach the primary's position $target:" >&2
    mariadb -uroot -h"$host" -P"$port" -e 'SHOW SLAVE STATUS\G' >&2
    exit 1
  fi
}

id=2
for port in "${replicas[@]}"; do
  # A replica keeps no binary log of its own; read-only stops a stray
  # write by a non-root user (root, which the tests use, may still write).
  start "$port" "$id" --skip-log-bin --read-only=1 --relay-log=relay-bin
  id=$((id + 1))
done

# Wait until every replica runs and has applied the primary's position.
target=$(sqlp "$primary" -e "SELECT @@gtid_binlog_pos")
for port in "${replicas[@]}"; do
  if [ "$port" != "$stoppable" ] || ! command -v flock >/dev/null; then
    replicate "$port"
    continue
  fi
  (
    exec 8>"$stoppable_lock"
    if ! flock -n 8; then
      say "replica $port is held by a test that stops its replication: left as it is"
      exit 0
    fi
    replicate "$port"
  )
done

dsn() { printf 'root@tcp(%s:%s)/' "$host" "$1"; }
list=$(for p in "${replicas[@]}"; do dsn "$p"; echo; done | paste -sd,)
echo "TEST_MYSQL_DSN=$(dsn "$primary") TEST_MYSQL_REPLICA_DSNS=$list"
