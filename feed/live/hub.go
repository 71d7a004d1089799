// Package live serves a viewer's live streams (their unread count, and the
// entries entering their feed) from this instance's Redis pub/sub: the Hub
// hands the messages of readers' and authors' channels (package livemsg)
// to the listeners of the streams (Streams).
package live

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/livemsg"
	"feedservice/internal/slot"
)

// The Hub is this instance's Redis pub/sub. It subscribes to the channels
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
//
// The hub also names its readers in the index of connected readers, which
// the fan-out writes first (see connected.go).
type Hub struct {
	d *deps.Deps
	// onInvalidation and onResubscribed are the cache's handlers of the
	// invalidate channel: a message, and a (re)subscription after which
	// the messages sent meanwhile are lost.
	onInvalidation func(livemsg.Invalidation)
	onResubscribed func()
	// onAuthorMessage drops this instance's copy of an author's outbox
	// before the listeners woken by a message on the author's channel
	// recount: on a Redis Cluster that message (sharded) and the
	// invalidate channel's (classic) travel on different connections, and
	// the first may come first.
	onAuthorMessage func(author int64)
	ctx             context.Context // the hub's life: its receivers end with it
	// broadcast is the classic connection: the broadcast channels, and on a
	// single Redis the readers' and authors' channels too.
	broadcast *redis.PubSub
	// cluster is the Redis Cluster client, nil on a single Redis.
	cluster *redis.ClusterClient

	mu   sync.Mutex
	subs map[string]map[*Listener]struct{}

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

// TakeCount hands the count what arrived since it last looked: whether it
// must recount, and the keys of new entries.
func (l *Listener) TakeCount() (recount bool, keys []int64) {
	l.countMu.Lock()
	defer l.countMu.Unlock()
	recount, keys = l.recount, l.pending
	l.recount, l.pending = false, nil
	return recount, keys
}

// Listener is one live subscription of one reader.
type Listener struct {
	reader  int64
	authors AuthorsFunc      // the authors whose channels it listens to besides its reader's
	wake    chan struct{}    // cap 1: something changed, look again
	added   chan livemsg.Add // entries that may have entered the feed
	refresh atomic.Bool      // the authors to listen to may have changed

	// An inbox's "add" is always a new entry: an unread count adds its key
	// to the set of unread keys it keeps, with no recount. Anything else
	// asks for an exact recount.
	countMu sync.Mutex
	pending []int64 // keys of new entries not yet taken by the count
	recount bool

	mu       sync.Mutex
	channels []string
}

// NewHub starts a hub that lives until ctx ends (Run hands its messages on):
// subscribed to the broadcast channels, the invalidate channel's messages
// going to onInvalidation, and each (re)subscription of it to
// onResubscribed.
func NewHub(ctx context.Context, d *deps.Deps, onInvalidation func(livemsg.Invalidation), onResubscribed func(), onAuthorMessage func(author int64)) *Hub {
	ps := d.Redis.Subscribe(ctx, d.Keys.CelebritiesChannel(), d.Keys.CacheInvalidateChannel(), d.Keys.InboxesChannel())
	cluster, _ := d.Redis.(*redis.ClusterClient)
	return &Hub{d: d, ctx: ctx, onInvalidation: onInvalidation, onResubscribed: onResubscribed, onAuthorMessage: onAuthorMessage, broadcast: ps, cluster: cluster, subs: map[string]map[*Listener]struct{}{},
		nodes: map[string]*nodeSub{}, orphans: map[string]bool{}, regroupWake: make(chan struct{}, 1)}
}

// Run hands messages to listeners until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	defer func() {
		h.subMu.Lock()
		defer h.subMu.Unlock()
		for _, ns := range h.nodes {
			h.closeNode(ns)
		}
	}()
	connected := make(chan struct{})
	go func() {
		defer close(connected)
		h.keepConnected(ctx)
	}()
	defer func() { <-connected }()
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
func (h *Hub) receive(ctx context.Context, ps *redis.PubSub) {
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
				if m.Channel == h.d.Keys.CacheInvalidateChannel() {
					if m.Kind == "subscribe" {
						h.onResubscribed()
					}
					continue
				}
				if m.Kind != "subscribe" {
					continue
				}
				if m.Channel == h.d.Keys.InboxesChannel() {
					h.recountAll() // (re)subscribed: the batches sent meanwhile are lost
					continue
				}
				h.deliver(m.Channel, livemsg.Change()) // (re)subscribed: send current counts
			case *redis.Message:
				h.handle(m.Channel, m.Payload)
			}
		}
	}
}

