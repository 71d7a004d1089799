#!/usr/bin/env bash
# Starts a sharded MariaDB for the sharded tests: four data nodes on
# 127.0.0.1:3321-3324 and a head on 3320 with the Spider engine loaded
# (INSTALL SONAME 'ha_spider'), separate mariadbd processes with their data
# under /tmp/feed-shards/<port>, root without a password over TCP, test
# data only (no durability). Installs mariadb-server and
# mariadb-plugin-spider with apt-get when absent. Idempotent: servers
# already up are kept. Prints on its last line the settings the tests take:
#   TEST_MYSQL_SHARD_HEAD=root@tcp(127.0.0.1:3320)/ TEST_MYSQL_SHARD_DSNS=root@tcp(127.0.0.1:3321)/,...
set -euo pipefail

# shellcheck source=test-servers.sh
. "$(dirname "$0")/test-servers.sh"
one_at_a_time "mysql-shards-script-$shard_head" "$@"
base=$shard_dir
host=$test_host
head=$shard_head
nodes=("${shard_ports[@]}")

need mariadbd mariadb-server mariadb-client
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
plugin_dir=$("$mariadbd" --no-defaults --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" {print $2}')
if [ ! -e "${plugin_dir:-/usr/lib/mysql/plugin}/ha_spider.so" ]; then
  say "installing mariadb-plugin-spider"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq mariadb-plugin-spider >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq mariadb-plugin-spider >/dev/null; }
fi

# start port: a server of the sharded MariaDB. Test data only: no binary
# log. The general log is kept in a table, off until a test turns it on:
# the one-shard test reads what each data node saw there.
start() {
  start_mariadb "$1" "$base" --skip-log-bin --innodb-buffer-pool-size=32M --log-output=TABLE --general-log=0
}

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
