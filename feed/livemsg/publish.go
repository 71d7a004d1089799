package livemsg

import (
	"context"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/redisx"
)

// Publisher publishes the messages of the channels the hubs listen to.
type Publisher struct {
	rdb  redis.UniversalClient
	keys keyspace.Keys
	log  *slog.Logger
}

// NewPublisher publishes through rdb on the channels keys names, logging
// what it could not publish to log.
func NewPublisher(rdb redis.UniversalClient, keys keyspace.Keys, log *slog.Logger) *Publisher {
	return &Publisher{rdb: rdb, keys: keys, log: log}
}

// Publish tells a channel's listeners, on every instance, of a change. A
// lost message costs a late red dot, never data: it is only logged. On a
// Redis Cluster a reader's or author's channel is sharded (see live.Hub).
func (p *Publisher) Publish(ctx context.Context, channel string, m Message) {
	if err := p.send(ctx, channel, m.Encode()); err != nil && ctx.Err() == nil {
		p.log.WarnContext(ctx, "publish", "channel", channel, "err", err)
	}
}

// Invalidate tells every instance, on the invalidate channel, to drop what
// i names (or, for a sync mark, that every message before it arrived).
func (p *Publisher) Invalidate(ctx context.Context, i Invalidation) error {
	return p.send(ctx, p.keys.CacheInvalidateChannel(), i.Encode())
}

// AnnounceAdded tells the listeners of readers, on every instance, that
// entry add entered their inboxes: one Batch on the inboxes channel (see
// keyspace.Keys.InboxesChannel).
func (p *Publisher) AnnounceAdded(ctx context.Context, add Add, readers []int64) {
	p.announce(ctx, Batch{Message: Added(add), Readers: readers})
}

// AnnounceChanged tells the listeners of readers, on every instance, that
// an entry of their inboxes moved or left.
func (p *Publisher) AnnounceChanged(ctx context.Context, readers []int64) {
	p.announce(ctx, Batch{Message: Change(), Readers: readers})
}

func (p *Publisher) announce(ctx context.Context, b Batch) {
	if len(b.Readers) == 0 {
		return
	}
	channel := p.keys.InboxesChannel()
	if err := p.send(ctx, channel, b.Encode()); err != nil && ctx.Err() == nil {
		p.log.WarnContext(ctx, "publish", "channel", channel, "err", err)
	}
}

// send publishes payload on channel: with SPUBLISH on a sharded channel.
func (p *Publisher) send(ctx context.Context, channel, payload string) error {
	if p.sharded(channel) {
		return p.rdb.SPublish(ctx, channel, payload).Err()
	}
	return p.rdb.Publish(ctx, channel, payload).Err()
}

// sharded reports whether channel is a sharded one: on a Redis Cluster,
// every channel but the broadcast ones.
func (p *Publisher) sharded(channel string) bool {
	k := p.keys
	return redisx.OnCluster(p.rdb) && channel != k.CelebritiesChannel() && channel != k.CacheInvalidateChannel() &&
		channel != k.InboxesChannel()
}

// Script is a Lua script whose redis.call('PUBLISH', ...) publish on a
// reader's channel, with its twin that does so with SPUBLISH, for a Redis
// Cluster. A script runs on the node of its keys' slot, which is the slot
// of the reader's channel too (both carry the reader's hash tag), as
// SPUBLISH in a script needs.
type Script struct{ plain, sharded *redis.Script }

// NewScript makes a publishing script of src.
func NewScript(src string) *Script {
	return &Script{
		plain:   redis.NewScript(src),
		sharded: redis.NewScript(strings.ReplaceAll(src, "redis.call('PUBLISH'", "redis.call('SPUBLISH'")),
	}
}

// For is the script as it runs on rdb: its sharded twin on a Redis Cluster.
func (s *Script) For(rdb redis.UniversalClient) *redis.Script {
	if redisx.OnCluster(rdb) {
		return s.sharded
	}
	return s.plain
}
