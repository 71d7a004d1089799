package feed

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/slot"
)

// The hub is this instance's Redis pub/sub. It subscribes to the channels
// of the readers with a live subscription here (their own channel, and the
// channels of the authors they follow whose posts are not fanned out),
// reference-counted: the last listener of a channel gone, the channel is
// unsubscribed. It only hands messages on, never waiting on a client: a
// listener's wake-up is a flag and its queue of new entries is bounded (a
// full queue drops, and the client catches up by paging), so one slow
// client neither blocks the others nor makes Redis drop a connection for a
// full output buffer. go-redis reconnects a dropped connection and
// subscribes again; each confirmation wakes the channel's listeners, which
// then send their current counts.
//
// On a single Redis every channel is on one classic (SUBSCRIBE) connection.
// On a Redis Cluster the readers' and authors' channels are sharded
// (SSUBSCRIBE/SPUBLISH): a message goes only to the shard (master and
// replica) of its channel's slot, which holds the user's keys too (the
// channel carries the user's hash tag), instead of over the cluster bus to
// every node. The broadcast channels (celebrities, cache invalidations)
// stay classic: every instance needs every message of theirs, so sharding
// them would not spread their load but put it all on one shard, and the
// classic connection may be to any node, so a master's failure does not
// stop them longer than a reconnect. The sharded channels share one
// connection per node (see shardsub.go).
type hub struct {
	e   *Engine
	ctx context.Context // the hub's life: its receivers end with it
	// broadcast is the classic connection: the broadcast channels, and on a
	// single Redis the readers' and authors' channels too.
	broadcast *redis.PubSub
	// cluster is the Redis Cluster client, nil on a single Redis.
	cluster *redis.ClusterClient

	mu   sync.Mutex
	subs map[string]map[*listener]struct{}

	// subMu orders the subscribe and unsubscribe calls, each of which
	// first checks that h.subs still wants it, so that of a channel's
	// unsubscribe and its next subscribe, whichever runs last is right.
	subMu sync.Mutex
	// nodes are the sharded subscriptions, one connection per cluster
	// node with channels in use, by address (see shardsub.go); orphans
	// are the channels waiting to be subscribed again after their node
	// failed or gave their slot away, which regroupWake hands to regroup.
	// Both guarded by subMu.
	nodes       map[string]*nodeSub
	orphans     map[string]bool
	regroupWake chan struct{}
}

// listenerQueue bounds the entries waiting for one feedItemAdded client.
const listenerQueue = 64

// maxPendingKeys bounds the new keys waiting for one unreadCount client;
// past it the client recounts instead.
const maxPendingKeys = 4096

// takeCount hands the count what arrived since it last looked: whether it
// must recount, and the keys of new entries.
func (l *listener) takeCount() (recount bool, keys []int64) {
	l.countMu.Lock()
	defer l.countMu.Unlock()
	recount, keys = l.recount, l.pending
	l.recount, l.pending = false, nil
	return recount, keys
}

// listener is one live subscription of one reader.
type listener struct {
	reader  int64
	wake    chan struct{} // cap 1: something changed, look again
	added   chan feedAdd  // entries that may have entered the feed
	refresh atomic.Bool   // the authors to listen to may have changed

	// An inbox's "add" is always a new entry: an unread count adds its key
	// to the set of unread keys it keeps, with no recount. Anything else
	// asks for an exact recount.
	countMu sync.Mutex
	pending []int64 // keys of new entries not yet taken by the count
	recount bool

	mu       sync.Mutex
	channels []string
}

// feedAdd says that post entered a feed at key.
type feedAdd struct{ post, key int64 }

func newHub(ctx context.Context, e *Engine) *hub {
	ps := e.redis.Subscribe(ctx, e.keys.CelebritiesChannel(), e.keys.CacheInvalidateChannel())
	cluster, _ := e.redis.(*redis.ClusterClient)
	return &hub{e: e, ctx: ctx, broadcast: ps, cluster: cluster, subs: map[string]map[*listener]struct{}{},
		nodes: map[string]*nodeSub{}, orphans: map[string]bool{}, regroupWake: make(chan struct{}, 1)}
}

