#!/usr/bin/env bash
# `make test-clean`: stops the test-only servers that the test command
# leaves running for its next run (see test-servers.sh: the Redis Cluster on
# 7000-7005, the MariaDB primary and replicas on 3310-3312, the sharded
# MariaDB's head and data nodes on 3320-3324) and removes
# their data directories. Redis on 6379 and MariaDB on 3306, which may be
# the machine's own, are left alone, and so is whatever else answers on
# those ports: a server counts as the test command's only when its data
# directory is the one the start scripts gave it (cluster_dir/<port>,
# replica_dir/<port>, shard_dir/<port>), which is how they record what they
# started. Safe to
# run again: what is not running is skipped.
set -euo pipefail
# shellcheck source=test-servers.sh
. "$(dirname "$0")/test-servers.sh"

say() { printf '== %s\n' "$*"; }

# answers: something listens on the port.
answers() { (exec 3<>"/dev/tcp/$test_host/$1") 2>/dev/null; }

# realdir prints a directory's absolute path without a trailing slash.
realdir() { realpath -m "$1"; }

# Each server is asked for its process id, then to shut down; the script
# waits for the processes to end, not only for their ports to close, since
# a server still writes its files between the two.
pids=() foreign=()
for p in "${cluster_ports[@]}"; do
  answers "$p" || continue
  dir=$(redis-cli -h "$test_host" -p "$p" config get dir 2>/dev/null | sed -n 2p | tr -d '\r')
  if [ -z "$dir" ] || [ "$(realdir "$dir")" != "$(realdir "$cluster_dir/$p")" ]; then
    foreign+=("$p (its data in ${dir:-an unknown directory})")
    continue
  fi
  say "stopping the Redis Cluster node on $test_host:$p"
  pids+=("$(redis-cli -h "$test_host" -p "$p" info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')")
  redis-cli -h "$test_host" -p "$p" shutdown nosave >/dev/null 2>&1 || true
done
for p in "$replica_primary" "${replica_ports[@]}" "$shard_head" "${shard_ports[@]}"; do
  answers "$p" || continue
  dir=$replica_dir
  case " $shard_head ${shard_ports[*]} " in *" $p "*) dir=$shard_dir ;; esac
  datadir=$(mariadb -uroot -h"$test_host" -P"$p" --batch --skip-column-names -e 'SELECT @@datadir' 2>/dev/null || true)
  if [ -z "$datadir" ] || [ "$(realdir "$datadir")" != "$(realdir "$dir/$p/data")" ]; then
    foreign+=("$p (its data in ${datadir:-an unknown directory})")
    continue
  fi
  say "stopping the MariaDB server on $test_host:$p"
  pid_file=$(mariadb -uroot -h"$test_host" -P"$p" --batch --skip-column-names -e 'SELECT @@pid_file')
  pids+=("$(cat "$pid_file")")
  mariadb-admin -uroot -h"$test_host" -P"$p" shutdown >/dev/null 2>&1 || true
done
for pid in "${pids[@]}"; do
  for _ in $(seq 1 240); do kill -0 "$pid" 2>/dev/null || continue 2; sleep 0.25; done
  echo "process $pid did not stop within a minute" >&2
  exit 1
done
for dir in "$cluster_dir" "$replica_dir" "$shard_dir"; do
  if [ -e "$dir" ]; then
    say "removing $dir ($(du -sh "$dir" 2>/dev/null | cut -f1))"
    rm -rf "$dir"
  fi
done
for f in "${foreign[@]}"; do
  say "left alone: the server on $test_host:$f was not started by the test command"
done
say "test servers stopped (${#pids[@]}); Redis on 6379 and MariaDB on 3306 are left running"
