#!/usr/bin/env bash
# The part of the test command (scripts/test.sh) that runs beside the main
# `go test -race` pass: the API suite, the reference model and the
# subscription tests on a six-node Redis Cluster (TEST_CLUSTER, the
# addresses scripts/redis-cluster.sh printed); then the red-dot delivery,
# soak and benchmark smokes. The fuzz targets' seed corpora and committed
# failing inputs run in the main pass; `make fuzz` fuzzes. The
# cluster pass runs on a MariaDB primary with two read replicas
# (scripts/mysql-replica.sh); the sharded pass, which runs beside it, on a
# Spider head over four data nodes (scripts/mysql-shards.sh). It stops at
# the first failure (of the two passes side by side, once both ended).
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
say() { printf '== [side %dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# testctl (internal/testenv/cmd/testctl): scripts/test.sh passes the one it
# built; run alone, this script builds its own.
if [ -z "${TESTCTL:-}" ]; then
  TESTCTL=$(mktemp -d)/testctl
  trap 'rm -rf "$(dirname "$TESTCTL")"' EXIT
  go build -o "$TESTCTL" ./internal/testenv/cmd/testctl
fi

# -parallel 4 in both passes below, as in the main pass: their tests
# marked t.Parallel (the API suite's servers, the model runs) wait on
# servers far more than they compute, so four share two cores.

say "sharded MySQL pass, beside the cluster pass: the TestShardedMySQL tests on a Spider head over four data nodes (scripts/mysql-shards.sh); its output follows the cluster pass's"
# Every test named TestShardedMySQL... (docs/testing.md); without the race
# detector, as the cluster pass. Its servers (the sharded MariaDB, and the
# Redis on 6379) are not the cluster pass's, so the two run at once.
# Its log is kept beside testctl, in the scratch directory that goes with it.
shard_log=$(dirname "$TESTCTL")/sharded-pass.log
(
  shard_env=$(bash scripts/mysql-shards.sh | tail -1)
  shard_timeout=$("$TESTCTL" scale -min 2 -max 4 5m)
  env $shard_env go test -json -count=1 -parallel 4 -timeout "$shard_timeout" -run '^TestShardedMySQL' ./store ./feed ./api |
    "$TESTCTL" gotest -top 5
) >"$shard_log" 2>&1 &
shard_pid=$!

say "MySQL primary with two read replicas (scripts/mysql-replica.sh)"
replica_env=$(bash scripts/mysql-replica.sh | tail -1)

say "Redis Cluster and replica pass: the API suite, the reference model and the subscription tests on six Redis nodes and a MariaDB primary with two replicas"
# TEST_REDIS_ADDR with several addresses gives the tests cluster clients
# (internal/testenv); the API suite's two-instance tests share the cluster.
# TEST_MYSQL_DSN and TEST_MYSQL_REPLICA_DSNS (replica_env) put every
# server's databases on the replicated primary with MYSQL_REPLICA_DSNS set,
# so the suite also proves reads right with replicas on; the tests that
# stop replication run here. Without the race detector, which the main
# pass runs the same code under: this pass is about the deployment.
api_tests=$(grep -ho '^func Test[A-Za-z0-9_]*' api/api_*_test.go | sed 's/^func //' | paste -sd'|')
cluster_tests="$api_tests|TestEngineMatchesModel|TestReplicaRebuildFindsWhatTheFanoutMissed|TestHubChannelsAreReferenceCounted|TestSlowClientBlocksNobody"
cluster_tests+="|TestSlotAgreesWithCluster|TestClusterRefusesCrossSlot|TestCheckSlotsCatchesCrossSlotCommands"
cluster_tests+="|TestUnreadCountsFollowTheAnnouncements|TestUnreadCountsOfAnInboxReader|TestFeedItemsAddedSendsWhatEnteredTheFeed"
# The timeout bounds a hung test, as the main pass's does (scripts/test.sh).
cluster_timeout=$("$TESTCTL" scale -min 2 -max 4 7m)
cluster_status=0
env $replica_env TEST_REDIS_ADDR=$TEST_CLUSTER go test -json -count=1 -parallel 4 -timeout "$cluster_timeout" -run "^($cluster_tests)\$" ./api ./feed ./feed/live ./internal/testenv |
  "$TESTCTL" gotest -top 8 || cluster_status=$?

say "the sharded MySQL pass's output:"
shard_status=0
wait "$shard_pid" || shard_status=$?
cat "$shard_log"
[ "$cluster_status" -eq 0 ] || exit "$cluster_status"
[ "$shard_status" -eq 0 ] || exit "$shard_status"

say "red-dot delivery smoke: 1,000 open websockets"
go test -run '^$' -bench RedDotDelivery -benchtime 1x -count=1 ./api

say "soak, short: 30s in 6s intervals on two instances (make soak runs 10 minutes)"
SOAK_DURATION=30s SOAK_INTERVAL=6s SOAK_USERS=100 SOAK_FOLLOWS=10 go run ./soak

say "benchmark smoke: go run ./bench -quick (its checks asserted, its figures not)"
# A database and key prefix of this run's own (another checkout's test
# command may run its smoke at the same time), swept if this script is
# killed; the server binary, its logs and data directory (under TMPDIR) in
# the run's scratch directory, beside testctl.
bench_db=$("$TESTCTL" name -owner $$ -mysql 'root@tcp(127.0.0.1:3306)/' -redis 127.0.0.1:6379 feedtest_)
scratch=$(dirname "$TESTCTL")
# Half the sockets of -quick alone, and a third of its active readers
# (-active 0.05: 100 of the 2,000 users), whose inboxes it warms before the
# warm workloads: the smoke proves that every workload runs and its checks
# hold, which its figures are not part of. With 100 readers to 32 clients
# a reader now and then has five requests at once, which the server's
# MAX_OPERATIONS_PER_VIEWER (4) would refuse: the smoke's server takes 100.
TMPDIR=$scratch go run ./bench -quick -active 0.05 -sockets 100,200 -server-flags '-max-operations-per-viewer=100' \
  -db "$bench_db" -server-bin "$scratch/feedbench-server"
say "side chain done"