// run hands messages to listeners until ctx ends.
func (h *hub) run(ctx context.Context) {
	defer func() {
		h.subMu.Lock()
		defer h.subMu.Unlock()
		for _, ns := range h.nodes {
			h.closeNode(ns)
		}
	}()
	if h.cluster != nil {
		regrouped := make(chan struct{})
		go func() {
			defer close(regrouped)
			h.regroup(ctx)
		}()
		defer func() { <-regrouped }()
	}
	h.receive(ctx, h.broadcast)
}

// receive hands the messages of one connection to listeners until ctx ends
// or the connection is closed.
func (h *hub) receive(ctx context.Context, ps *redis.PubSub) {
	defer ps.Close()
	ch := ps.ChannelWithSubscriptions(redis.WithChannelSize(4096))
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			switch m := msg.(type) {
			case *redis.Subscription:
				if m.Channel == h.e.keys.CacheInvalidateChannel() {
					if m.Kind == "subscribe" {
						h.e.onInvalidationsResubscribed()
					}
					continue
				}
				if m.Kind == "subscribe" {
					h.deliver(m.Channel, "change") // (re)subscribed: send current counts
				}
			case *redis.Message:
				if m.Channel == h.e.keys.CacheInvalidateChannel() {
					h.e.onInvalidation(m.Payload)
					continue
				}
				h.deliver(m.Channel, m.Payload)
			}
		}
	}
}

// deliver hands one message to the listeners of its channel, never waiting.
func (h *hub) deliver(channel, payload string) {
	verb, rest, _ := strings.Cut(payload, " ")
	var add feedAdd
	if verb == "add" {
		post, key, _ := strings.Cut(rest, " ")
		add.post, _ = strconv.ParseInt(post, 10, 64)
		add.key, _ = strconv.ParseInt(key, 10, 64)
	}
	refresh := verb == "follow" || verb == "unfollow" || channel == h.e.keys.CelebritiesChannel()
	h.mu.Lock()
	defer h.mu.Unlock()
	targets := h.subs[channel]
	if channel == h.e.keys.CelebritiesChannel() {
		targets = map[*listener]struct{}{}
		for _, ls := range h.subs {
			for l := range ls {
				targets[l] = struct{}{}
			}
		}
	}
	// Only an inbox's add is surely a new entry: an author's channel also
	// announces reposts of posts the reader may have already.
	countable := add.post != 0 && isReaderChannel(h.e.keys, channel)
	for l := range targets {
		if refresh {
			l.refresh.Store(true)
		}
		l.countMu.Lock()
		if (countable || (add.post != 0 && add.post == add.key)) && len(l.pending) < maxPendingKeys {
			l.pending = append(l.pending, add.key) // a new entry, or a new post of its author's
		} else {
			l.recount = true
		}
		l.countMu.Unlock()
		if add.post != 0 {
			select {
			case l.added <- add:
			default: // full: this client catches up by paging
			}
		}
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// listen registers a listener for reader until ctx ends.
func (h *hub) listen(ctx context.Context, reader int64) (*listener, error) {
	l := &listener{reader: reader, wake: make(chan struct{}, 1), added: make(chan feedAdd, listenerQueue)}
	if err := h.update(ctx, l); err != nil {
		h.drop(l)
		return nil, err
	}
	go func() {
		<-ctx.Done()
		h.drop(l)
	}()
	return l, nil
}

// update subscribes l to the channels it needs now: its reader's, and the
// authors' whose posts reach the reader without fan-out.
func (h *hub) update(ctx context.Context, l *listener) error {
	authors, err := h.e.unpushedFollowees(ctx, l.reader)
	if err != nil {
		return err
	}
	want := []string{h.e.keys.ReaderChannel(l.reader)}
	for _, a := range authors {
		want = append(want, h.e.keys.AuthorChannel(a))
	}
	l.mu.Lock()
	old := l.channels
	l.channels = want
	l.mu.Unlock()
	var subscribe, unsubscribe []string
	h.mu.Lock()
	for _, c := range want {
		if h.subs[c] == nil {
			h.subs[c] = map[*listener]struct{}{}
			subscribe = append(subscribe, c)
		}
		h.subs[c][l] = struct{}{}
	}
	for _, c := range old {
		if !slices.Contains(want, c) {
			unsubscribe = append(unsubscribe, h.leave(c, l)...)
		}
	}
	h.mu.Unlock()
	h.unsubscribe(ctx, unsubscribe)
	return h.subscribe(ctx, subscribe)
}

// drop removes l from every channel, unsubscribing the ones left empty.
func (h *hub) drop(l *listener) {
	l.mu.Lock()
	channels := l.channels
	l.channels = nil
	l.mu.Unlock()
	var unsubscribe []string
	h.mu.Lock()
	for _, c := range channels {
		unsubscribe = append(unsubscribe, h.leave(c, l)...)
	}
	h.mu.Unlock()
	h.unsubscribe(context.Background(), unsubscribe)
}

// leave takes l off channel c; it returns c when no listener is left on it.
// The caller holds h.mu.
func (h *hub) leave(c string, l *listener) []string {
	delete(h.subs[c], l)
	if len(h.subs[c]) > 0 {
		return nil
	}
	delete(h.subs, c)
	return []string{c}
}

// wanted keeps the channels that some listener still needs (or, with
// want false, that none needs) now.
func (h *hub) wanted(channels []string, want bool) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range channels {
		if (h.subs[c] != nil) == want {
			out = append(out, c)
		}
	}
	return out
}

// subscribe subscribes to the channels that are still wanted: on the
// broadcast connection on a single Redis, on their nodes' connections on a
// cluster.
func (h *hub) subscribe(ctx context.Context, channels []string) error {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	channels = h.wanted(channels, true)
	if len(channels) == 0 {
		return nil
	}
	if h.cluster == nil {
		return h.broadcast.Subscribe(ctx, channels...)
	}
	return h.subscribeSharded(ctx, channels)
}

// unsubscribe unsubscribes from the channels no listener wants any more;
// a node's connection closes with its last channel.
func (h *hub) unsubscribe(ctx context.Context, channels []string) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	channels = h.wanted(channels, false)
	if len(channels) == 0 {
		return
	}
	if h.cluster == nil {
		h.broadcast.Unsubscribe(ctx, channels...)
		return
	}
	h.unsubscribeSharded(ctx, channels)
}

