# The test-only servers that the test command starts and leaves running for
# the next run, sourced by redis-cluster.sh and mysql-replica.sh (which
# start them) and test-clean.sh (which stops them and removes their data):
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
