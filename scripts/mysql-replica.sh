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
one_at_a_time "mysql-replica-script-$replica_primary" "$@"
base=$replica_dir
host=$test_host
primary=$replica_primary
replicas=("${replica_ports[@]}")

# status port field: a field of the replica's SHOW SLAVE STATUS.
status() { mariadb -uroot -h"$host" -P"$1" -e 'SHOW SLAVE STATUS\G' | awk -v f="$2:" '$1 == f {print $2}'; }

# start port server-id extra-options...: a server of the set (test data
# only: no fsync per binary log write either).
start() {
  local port=$1 id=$2; shift 2
  start_mariadb "$port" "$base" --server-id="$id" --innodb-buffer-pool-size=64M --sync-binlog=0 "$@"
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