// handle parses a message of channel and hands it on. A message that does
// not parse (a bug, or a mixed-version deployment) is logged and counted
// (feed_live_messages_unreadable_total) and taken for a lost one, answered
// as after a resubscription: the invalidate channel's drops every local
// copy, the inboxes channel's recounts every reader here, any other wakes
// its channel's listeners for a recount.
func (h *Hub) handle(channel, payload string) {
	k := h.d.Keys
	switch channel {
	case k.CacheInvalidateChannel():
		inv, err := livemsg.ParseInvalidation(payload)
		if err != nil {
			h.unreadable(channel, payload, err)
			h.onResubscribed()
			return
		}
		h.onInvalidation(inv)
	case k.InboxesChannel():
		b, err := livemsg.ParseBatch(payload)
		if err != nil {
			h.unreadable(channel, payload, err)
			h.recountAll()
			return
		}
		h.deliverBatch(b)
	default:
		m, err := livemsg.ParseMessage(payload)
		if err != nil {
			h.unreadable(channel, payload, err)
			m = livemsg.Change()
		}
		h.deliver(channel, m)
	}
}

// unreadable logs and counts a message that did not parse.
func (h *Hub) unreadable(channel, payload string, err error) {
	h.d.Metrics.LiveUnreadable.WithLabelValues(channelKind(h.d.Keys, channel)).Inc()
	if len(payload) > 200 {
		payload = payload[:200] + "…"
	}
	h.d.Log.Warn("live message unreadable; taken for a lost one", "channel", channel, "payload", payload, "err", err)
}

// channelKind names channel's kind, the label of
// feed_live_messages_unreadable_total.
func channelKind(k keyspace.Keys, channel string) string {
	switch {
	case channel == k.CacheInvalidateChannel():
		return "invalidate"
	case channel == k.InboxesChannel():
		return "inboxes"
	case channel == k.CelebritiesChannel():
		return "celebrities"
	case isReaderChannel(k, channel):
		return "reader"
	}
	return "author"
}

