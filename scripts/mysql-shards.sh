#!/usr/bin/env bash
# Starts a sharded MariaDB for the sharded tests: four data nodes on
# 127.0.0.1:3321-3324 and a head on 3320 with the Spider engine loaded
# (INSTALL SONAME 'ha_spider'), separate mariadbd processes with their data
# under /tmp/feed-shards/<port>, root without a password over TCP, test
# data only (no durability). Installs mariadb-server and
# mariadb-plugin-spider with apt-get when absent. Idempotent: servers
# already up are kept. Prints on its last line the settings the tests take:
#   TEST_MYSQL_SHARD_HEAD=root@tcp(127.0.0.1:3320)/ TEST_MYSQL_SHARD_DSNS=root@tcp(127.0.0.1:3321)/,...
# With a port as argument (a data node's), starts only that server: the
# fault test stops a data node and starts it again so.
set -euo pipefail

# shellcheck source=test-servers.sh
. "$(dirname "$0")/test-servers.sh"
base=$shard_dir
host=$test_host
head=$shard_head
nodes=("${shard_ports[@]}")

# One at a time on the machine for these ports: the test command of another
# checkout, or a test starting them, may run this script at the same
# moment. flock -o: the servers started here do not inherit the lock.
lockfile=/tmp/feedservice-test-runs/locks/mysql-shards-script-$shard_head.lock
if [ -z "${FEEDSERVICE_MYSQL_SHARDS_LOCKED:-}" ] && command -v flock >/dev/null; then
  mkdir -p "$(dirname "$lockfile")"
  FEEDSERVICE_MYSQL_SHARDS_LOCKED=1 exec flock -o -w 600 -E 75 "$lockfile" bash "$0" "$@"
fi

say() { printf '== %s\n' "$*" >&2; }

sqlp() { local port=$1; shift; mariadb -uroot -h"$host" -P"$port" --batch --skip-column-names "$@"; }

up() { sqlp "$1" -e 'SELECT 1' >/dev/null 2>&1; }

user=mysql
id "$user" >/dev/null 2>&1 || user=$(id -un)

export DEBIAN_FRONTEND=noninteractive
if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
  say "installing mariadb"
  apt-get update -qq && apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
plugin_dir=$("$mariadbd" --no-defaults --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" {print $2}')
if [ ! -e "${plugin_dir:-/usr/lib/mysql/plugin}/ha_spider.so" ]; then
  say "installing mariadb-plugin-spider"
  apt-get install -y -qq mariadb-plugin-spider >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq mariadb-plugin-spider >/dev/null; }
fi

start() { # port extra-options...
  local port=$1; shift
  local dir=$base/$port
  up "$port" && return 0
  if [ ! -d "$dir/data/mysql" ]; then
    say "installing a data directory for port $port"
    rm -rf "$dir" && mkdir -p "$dir"
    chown "$user" "$dir"
    mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1
  fi
  say "starting mariadbd on port $port"
  # Test data only: no fsync per commit, no binary log. The general log
  # is kept in a table, off until a test turns it on: the one-shard test
  # reads what each data node saw there.
  setsid "$mariadbd" --no-defaults --user="$user" --datadir="$dir/data" \
    --socket="$dir/mariadbd.sock" --pid-file="$dir/mariadbd.pid" \
    --port="$port" --bind-address="$host" --skip-log-bin \
    --innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=0 \
    --max-connections=1000 --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
    --log-output=TABLE --general-log=0 \
    "$@" </dev/null >>"$dir/mariadbd.log" 2>&1 &
  for _ in $(seq 1 240); do up "$port" && return 0; sleep 0.25; done
  echo "mariadbd on port $port did not come up; see $dir/mariadbd.log" >&2
  exit 1
}

if [ $# -gt 0 ]; then
  start "$1"
  exit 0
fi

for port in "${nodes[@]}"; do start "$port"; done
# The head: Spider loaded once (INSTALL SONAME records it for its next starts).
start "$head"
if [ "$(sqlp "$head" -e "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'SPIDER' AND PLUGIN_STATUS = 'ACTIVE'")" != 1 ]; then
  say "INSTALL SONAME 'ha_spider' on the head"
  sqlp "$head" -e "INSTALL SONAME 'ha_spider'"
fi

dsn() { printf 'root@tcp(%s:%s)/' "$host" "$1"; }
list=$(for p in "${nodes[@]}"; do dsn "$p"; echo; done | paste -sd,)
echo "TEST_MYSQL_SHARD_HEAD=$(dsn "$head") TEST_MYSQL_SHARD_DSNS=$list"
