package live

import (
	"context"
	"log/slog"
	"strconv"
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
// Redis Cluster a reader's or author's channel is sharded (see Hub).
func (p *Publisher) Publish(ctx context.Context, channel, message string) {
	var err error
	if p.sharded(channel) {
		err = p.rdb.SPublish(ctx, channel, message).Err()
	} else {
		err = p.rdb.Publish(ctx, channel, message).Err()
	}
	if err != nil && ctx.Err() == nil {
		p.log.WarnContext(ctx, "publish", "channel", channel, "err", err)
	}
}

// sharded reports whether channel is a sharded one: on a Redis Cluster,
// every channel but the broadcast ones.
func (p *Publisher) sharded(channel string) bool {
	k := p.keys
	return redisx.OnCluster(p.rdb) && channel != k.CelebritiesChannel() && channel != k.CacheInvalidateChannel() &&
		channel != k.InboxesChannel()
}

// AnnounceAdded tells the listeners of readers, on every instance, that
// entry add entered their inboxes: one message on the inboxes channel
// (see keyspace.Keys.InboxesChannel).
func (p *Publisher) AnnounceAdded(ctx context.Context, add Add, readers []int64) {
	p.Publish(ctx, p.keys.InboxesChannel(), inboxesMessage(AddMessage(add.Post, add.Key), readers))
}

// AnnounceChanged tells the listeners of readers, on every instance, that
// an entry of their inboxes moved or left.
func (p *Publisher) AnnounceChanged(ctx context.Context, readers []int64) {
	p.Publish(ctx, p.keys.InboxesChannel(), inboxesMessage("change", readers))
}

// inboxesMessage is a reader channel's message followed by the readers it
// is for.
func inboxesMessage(message string, readers []int64) string {
	b := make([]byte, 0, len(message)+len(readers)*17)
	b = append(b, message...)
	for _, r := range readers {
		b = append(b, ' ')
		b = strconv.AppendInt(b, r, 10)
	}
	return string(b)
}

// AddMessage is the message of an entry that entered a feed: "add <post> <key>".
func AddMessage(post, key int64) string {
	return "add " + strconv.FormatInt(post, 10) + " " + strconv.FormatInt(key, 10)
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