// sharded reports whether channel is a sharded one: on a Redis Cluster,
// every channel but the broadcast ones.
func (e *Engine) sharded(channel string) bool {
	return e.onCluster() && channel != e.keys.CelebritiesChannel() && channel != e.keys.CacheInvalidateChannel()
}

// onCluster reports whether Redis is a Redis Cluster.
func (e *Engine) onCluster() bool {
	_, ok := e.redis.(*redis.ClusterClient)
	return ok
}

// shardedTwins maps each script that publishes on a reader's channel to
// its twin that does so with SPUBLISH, for a Redis Cluster. A script runs
// on the node of its keys' slot, which is the slot of the reader's channel
// too (both carry the reader's hash tag), as SPUBLISH in a script needs.
var shardedTwins = map[*redis.Script]*redis.Script{}

// newPublishingScript makes a script whose redis.call('PUBLISH', ...)
// publish on a reader's channel, and registers its sharded twin.
func newPublishingScript(src string) *redis.Script {
	s := redis.NewScript(src)
	shardedTwins[s] = redis.NewScript(strings.ReplaceAll(src, "redis.call('PUBLISH'", "redis.call('SPUBLISH'"))
	return s
}

// publishing is script as this engine runs it: its sharded twin on a
// Redis Cluster.
func (e *Engine) publishing(script *redis.Script) *redis.Script {
	if twin := shardedTwins[script]; twin != nil && e.onCluster() {
		return twin
	}
	return script
}

// bySlot groups channels by their hash slot.
func bySlot(channels []string) map[int][]string {
	out := map[int][]string{}
	for _, c := range channels {
		sl := slot.Of(c)
		out[sl] = append(out[sl], c)
	}
	return out
}

// channels is how many channels the hub is subscribed to, for tests.
func (h *hub) channels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// isReaderChannel tells a reader's channel from an author's.
func isReaderChannel(k keyspace.Keys, channel string) bool {
	return strings.HasPrefix(channel, k.Prefix()+"dots:")
}
