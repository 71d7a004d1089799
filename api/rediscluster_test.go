package api

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
)

// One REDIS_ADDR is a single Redis; several, the seed nodes of a cluster.
func TestOpenRedisPicksClusterForSeveralAddresses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr    string
		cluster bool
	}{
		{"127.0.0.1:6379", false},
		{"127.0.0.1:6379,", false},
		{"127.0.0.1:7000,127.0.0.1:7001", true},
		{" 127.0.0.1:7000 , 127.0.0.1:7001 ,127.0.0.1:7002", true},
	} {
		var closers []func()
		rdb, err := openRedis(c.addr, settings.RedisPool{Size: 7, Timeout: 300 * time.Millisecond}, &closers)
		if err != nil {
			t.Fatal(err)
		}
		switch r := rdb.(type) {
		case *redis.ClusterClient:
			if !c.cluster {
				t.Errorf("REDIS_ADDR %q opened a cluster client", c.addr)
			}
			if o := r.Options(); o.ReadTimeout != redisIOTimeout || o.DialTimeout != redisDialTimeout || o.MaxRetries != 1 {
				t.Errorf("REDIS_ADDR %q: cluster client without the single client's timeouts: %+v", c.addr, o)
			}
			if o := r.Options(); o.ClusterStateReloadInterval != redisClusterStateReload {
				t.Errorf("REDIS_ADDR %q: cluster state reloaded every %s, want %s", c.addr, o.ClusterStateReloadInterval, redisClusterStateReload)
			}
			if o := r.Options(); o.PoolSize != 7 || o.PoolTimeout != 300*time.Millisecond {
				t.Errorf("REDIS_ADDR %q: cluster pool %d, %s; want 7, 300ms", c.addr, o.PoolSize, o.PoolTimeout)
			}
		case *redis.Client:
			if c.cluster {
				t.Errorf("REDIS_ADDR %q opened a single client", c.addr)
			}
			if o := r.Options(); o.PoolSize != 7 || o.PoolTimeout != 300*time.Millisecond {
				t.Errorf("REDIS_ADDR %q: pool %d, %s; want 7, 300ms", c.addr, o.PoolSize, o.PoolTimeout)
			}
		default:
			t.Errorf("REDIS_ADDR %q opened a %T", c.addr, rdb)
		}
		for _, f := range closers {
			f()
		}
	}
}

// A key prefix with a brace would be every key's hash tag: refused.
func TestKeyPrefixWithoutBraces(t *testing.T) {
	t.Parallel()
	if _, err := parseConfig([]string{"-key-prefix", "feed:"}); err != nil {
		t.Fatalf("-key-prefix feed: refused: %v", err)
	}
	for _, p := range []string{"{feed}:", "feed{", "feed}"} {
		if _, err := parseConfig([]string{"-key-prefix", p}); err == nil || !strings.Contains(err.Error(), "must not contain") {
			t.Errorf("-key-prefix %q: error %v, want a refusal", p, err)
		}
	}
}
