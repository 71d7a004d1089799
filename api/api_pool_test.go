package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/slot"
	"feedservice/internal/testenv"
)

// Subscriptions opening while every pooled Redis connection is busy (in the
// benchmark: 16 sockets opening at a time while the server builds inboxes
// and fans out) start with the right count, from MySQL, instead of failing
// with "redis: connection pool timeout". The test holds every connection of
// the server's pool (REDIS_POOL_SIZE 1 plus one per fan-out worker) with
// blocking reads, as long fan-out reads and scripts do, then opens 50
// unreadCount subscriptions at once. It runs alone (not in parallel): its
// pool of two connections with a 100 ms wait would time out in the
// setup's own settling on a box busy with the parallel tests.
func TestLiveSubscriptionsStartWhileRedisPoolIsBusy(t *testing.T) {
	for _, mode := range []string{"hybrid", "push"} {
		t.Run(mode, func(t *testing.T) {
			s := newTestServer(t, backendReal, func(c *settings.Settings) {
				c.Mode = feedconfig.Mode(mode)
				c.CelebrityFollowers = 7
				c.RedisPoolSize = 1
				c.FanoutWorkers = 1
				c.RedisPoolTimeout = testenv.Scale(100 * time.Millisecond)
			})
			// star has 7 followers (a celebrity in hybrid mode), plain 6.
			star, plain := s.signUp(t, "star"), s.signUp(t, "plain")
			followsStar := func(i int) bool { return i%3 != 1 }
			followsPlain := func(i int) bool { return i%3 != 0 }
			const readers, subsEach, starPosts, plainPosts = 10, 5, 3, 2
			want := func(i, star, plain int) int {
				return boolInt(followsStar(i))*star + boolInt(followsPlain(i))*plain
			}
			var clients []*client
			for i := range readers {
				r := s.signUp(t, fmt.Sprintf("reader%d", i))
				if followsStar(i) {
					liveFollow(t, r, star)
				}
				if followsPlain(i) {
					liveFollow(t, r, plain)
				}
				clients = append(clients, r)
			}
			for i := range starPosts {
				livePost(t, star, "star "+strconv.Itoa(i))
			}
			for i := range plainPosts {
				livePost(t, plain, "plain "+strconv.Itoa(i))
			}
			s.settle(t)
			if mode == "hybrid" {
				ok, err := s.app.redis.SIsMember(context.Background(), s.app.cfg.KeyPrefix+"celebrities", liveUserID(t, star.Token)).Result()
				if err != nil || !ok {
					t.Fatalf("setup: star (7 followers, CELEBRITY_FOLLOWERS=7) is not a celebrity: %v %v", ok, err)
				}
			}
			conns := make([]*liveConn, readers)
			for i, r := range clients {
				conns[i] = liveConnect(t, s, liveTransportWS, r.Token)
			}

			if rc, ok := s.app.redis.(*redis.Client); ok && rc.Options().PoolSize != 2 {
				t.Fatalf("setup: REDIS_POOL_SIZE 1 and 1 fan-out worker: pool of %d, want 2", rc.Options().PoolSize)
			}
			release := holdRedisPool(t, s, s.app.redis, s.app.cfg.RedisPoolSize+s.app.cfg.FanoutWorkers)
			ids := make([][]string, readers)
			for i, c := range conns {
				for range subsEach {
					ids[i] = append(ids[i], c.subscribe(liveUnreadSub))
				}
			}
			for i, c := range conns {
				for _, id := range ids[i] {
					what := fmt.Sprintf("reader%d subscription %s, pool busy", i, id)
					if n, w := c.firstCount(id, 20*time.Second, what), want(i, starPosts, plainPosts); n != w {
						t.Fatalf("%s: first unreadCount %d, want %d", what, n, w)
					}
				}
			}

			// Redis free again: the subscriptions listen where they should
			// (star's channel in hybrid mode, found from MySQL), and count on.
			release()
			livePost(t, star, "star after")
			livePost(t, plain, "plain after")
			for i, c := range conns {
				for _, id := range ids[i] {
					c.expectCount(id, want(i, starPosts+1, plainPosts+1), 20*time.Second,
						fmt.Sprintf("reader%d subscription %s after new posts", i, id))
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holdRedisPool takes all n connections of rdb's pool (of each master's
// pool on a cluster) with blocking reads, and returns when a call on the
// pool times out waiting for one. release ends the reads.
func holdRedisPool(t *testing.T, s *testServer, rdb redis.UniversalClient, n int) (release func()) {
	t.Helper()
	ctx := context.Background()
	other, _ := testenv.Redis(t) // a client of its own to end the reads with
	nodes := map[string]*redis.Client{}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			nodes[node.Options().Addr] = node
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	} else {
		nodes[""] = rdb.(*redis.Client)
	}
	keys := holdKeys(t, rdb, s.app.cfg.KeyPrefix, nodes)
	var wg sync.WaitGroup
	for addr, node := range nodes {
		for range n {
			wg.Go(func() {
				for {
					err := node.BLPop(ctx, time.Minute, keys[addr]).Err()
					if !errors.Is(err, redis.ErrPoolTimeout) {
						return // released (or the minute is up)
					}
				}
			})
		}
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		for _, key := range keys {
			for range n {
				other.RPush(ctx, key, "go")
			}
		}
		wg.Wait()
	}
	t.Cleanup(release)
	for addr, node := range nodes {
		deadline := time.Now().Add(testenv.Scale(20 * time.Second))
		for !errors.Is(node.Ping(ctx).Err(), redis.ErrPoolTimeout) {
			if time.Now().After(deadline) {
				t.Fatalf("setup: the reads did not take all %d connections of the pool of %q", n, addr)
			}
		}
	}
	return release
}

// holdKeys picks, for each node, a key of a slot that node serves.
func holdKeys(t *testing.T, rdb redis.UniversalClient, prefix string, nodes map[string]*redis.Client) map[string]string {
	t.Helper()
	keys := map[string]string{}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		keys[""] = prefix + "hold"
		return keys
	}
	slots, err := cc.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(keys) < len(nodes); i++ {
		key := prefix + "hold" + strconv.Itoa(i)
		ks := slot.Of(key)
		for _, r := range slots {
			if ks >= r.Start && ks <= r.End && len(r.Nodes) > 0 && keys[r.Nodes[0].Addr] == "" {
				keys[r.Nodes[0].Addr] = key
			}
		}
		if i > 100_000 {
			t.Fatalf("setup: no key for each of the %d nodes", len(nodes))
		}
	}
	return keys
}
