package feed

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/livemsg"
	"feedservice/internal/slot"
	"feedservice/internal/testenv"
)

// On a Redis Cluster a reader's channel is sharded: the hub subscribes to
// it on the master of its slot only, a post reaches the live count through
// that node (SPUBLISH from the inbox script, run where the inbox is), no
// other node knows the channel, and a classic PUBLISH on it reaches no one.
// The broadcast channel stays classic, one subscription per instance.
func TestShardedChannelLivesOnItsSlotsNode(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
	t.Cleanup(func() { rdb.Close() })
	testenv.CheckSlots(t, rdb)
	te := startTestEngine(t, newTestStore(t), rdb, testenv.Name("t")+":", func(c *config.Config) { c.Mode = config.ModePush })
	author, reader := te.user("author"), te.user("reader")
	te.follow(reader, author)
	ctx := context.Background()
	counts, stopCounts := te.unreadCounts(reader)
	if n := <-counts; n != 0 {
		t.Fatalf("first count %d, want 0", n)
	}

	channel := te.keys.ReaderChannel(reader)
	owner := cluster.MasterOf(slot.Of(channel))
	if slot.Of(channel) != slot.Of(te.keys.Inbox(reader)) {
		t.Fatalf("%s and %s are in different slots", channel, te.keys.Inbox(reader))
	}
	testenv.WaitFor(t, "the sharded subscription on the slot's master", func() bool {
		return shardNumSub(t, owner, channel) == 1
	})
	for _, addr := range cluster.Addrs() {
		node := redis.NewClient(&redis.Options{Addr: addr})
		defer node.Close()
		channels, err := node.PubSubShardChannels(ctx, te.keys.Prefix()+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if addr == owner {
			want = 1
		}
		if len(channels) != want {
			t.Errorf("node %s (owner %v): shard channels %q, want %d", addr, addr == owner, channels, want)
		}
		if n, _ := node.PubSubNumSub(ctx, channel).Result(); n[channel] != 0 {
			t.Errorf("node %s: %d classic subscriptions to %s, want none", addr, n[channel], channel)
		}
		// Another node refuses the channel: it belongs to the owner's slot.
		role, err := node.Do(ctx, "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if addr != owner && role[0] == "master" {
			ps := node.SSubscribe(ctx, channel)
			_, err := ps.Receive(ctx)
			ps.Close()
			if err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
				t.Errorf("SSUBSCRIBE %s on master %s (not the owner): %v, want MOVED", channel, addr, err)
			}
		}
	}

	te.post(author, "through the owner")
	select {
	case n := <-counts:
		if n != 1 {
			t.Fatalf("count after a post %d, want 1", n)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatal("no count after a post")
	}
	if n, err := rdb.Publish(ctx, channel, livemsg.Change().Encode()).Result(); err != nil || n != 0 {
		t.Fatalf("classic PUBLISH on %s reached %d subscribers (%v), want 0", channel, n, err)
	}
	if n, err := rdb.SPublish(ctx, channel, livemsg.Change().Encode()).Result(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH on %s reached %d subscribers (%v), want 1", channel, n, err)
	}
	if n, err := testenv.NumSub(ctx, rdb, te.keys.CacheInvalidateChannel()); err != nil || n != 1 {
		t.Fatalf("%d subscriptions to the broadcast channel (%v), want 1 classic", n, err)
	}

	stopCounts()
	testenv.WaitFor(t, "the sharded channel to be unsubscribed", func() bool { return shardNumSub(t, owner, channel) == 0 })
}

// shardNumSub is PUBSUB SHARDNUMSUB channel on the node at addr.
func shardNumSub(t *testing.T, addr, channel string) int64 {
	t.Helper()
	node := redis.NewClient(&redis.Options{Addr: addr})
	defer node.Close()
	n, err := node.PubSubShardNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n[channel]
}
