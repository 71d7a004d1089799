package feed

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// The hub is this instance's one Redis pub/sub connection. It subscribes to
// the channels of the readers with a live subscription here (their own
// channel, and the channels of the authors they follow whose posts are not
// fanned out), reference-counted: the last listener of a channel gone, the
// channel is unsubscribed. It only hands messages on, never waiting on a
// client: a listener's wake-up is a flag and its queue of new entries is
// bounded (a full queue drops, and the client catches up by paging), so one
// slow client neither blocks the others nor makes Redis drop this
// connection for a full output buffer. go-redis reconnects a dropped
// connection and subscribes again; each confirmation wakes the channel's
// listeners, which then send their current counts.
type hub struct {
	e  *Engine
	ps *redis.PubSub

	mu   sync.Mutex
	subs map[string]map[*listener]struct{}
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
	ps := e.redis.Subscribe(ctx, e.keys.celebritiesChannel(), e.keys.cacheInvalidateChannel())
	return &hub{e: e, ps: ps, subs: map[string]map[*listener]struct{}{}}
}

// run hands messages to listeners until ctx ends.
func (h *hub) run(ctx context.Context) {
	defer h.ps.Close()
	ch := h.ps.ChannelWithSubscriptions(redis.WithChannelSize(4096))
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
				if m.Channel == h.e.keys.cacheInvalidateChannel() {
					if m.Kind == "subscribe" {
						h.e.onInvalidationsResubscribed()
					}
					continue
				}
				if m.Kind == "subscribe" {
					h.deliver(m.Channel, "change") // (re)subscribed: send current counts
				}
			case *redis.Message:
				if m.Channel == h.e.keys.cacheInvalidateChannel() {
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
	refresh := verb == "follow" || verb == "unfollow" || channel == h.e.keys.celebritiesChannel()
	h.mu.Lock()
	defer h.mu.Unlock()
	targets := h.subs[channel]
	if channel == h.e.keys.celebritiesChannel() {
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
	want := []string{h.e.keys.readerChannel(l.reader)}
	for _, a := range authors {
		want = append(want, h.e.keys.authorChannel(a))
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
	if len(unsubscribe) > 0 {
		h.ps.Unsubscribe(ctx, unsubscribe...)
	}
	if len(subscribe) > 0 {
		return h.ps.Subscribe(ctx, subscribe...)
	}
	return nil
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
	if len(unsubscribe) > 0 {
		h.ps.Unsubscribe(context.Background(), unsubscribe...)
	}
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

// channels is how many channels the hub is subscribed to, for tests.
func (h *hub) channels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// isReaderChannel tells a reader's channel from an author's.
func isReaderChannel(k keys, channel string) bool {
	return strings.HasPrefix(channel, k.prefix+"dots:")
}
