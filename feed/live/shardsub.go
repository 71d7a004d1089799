package live

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/deps"
	"feedservice/feed/livemsg"
	"feedservice/internal/slot"
)

// On a Redis Cluster the hub holds one connection per node for the sharded
// channels (readers' and authors'), whatever the number of slots they
// fall in: a node takes SSUBSCRIBE for channels of any of its slots on
// one connection, one command per slot. go-redis' own SSubscribe cannot
// do that (its PubSub dials the node of its first channel, and after a
// reconnect subscribes all of its channels in one SSUBSCRIBE, which Redis
// refuses across slots, CROSSSLOT), so the hub keeps each node's
// connection itself and never lets one reconnect: a connection that fails
// (the node died, a failover) is closed and its channels are grouped again
// by the slot map of then (regroup), each on the connection of its slot's
// master now. A channel whose slot left its node (the node became a
// replica, or the slot moved: Redis sends an unasked sunsubscribe, or
// answers SSUBSCRIBE with MOVED) goes the same way alone.

// nodeSub is the connection of the sharded channels on one node.
type nodeSub struct {
	addr     string
	ps       *redis.PubSub
	channels map[string]bool // guarded by Hub.subMu
	closed   atomic.Bool
}

// shardPingEvery is how long a node's connection may stay silent before
// the hub pings it; one silent for twice as long is taken for dead.
const shardPingEvery = 2 * time.Second

// regroupPause is how long the hub waits before it subscribes channels
// again after their node failed: about the time the cluster client takes
// to read the slot map again.
const regroupPause = 100 * time.Millisecond

// subscribeSharded subscribes channels (wanted ones; the caller holds
// h.subMu) on the connections of their slots' masters, one SSUBSCRIBE per
// slot.
func (h *Hub) subscribeSharded(ctx context.Context, channels []string) error {
	var first error
	for sl, group := range bySlot(channels) {
		node, err := h.cluster.MasterForKey(ctx, group[0])
		if err != nil {
			h.orphan(group)
			if first == nil {
				first = err
			}
			continue
		}
		addr := node.Options().Addr
		ns := h.nodes[addr]
		fresh := ns == nil
		if fresh {
			ns = &nodeSub{addr: addr, ps: node.SSubscribe(h.ctx), channels: map[string]bool{}}
			h.nodes[addr] = ns
		}
		for _, c := range group {
			ns.channels[c] = true
		}
		if err := ns.ps.SSubscribe(ctx, group...); err != nil {
			// Not sent (the node is away): the connection is dropped and
			// its channels grouped again.
			h.d.Log.DebugContext(ctx, "sharded subscribe", "node", addr, "slot", sl, "err", err) // retried; receiveNode warned
			h.dropNode(ns)
			if first == nil {
				first = err
			}
			continue
		}
		if fresh {
			go h.receiveNode(ns)
		}
	}
	return first
}

// unsubscribeSharded unsubscribes channels that no listener wants (the
// caller holds h.subMu); a node's connection closes with its last channel.
func (h *Hub) unsubscribeSharded(ctx context.Context, channels []string) {
	for _, group := range bySlot(channels) {
		for _, ns := range h.nodes {
			var here []string
			for _, c := range group {
				if ns.channels[c] {
					delete(ns.channels, c)
					here = append(here, c)
				}
			}
			if len(here) == 0 {
				continue
			}
			if len(ns.channels) == 0 {
				h.closeNode(ns)
				continue
			}
			ns.ps.SUnsubscribe(ctx, here...)
		}
		for _, c := range group {
			delete(h.orphans, c)
		}
	}
}

