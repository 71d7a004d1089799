package live

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/livemsg"
	"feedservice/internal/slot"
	"feedservice/internal/testenv"
)

// shardTestSlots is how many slots the listeners' channels fall in.
const shardTestSlots = 1000

// maxShardConnsPerNode is the most sharded subscription connections one
// instance may hold to one node.
const maxShardConnsPerNode = 1

// Sharded channels of 1,000 slots on a 3-master cluster share one
// connection per node, and each one delivers; after a master dies and its
// replica takes over, each one delivers again, still on one connection per
// node.
func TestShardedChannelsShareANodesConnection(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
	t.Cleanup(func() { rdb.Close() })
	th := startHub(t, rdb, testenv.Name("t")+":")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Readers whose channels fall in shardTestSlots different slots.
	listeners := map[string]*Listener{}
	seen := map[int]bool{}
	for id := int64(1); len(listeners) < shardTestSlots; id++ {
		channel := th.d.Keys.ReaderChannel(id)
		if seen[slot.Of(channel)] {
			continue
		}
		seen[slot.Of(channel)] = true
		l, err := th.Listen(ctx, id, noAuthors)
		if err != nil {
			t.Fatal(err)
		}
		listeners[channel] = l
	}

	delivers := func(when string) {
		t.Helper()
		pending := map[string]*Listener{}
		for c, l := range listeners {
			pending[c] = l
		}
		deadline := time.Now().Add(testenv.Scale(20 * time.Second))
		for post := int64(1); len(pending) > 0; post++ {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of %d channels deliver nothing, among them %v", when, len(pending), len(listeners), firstKeys(pending, 3))
			}
			pipe := rdb.Pipeline()
			cmds := map[string]*redis.IntCmd{}
			for c := range pending {
				cmds[c] = pipe.SPublish(ctx, c, livemsg.Added(livemsg.Add{Post: post, Key: post}).Encode())
			}
			pipe.Exec(ctx)
			for c, cmd := range cmds {
				if cmd.Val() != 1 {
					continue // not subscribed (yet, or again)
				}
				if !heard(pending[c], post) {
					t.Fatalf("%s: SPUBLISH on %s reached a subscriber, but no listener heard it", when, c)
				}
				delete(pending, c)
			}
			if len(pending) > 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	connections := func(when string) {
		t.Helper()
		total := 0
		for _, addr := range cluster.LiveAddrs() {
			n := shardSubscribers(t, addr)
			if n > maxShardConnsPerNode {
				t.Errorf("%s: node %s holds %d sharded subscription connections, want at most %d", when, addr, n, maxShardConnsPerNode)
			}
			total += n
		}
		if held := th.nodeConnections(); held != total || held > 3*maxShardConnsPerNode {
			t.Errorf("%s: the hub holds %d node connections, the nodes count %d, want at most %d", when, held, total, 3*maxShardConnsPerNode)
		}
		t.Logf("%s: %d channels in %d slots on %d sharded connections", when, len(listeners), shardTestSlots, total)
	}

	delivers("before the failover")
	connections("before the failover")

	victim := cluster.MasterOf(slot.Of(th.d.Keys.ReaderChannel(1)))
	cluster.Kill(victim)
	cluster.WaitFailover(victim, slot.Of(th.d.Keys.ReaderChannel(1)), 30*time.Second)
	delivers("after the failover")
	connections("after the failover")

	cancel()
	testenv.WaitFor(t, "every channel unsubscribed", func() bool { return th.channels() == 0 && th.nodeConnections() == 0 })
}

// shardSubscribers counts the connections of the node at addr that hold
// sharded subscriptions (CLIENT LIST's ssub field).
func shardSubscribers(t *testing.T, addr string) int {
	t.Helper()
	node := redis.NewClient(&redis.Options{Addr: addr})
	defer node.Close()
	list, err := node.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(list) {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "ssub="); ok {
				if k, _ := strconv.Atoi(v); k > 0 {
					n++
				}
			}
		}
	}
	return n
}

// heard waits for l to hear of post (skipping what earlier rounds sent).
func heard(l *Listener, post int64) bool {
	timeout := time.After(testenv.Scale(5 * time.Second))
	for {
		select {
		case a := <-l.Added():
			if a.Post == post {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

func firstKeys(m map[string]*Listener, n int) []string {
	var out []string
	for k := range m {
		if len(out) == n {
			break
		}
		out = append(out, k)
	}
	return out
}
