package live

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
)

// The index of connected readers (keyspace.Keys.ConnectedReaders) names
// the readers who have a live subscription open on some instance, so that
// the fan-out of a new entry writes their inboxes first and their red dots
// do not wait for the inboxes of readers who will only see the entry on
// their next page. It is a hint for the order of the writes, never for
// who gets an entry: a reader missing from it, or named after they left,
// gets the same entries, only in a later or an earlier batch.
//
// The hub adds a reader when a listener of theirs opens here, removes them
// when their last listener here closes, and raises the entries of all its
// readers every ConnectedRefreshEvery, in one pipeline. An instance that
// dies leaves its readers' entries to lapse after ConnectedValidity. A
// reader connected on two instances who leaves one is missing from the
// index until the other's next refresh; so is one whose last listener
// closed while a new one opened, if the removal reached Redis last.
const (
	// ConnectedValidity is how long an entry of the index holds after it
	// was written.
	ConnectedValidity = time.Minute
	// ConnectedRefreshEvery is how often the hub writes the entries of
	// all its readers again: a quarter of ConnectedValidity, so that an
	// entry of a reader still connected outlives three failed refreshes.
	ConnectedRefreshEvery = ConnectedValidity / 4
)

// keepConnected refreshes the index of connected readers every
// ConnectedRefreshEvery until ctx ends.
func (h *Hub) keepConnected(ctx context.Context) {
	tick := time.NewTicker(ConnectedRefreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := h.refreshConnected(ctx); err != nil && ctx.Err() == nil {
			h.d.WarnRedis("refresh the index of connected readers", err)
		}
	}
}

// refreshConnected writes every reader with a listener here into the
// index of connected readers again, valid ConnectedValidity from now, and
// prunes the entries past their time from the shards it writes.
func (h *Hub) refreshConnected(ctx context.Context) error {
	readers := h.listenedReaders()
	h.d.Metrics.LiveReaders.Set(float64(len(readers)))
	return h.markConnected(ctx, readers, true)
}

// listenedReaders are the readers with a listener here.
func (h *Hub) listenedReaders() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int64
	for c, ls := range h.subs {
		if !isReaderChannel(h.d.Keys, c) {
			continue
		}
		for l := range ls {
			out = append(out, l.reader)
			break
		}
	}
	return out
}

// markConnected writes readers into the index of connected readers, valid
// ConnectedValidity from now, in one pipeline: per shard a ZADD GT of its
// readers and a PEXPIRE, and with prune first the removal of the members
// past their time.
func (h *Hub) markConnected(ctx context.Context, readers []int64, prune bool) error {
	if len(readers) == 0 {
		return nil
	}
	now := time.Now()
	until := float64(now.Add(ConnectedValidity).UnixMilli())
	var byShard [keyspace.ConnectedReaderShards][]redis.Z
	for _, r := range readers {
		s := keyspace.ConnectedReaderShard(r)
		byShard[s] = append(byShard[s], redis.Z{Score: until, Member: strconv.FormatInt(r, 10)})
	}
	pipe := h.d.Redis.Pipeline()
	for s, members := range byShard {
		if len(members) == 0 {
			continue
		}
		key := h.d.Keys.ConnectedReaders(s)
		if prune {
			pipe.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now.UnixMilli(), 10))
		}
		pipe.ZAddGT(ctx, key, members...)
		pipe.PExpire(ctx, key, ConnectedValidity)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// connect adds reader, whose listener just opened here, to the index of
// connected readers. A failure is only logged: the index orders the
// fan-out's writes, and the next refresh tries again.
func (h *Hub) connect(ctx context.Context, reader int64) {
	if err := h.markConnected(ctx, []int64{reader}, false); err != nil && ctx.Err() == nil {
		h.d.WarnRedis("add a reader to the index of connected readers", err)
	}
}

// disconnect removes reader, whose last listener here closed, from the
// index of connected readers, unless a listener of theirs opened here
// meanwhile.
func (h *Hub) disconnect(reader int64) {
	channel := h.d.Keys.ReaderChannel(reader)
	h.mu.Lock()
	_, listened := h.subs[channel]
	h.mu.Unlock()
	if listened {
		return
	}
	key := h.d.Keys.ConnectedReaders(keyspace.ConnectedReaderShard(reader))
	if err := h.d.Redis.ZRem(h.ctx, key, strconv.FormatInt(reader, 10)).Err(); err != nil && h.ctx.Err() == nil {
		h.d.WarnRedis("remove a reader from the index of connected readers", err)
	}
}
