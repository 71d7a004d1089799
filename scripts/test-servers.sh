# The test-only servers that the test command starts and leaves running for
# the next run, sourced by redis-cluster.sh, mysql-replica.sh and
# mysql-shards.sh (which start them, with the functions below) and
# test-clean.sh (which stops them and removes their data):
#   - a six-node Redis Cluster on 127.0.0.1:7000-7005, its nodes' files
#     under /tmp/feedservice-redis-cluster/<port>;
#   - a MariaDB primary on 127.0.0.1:3310 and two replicas on 3311-3312,
#     their data (some 540 MB) under /tmp/feed-replica/<port>.
# FEED_TEST_* variables move them (test-clean's own test stops private
# servers with them).
test_host=127.0.0.1
read -ra cluster_ports <<<"${FEED_TEST_CLUSTER_PORTS:-7000 7001 7002 7003 7004 7005}"
cluster_dir=${FEED_TEST_CLUSTER_DIR:-/tmp/feedservice-redis-cluster}
replica_primary=${FEED_TEST_REPLICA_PRIMARY:-3310}
read -ra replica_ports <<<"${FEED_TEST_REPLICA_PORTS:-3311 3312}"
replica_dir=${FEED_TEST_REPLICA_DIR:-/tmp/feed-replica}
#   - a sharded MariaDB: a head with the Spider engine on 127.0.0.1:3320
#     and four data nodes on 3321-3324, their data under /tmp/feed-shards/<port>
#     (mysql-shards.sh).
shard_head=${FEED_TEST_SHARD_HEAD:-3320}
read -ra shard_ports <<<"${FEED_TEST_SHARD_PORTS:-3321 3322 3323 3324}"
shard_dir=${FEED_TEST_SHARD_DIR:-/tmp/feed-shards}

# What the start scripts share: a machine-wide lock per script, and one way
# to start a private mariadbd or redis-server on test_host.

# say prints a line of progress on stderr: the start scripts print the
# settings the tests take on their stdout.
say() { printf '== %s\n' "$*" >&2; }

# one_at_a_time NAME ARGS...: runs the calling script again, with ARGS,
# under the machine-wide lock NAME (the test command of another checkout,
# or a test, may run the same script at the same moment), unless it holds
# that lock already. flock -o: the servers started under it do not
# inherit the lock.
one_at_a_time() {
  local name=$1; shift
  command -v flock >/dev/null || return 0
  case " ${FEEDSERVICE_LOCKS_HELD:-} " in *" $name "*) return 0 ;; esac
  local lockfile=/tmp/feedservice-test-runs/locks/$name.lock
  mkdir -p "$(dirname "$lockfile")"
  FEEDSERVICE_LOCKS_HELD="${FEEDSERVICE_LOCKS_HELD:-} $name" exec flock -o -w 600 -E 75 "$lockfile" bash "$0" "$@"
}

# need COMMAND PACKAGE...: installs the packages with apt-get when COMMAND
# is not found (nor in /usr/sbin).
need() {
  local cmd=$1; shift
  command -v "$cmd" >/dev/null || [ -x "/usr/sbin/$cmd" ] && return 0
  say "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "$@" >/dev/null
}

# sqlp PORT ARGS...: the mariadb client as root on test_host:PORT, batch
# output without column names.
sqlp() { local port=$1; shift; mariadb -uroot -h"$test_host" -P"$port" --batch --skip-column-names "$@"; }

# mariadb_up PORT: a MariaDB answers on test_host:PORT.
mariadb_up() { sqlp "$1" -e 'SELECT 1' >/dev/null 2>&1; }

# start_mariadb PORT DIR OPTION...: a private mariadbd on test_host:PORT
# with its data under DIR/PORT (a data directory is installed on its first
# start), root without a password over TCP, test data only (no fsync per
# commit); OPTION... are the caller's own. Kept when PORT already answers;
# else waits until it does, for a minute at most.
start_mariadb() {
  local port=$1 dir=$2/$1; shift 2
  mariadb_up "$port" && return 0
  need mariadbd mariadb-server mariadb-client
  # mariadbd will not run as root unless told to; it runs as mysql where
  # that user exists (as the machine's own server does).
  local user=mysql
  id "$user" >/dev/null 2>&1 || user=$(id -un)
  if [ ! -d "$dir/data/mysql" ]; then
    say "installing a data directory for port $port"
    rm -rf "$dir" && mkdir -p "$dir/tmp"
    chown -R "$user" "$dir"
    # A temporary directory of its own: installs of several servers at once
    # (the replicas' and the shards') collide on their temporary tables'
    # names in a shared /tmp ("Unknown table 'mysql.tmp_user_sys'").
    mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" --tmpdir="$dir/tmp" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
      { echo "mariadb-install-db for port $port failed; its log ($dir/install.log) ends:" >&2; tail -n 20 "$dir/install.log" >&2; exit 1; }
  fi
  mkdir -p "$dir/tmp" && chown "$user" "$dir/tmp"
  say "starting mariadbd on port $port"
  # max-connections: the API suite runs many servers side by side, each
  # with its pools to every server.
  setsid "$(command -v mariadbd || echo /usr/sbin/mariadbd)" --no-defaults --user="$user" \
    --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/mariadbd.sock" --pid-file="$dir/mariadbd.pid" \
    --port="$port" --bind-address="$test_host" --innodb-flush-log-at-trx-commit=0 \
    --max-connections=1000 --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
    "$@" </dev/null >>"$dir/mariadbd.log" 2>&1 &
  for _ in $(seq 1 240); do mariadb_up "$port" && return 0; sleep 0.25; done
  echo "mariadbd on port $port did not come up; see $dir/mariadbd.log" >&2
  exit 1
}

# start_redis PORT DIR OPTION...: a private redis-server on test_host:PORT,
# without persistence, its files and log under DIR/PORT (emptied first);
# OPTION... are the caller's own. Waits until it answers, 10 s at most.
start_redis() {
  local port=$1 dir=$2/$1; shift 2
  need redis-server redis-server redis-tools
  rm -rf "$dir" && mkdir -p "$dir"
  # zset-max-listpack-entries as on the shared server (see services.sh).
  redis-server --daemonize yes --bind "$test_host" --port "$port" --dir "$dir" \
    --save "" --appendonly no --zset-max-listpack-entries 1024 --logfile "$dir/redis.log" "$@"
  for _ in $(seq 1 100); do redis-cli -h "$test_host" -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "redis-server on port $port did not come up; see $dir/redis.log" >&2
  exit 1
}