// deliver hands one message to the listeners of its channel, never waiting.
func (h *Hub) deliver(channel string, m livemsg.Message) {
	if author, ok := h.d.Keys.AuthorOfChannel(channel); ok && h.onAuthorMessage != nil {
		h.onAuthorMessage(author)
	}
	var add livemsg.Add
	if m.Verb == livemsg.VerbAdd {
		add = m.Add
	}
	refresh := m.ChangesAuthors() || channel == h.d.Keys.CelebritiesChannel()
	h.mu.Lock()
	defer h.mu.Unlock()
	targets := h.subs[channel]
	if channel == h.d.Keys.CelebritiesChannel() {
		targets = map[*Listener]struct{}{}
		for _, ls := range h.subs {
			for l := range ls {
				targets[l] = struct{}{}
			}
		}
	}
	// Only an inbox's add is surely a new entry: an author's channel also
	// announces reposts of posts the reader may have already.
	countable := add.Post != 0 && isReaderChannel(h.d.Keys, channel)
	for l := range targets {
		if refresh {
			l.refresh.Store(true)
		}
		l.countMu.Lock()
		if (countable || (add.Post != 0 && add.Post == add.Key)) && len(l.pending) < maxPendingKeys {
			l.pending = append(l.pending, add.Key) // a new entry, or a new post of its author's
		} else {
			l.recount = true
		}
		l.countMu.Unlock()
		if add.Post != 0 {
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

// deliverBatch hands a message of the inboxes channel to the listeners of
// the readers it names, as their own channel's message.
func (h *Hub) deliverBatch(b livemsg.Batch) {
	for _, r := range b.Readers {
		channel := h.d.Keys.ReaderChannel(r)
		h.mu.Lock()
		_, listened := h.subs[channel]
		h.mu.Unlock()
		if listened {
			h.deliver(channel, b.Message)
		}
	}
}

// recountAll wakes every listener of a reader's channel for an exact recount.
func (h *Hub) recountAll() {
	h.mu.Lock()
	var channels []string
	for c := range h.subs {
		if isReaderChannel(h.d.Keys, c) {
			channels = append(channels, c)
		}
	}
	h.mu.Unlock()
	for _, c := range channels {
		h.deliver(c, livemsg.Change())
	}
}

// AuthorsFunc finds the authors whose posts reach reader without fan-out:
// a listener of reader listens to their channels too.
type AuthorsFunc func(ctx context.Context, reader int64) ([]int64, error)

// Listen registers a listener for reader until ctx ends, on reader's
// channel and those of the authors that authors finds.
func (h *Hub) Listen(ctx context.Context, reader int64, authors AuthorsFunc) (*Listener, error) {
	l := &Listener{reader: reader, authors: authors, wake: make(chan struct{}, 1), added: make(chan livemsg.Add, listenerQueue)}
	if err := h.Update(ctx, l); err != nil {
		h.drop(l)
		return nil, err
	}
	h.connect(ctx, reader)
	go func() {
		<-ctx.Done()
		h.drop(l)
	}()
	return l, nil
}

// Update subscribes l to the channels it needs now: its reader's, and the
// authors' whose posts reach the reader without fan-out.
func (h *Hub) Update(ctx context.Context, l *Listener) error {
	authors, err := l.authors(ctx, l.reader)
	if err != nil {
		return err
	}
	want := []string{h.d.Keys.ReaderChannel(l.reader)}
	for _, a := range authors {
		want = append(want, h.d.Keys.AuthorChannel(a))
	}
	l.mu.Lock()
	old := l.channels
	l.channels = want
	l.mu.Unlock()
	var subscribe, unsubscribe []string
	h.mu.Lock()
	for _, c := range want {
		if h.subs[c] == nil {
			h.subs[c] = map[*Listener]struct{}{}
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
func (h *Hub) drop(l *Listener) {
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
	if slices.Contains(unsubscribe, h.d.Keys.ReaderChannel(l.reader)) {
		h.disconnect(l.reader) // its last listener here
	}
}

// leave takes l off channel c; it returns c when no listener is left on it.
// The caller holds h.mu.
func (h *Hub) leave(c string, l *Listener) []string {
	delete(h.subs[c], l)
	if len(h.subs[c]) > 0 {
		return nil
	}
	delete(h.subs, c)
	return []string{c}
}

// wanted keeps the channels that some listener still needs (or, with
// want false, that none needs) now.
func (h *Hub) wanted(channels []string, want bool) []string {
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
func (h *Hub) subscribe(ctx context.Context, channels []string) error {
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
func (h *Hub) unsubscribe(ctx context.Context, channels []string) {
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

// bySlot groups channels by their hash slot.
func bySlot(channels []string) map[int][]string {
	out := map[int][]string{}
	for _, c := range channels {
		sl := slot.Of(c)
		out[sl] = append(out[sl], c)
	}
	return out
}

// channels is how many channels the Hub is subscribed to.
func (h *Hub) channels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// isReaderChannel tells a reader's channel from an author's.
func isReaderChannel(k keyspace.Keys, channel string) bool {
	return strings.HasPrefix(channel, k.Prefix()+"dots:")
}

// Recount asks the listener's count for an exact recount at its next look.
func (l *Listener) Recount() {
	l.countMu.Lock()
	l.recount = true
	l.countMu.Unlock()
}

// Wake receives when something changed for the listener: look again.
func (l *Listener) Wake() <-chan struct{} { return l.wake }

// Added receives the entries that may have entered the reader's feed.
func (l *Listener) Added() <-chan livemsg.Add { return l.added }

// Reader is the reader the listener listens for.
func (l *Listener) Reader() int64 { return l.reader }

// TakeRefresh says, once, that the authors to listen to may have changed
// (the reader followed or unfollowed someone, or the celebrities changed):
// the caller then calls Hub.Update.
func (l *Listener) TakeRefresh() bool { return l.refresh.Swap(false) }