// receiveNode hands the messages of one node's connection to listeners
// until the hub ends or the connection is closed or fails.
func (h *Hub) receiveNode(ns *nodeSub) {
	pinged := false
	for {
		msg, err := ns.ps.ReceiveTimeout(h.ctx, shardPingEvery)
		if ns.closed.Load() || h.ctx.Err() != nil {
			return
		}
		if err != nil {
			var netErr net.Error
			switch {
			case errors.As(err, &netErr) && netErr.Timeout() && !pinged:
				pinged = true
				if ns.ps.Ping(h.ctx) == nil {
					continue
				}
			case redis.HasErrorPrefix(err, "MOVED"):
				// One slot's channels belong to another node now.
				h.movedSlot(ns, err)
				continue
			}
			h.d.Log.WarnContext(h.ctx, "sharded subscriptions lost their node; subscribing again", "node", ns.addr, "err", err)
			h.subMu.Lock()
			h.dropNode(ns)
			h.subMu.Unlock()
			return
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			switch m.Kind {
			case "ssubscribe":
				h.deliver(m.Channel, livemsg.Change()) // (re)subscribed: send current counts
			case "sunsubscribe":
				h.movedChannel(ns, m.Channel)
			}
		case *redis.Message:
			h.handle(m.Channel, m.Payload)
		}
	}
}

// movedChannel answers a sunsubscribe the hub did not ask for: the node
// stopped serving the channel's slot (a failover made it a replica, or the
// slot moved) and dropped its subscribers there.
func (h *Hub) movedChannel(ns *nodeSub, channel string) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	if h.nodes[ns.addr] != ns || !ns.channels[channel] {
		return // the hub's own unsubscribe, or an old connection's
	}
	h.leaveNode(ns, []string{channel})
}

// movedSlot answers MOVED to an SSUBSCRIBE: the channels of that slot
// were not subscribed on this node.
func (h *Hub) movedSlot(ns *nodeSub, err error) {
	f := strings.Fields(err.Error()) // MOVED <slot> <addr>
	if len(f) < 2 {
		return
	}
	sl, _ := strconv.Atoi(f[1])
	h.subMu.Lock()
	defer h.subMu.Unlock()
	if h.nodes[ns.addr] != ns {
		return
	}
	var gone []string
	for c := range ns.channels {
		if slot.Of(c) == sl {
			gone = append(gone, c)
		}
	}
	h.leaveNode(ns, gone)
}

// leaveNode takes channels off ns (not subscribed there any more) and has
// them subscribed again where their slot is now. The caller holds
// h.subMu.
func (h *Hub) leaveNode(ns *nodeSub, channels []string) {
	for _, c := range channels {
		delete(ns.channels, c)
	}
	if len(ns.channels) == 0 {
		h.closeNode(ns)
	}
	h.orphan(channels)
}

// dropNode closes a failed node's connection and has all of its channels
// subscribed again by the slot map of now. The caller holds h.subMu.
func (h *Hub) dropNode(ns *nodeSub) {
	if h.nodes[ns.addr] != ns {
		return
	}
	var channels []string
	for c := range ns.channels {
		channels = append(channels, c)
	}
	h.closeNode(ns)
	h.orphan(channels)
}

// closeNode closes ns and forgets it. The caller holds h.subMu.
func (h *Hub) closeNode(ns *nodeSub) {
	ns.closed.Store(true)
	ns.ps.Close()
	if h.nodes[ns.addr] == ns {
		delete(h.nodes, ns.addr)
	}
}

// orphan notes channels to subscribe again, and wakes regroup. The caller
// holds h.subMu.
func (h *Hub) orphan(channels []string) {
	if len(channels) == 0 {
		return
	}
	for _, c := range channels {
		h.orphans[c] = true
	}
	select {
	case h.regroupWake <- struct{}{}:
	default:
	}
}

// regroup subscribes the orphaned channels again, on the connections of
// their slots' masters by the cluster's slot map of then, until ctx ends.
// A channel that fails again is orphaned again and retried after another
// pause.
func (h *Hub) regroup(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.regroupWake:
		}
		h.cluster.ReloadState(ctx)
		deps.Pause(ctx, regroupPause)
		h.subMu.Lock()
		var channels []string
		for c := range h.orphans {
			channels = append(channels, c)
		}
		clear(h.orphans)
		if channels = h.wanted(channels, true); len(channels) > 0 {
			h.subscribeSharded(ctx, channels)
		}
		h.subMu.Unlock()
	}
}

// nodeConnections is how many sharded connections the hub holds.
func (h *Hub) nodeConnections() int {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	return len(h.nodes)
}
