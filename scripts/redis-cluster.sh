#!/usr/bin/env bash
# Starts a six-node Redis Cluster on loopback (127.0.0.1:7000-7005: three
# masters, each with one replica), without persistence, for the cluster run
# of the tests. Idempotent: a cluster that is already up and healthy is left
# alone. Installs redis with apt-get when absent. Prints the addresses, a
# comma list as REDIS_ADDR and TEST_REDIS_ADDR take it, on its last line.
set -euo pipefail

# shellcheck source=test-servers.sh
. "$(dirname "$0")/test-servers.sh"
ports=("${cluster_ports[@]}")
host=$test_host

one_at_a_time "redis-cluster-script-${cluster_ports[0]}" "$@"

cli() { redis-cli -h "$host" "$@"; }

# healthy: every node reports cluster_state:ok and sees all six nodes, none
# failing, three of them replicas (a node that restarted alone would answer
# ok from a cluster of its own; replicas attach a moment after the slots).
healthy() {
  local nodes
  for p in "${ports[@]}"; do
    cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    nodes=$(cli -p "$p" cluster nodes) || return 1
    [ "$(grep -c . <<<"$nodes")" -eq "${#ports[@]}" ] || return 1
    ! grep -q fail <<<"$nodes" || return 1
    [ "$(grep -c slave <<<"$nodes")" -eq $((${#ports[@]} / 2)) ] || return 1
  done
}

addrs() { local IFS=,; local a=("${ports[@]/#/$host:}"); echo "${a[*]}"; }

if healthy; then addrs; exit 0; fi

# formed: every node answers and knows all six. Such a cluster is settling
# (a replica attaching, a node a busy machine let miss a heartbeat, so that
# another flagged it for a moment) and may be in use by another checkout's
# tests: it gets a minute to become healthy before it is started over.
formed() {
  for p in "${ports[@]}"; do
    cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_known_nodes:6' || return 1
  done
}
if formed; then
  say "the cluster on ports ${ports[*]} is formed but not healthy yet; waiting for it"
  for _ in $(seq 1 120); do
    if healthy; then addrs; exit 0; fi
    sleep 0.5
  done
  say "it did not become healthy within a minute: starting it over"
fi

for p in "${ports[@]}"; do
  if cli -p "$p" ping >/dev/null 2>&1; then
    # Up but not part of a healthy cluster (a half-formed earlier try): its
    # data is test data only, so start it over empty.
    cli -p "$p" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do cli -p "$p" ping >/dev/null 2>&1 || break; sleep 0.1; done
  fi
  say "starting redis cluster node $p"
  start_redis "$p" "$cluster_dir" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000
done

say "creating the cluster"
# shellcheck disable=SC2046
redis-cli --cluster create $(for p in "${ports[@]}"; do printf '%s:%s ' "$host" "$p"; done) \
  --cluster-replicas 1 --cluster-yes >/dev/null

for _ in $(seq 1 120); do
  if healthy; then addrs; exit 0; fi
  sleep 0.5
done
echo "redis cluster on ports ${ports[*]} did not reach cluster_state:ok" >&2
exit 1
