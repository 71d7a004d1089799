// Package testenv gives each test its own MariaDB database and Redis key
// prefix on the real servers that the test command starts, found through
// TEST_MYSQL_DSN (default root@tcp(127.0.0.1:3306)/) and TEST_REDIS_ADDR
// (default 127.0.0.1:6379). TEST_REDIS_ADDR with several comma-separated
// addresses is a Redis Cluster (the test command's cluster run sets it to
// its six nodes), as REDIS_ADDR is for the service. TEST_MYSQL_REPLICA_DSNS
// lists read replicas of TEST_MYSQL_DSN (scripts/mysql-replica.sh starts a
// primary and two): a database made on the primary reaches them, and the
// servers and engines the tests start read from them (replicas.go). A
// server that does not answer fails the test: nothing is skipped.
package testenv

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv/testrun"
)

// MySQLServerDSN is the DSN of the test MariaDB server, without a database.
func MySQLServerDSN() string { return server("TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/") }

// RedisAddr is the address of the test Redis (a comma list for a cluster).
func RedisAddr() string { return server("TEST_REDIS_ADDR", "127.0.0.1:6379") }

// RedisCluster reports whether the test Redis is a Redis Cluster.
func RedisCluster() bool { return len(redisAddrs()) > 1 }

func redisAddrs() []string { return servers("TEST_REDIS_ADDR", "127.0.0.1:6379") }

// MySQL creates a database for this test, dropped when it ends, and returns
// a DSN that selects it.
func MySQL(t testing.TB) string {
	t.Helper()
	WatchLibraryLog(t)
	return createDatabase(t, MySQLServerDSN(), Name("feedtest_"))
}

// Redis returns a client of the test Redis (a cluster client when
// TEST_REDIS_ADDR lists several nodes) and a key prefix of this test's own;
// the keys under it are deleted when the test ends. Every command of the
// client must keep to one hash slot (see CheckSlots).
func Redis(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: redisAddrs()})
	ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s does not answer (the test command starts it): %v", RedisAddr(), err)
	}
	WatchLibraryLog(t)
	usesServers(t, "", RedisAddr())
	prefix := Name("t") + ":"
	t.Cleanup(func() {
		DeletePrefix(context.Background(), rdb, prefix)
		DeletePrefix(context.Background(), rdb, testrun.RateKeyPrefix+prefix) // the rate limiter's
		rdb.Close()
	})
	CheckSlots(t, rdb)
	return rdb, prefix
}

// Keys lists the keys that start with prefix, on every master of a cluster.
func Keys(ctx context.Context, rdb redis.UniversalClient, prefix string) ([]string, error) {
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
		return out, err
	}
	return out, scan(ctx, rdb)
}

// DeletePrefix deletes every key that starts with prefix, on every master
// of a cluster, and returns how many it deleted: what a test sees of Redis
// losing its data, without touching the keys of the other tests.
func DeletePrefix(ctx context.Context, rdb redis.UniversalClient, prefix string) (int, error) {
	keys, err := Keys(ctx, rdb, prefix)
	deleted := 0
	for _, k := range keys {
		n, err := rdb.Del(ctx, k).Result()
		if err != nil {
			return deleted, err
		}
		deleted += int(n)
	}
	return deleted, err
}

// NumSub is how many connections subscribe to channel, classic (SUBSCRIBE)
// or sharded (SSUBSCRIBE): on a cluster, the sum over its nodes, as each
// counts only its own subscribers.
func NumSub(ctx context.Context, rdb redis.UniversalClient, channel string) (int64, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		n, err := rdb.PubSubNumSub(ctx, channel).Result()
		return n[channel], err
	}
	var total atomic.Int64
	err := cc.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		n, err := node.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			return err
		}
		sharded, err := node.PubSubShardNumSub(ctx, channel).Result()
		total.Add(n[channel] + sharded[channel])
		return err
	})
	return total.Load(), err
}
