package timeline

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/feed/livemsg"
)

// The common case of the fan-out, a new post reaching the inboxes of its
// author's active readers, is plain pipelined commands, two per reader and
// no script: on Redis 7 a script call costs about 3.5 µs and each call in
// it about 2 µs more, where a whole pipelined ZADD costs about 3 µs. The
// inbox's rules hold by construction instead of by a check per entry:
//
//   - Existence. The readers written to are those the index of active
//     inboxes (keyspace.Keys.ActiveInboxes) names, read with one ZMSCORE per
//     shard for a whole batch, and only for the readers this instance has
//     no time ahead for (see ActiveAmong). Its score never falls below the inbox's
//     expiry (a rebuild and a TTL refresh raise it first), so no live
//     inbox is skipped; and an inbox whose reader Redis dropped from the
//     index (while it kept the inbox) is taken for missing by the next
//     read (see indexed). An inbox that went before its score (a reset, an
//     eviction) takes a ZADD that makes a key without the floor marker:
//     every read and script takes such a key for absent, the read rebuilds
//     the inbox atomically (keeping what the fan-out wrote meanwhile: see
//     swapInboxScript), and EXPIRE NX makes the key expire.
//   - The floor. Reads clip at the floor, so an entry below it is never
//     shown from the inbox and need not be refused here.
//   - Hidden users. The caller leaves out the readers who hide the post's
//     author (from MySQL, once a batch), before the pipeline.
//   - Idempotence. ZADD NX. An entry that was there (a re-delivery, or the
//     post came first by a repost) takes the rare path, addSourceScript,
//     which records the author's arrival (the entry moves to it) or finds
//     it recorded; either is announced as a change (a count recounts).
//   - The cap. Trimming is amortised: see InboxTrimEvery.
//
// Reposts, which may merge sources into an entry, keep addSourceScript.

// InboxTrimEvery sets how often the fan-out trims an inbox: on the
// deliveries whose hash of reader and post is 0 modulo InboxTrimEvery,
// one in InboxTrimEvery on average, it cuts the inbox back to InboxCap
// entries with a ZREMRANGEBYRANK and leaves trimFlag for the next script
// or read to raise the floor. Between two such deliveries an inbox grows by
// one entry a delivery: past InboxCap+MaxInboxOvershoot only after
// MaxInboxOvershoot deliveries in a row none of which trims, a chance of
// (1-1/InboxTrimEvery)^MaxInboxOvershoot (about 1e-7). A trim costs two
// more calls, 2/InboxTrimEvery a delivery. An engine's own
// (deps.Deps.InboxTrimEvery), when set, takes its place: tests lower it to
// make trims frequent.
const InboxTrimEvery = 64

// trimEvery is InboxTrimEvery, or the engine's own when set.
func (ib *Inboxes) trimEvery() uint64 {
	if ib.d.InboxTrimEvery > 0 {
		return ib.d.InboxTrimEvery
	}
	return InboxTrimEvery
}

// MaxInboxOvershoot is the stated bound of an inbox past InboxCap between
// two trims (see InboxTrimEvery).
const MaxInboxOvershoot = 1024

// activeMargin is added to a reader's score in the index of active inboxes
// beyond the TTL their inbox is given, so that clocks a little apart never
// put the score below the inbox's expiry.
const activeMargin = time.Minute

// activeUntilEntries bounds the readers whose time in the index of active
// inboxes an instance keeps (about 64 bytes each).
const activeUntilEntries = 1 << 18

// activePruneEvery is how often an instance removes the readers past their
// time from a shard of the index of active inboxes.
const activePruneEvery = time.Minute

// trimDue reports whether delivering post to reader trims the inbox, one
// delivery in every (InboxTrimEvery in production).
func trimDue(reader, post int64, every uint64) bool {
	x := uint64(reader)*0x9E3779B97F4A7C15 ^ uint64(post)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x%every == 0
}

// activate raises reader's score in the index of active inboxes to a
// little past InboxTTL from now. A rebuild calls it before it reads MySQL,
// a read before it refreshes the TTL.
func (ib *Inboxes) activate(ctx context.Context, reader int64) error {
	until := time.Now().Add(ib.d.Cfg.InboxTTL + activeMargin).UnixMilli()
	key := ib.d.Keys.ActiveInboxes(keyspace.ActiveInboxShard(reader))
	return ib.d.Redis.ZAddGT(ctx, key, redis.Z{Score: float64(until), Member: strconv.FormatInt(reader, 10)}).Err()
}

// ActiveAmong returns those of readers whom the index of active inboxes
// names as having an inbox now, in their order. The index only ever raises
// a reader's score (ZADD GT; what is pruned has passed), so a time this
// instance read before and that is still ahead is the index's answer too:
// only the readers without one are asked, with one ZMSCORE per shard in one
// round trip. (Its answers are scores written out as text, most of what
// the index costs Redis.)
func (ib *Inboxes) ActiveAmong(ctx context.Context, readers []int64) ([]int64, error) {
	if len(readers) == 0 {
		return nil, nil
	}
	now := time.Now()
	nowMs := now.UnixMilli()
	known := func(r int64) bool {
		if ib.activeUntil == nil {
			return false
		}
		until, ok := ib.activeUntil.GetIfPresent(r)
		return ok && until > nowMs
	}
	var byShard [keyspace.ActiveInboxShards][]string
	asked := 0
	for _, r := range readers {
		if known(r) {
			continue
		}
		s := keyspace.ActiveInboxShard(r)
		byShard[s] = append(byShard[s], strconv.FormatInt(r, 10))
		asked++
	}
	if asked == 0 {
		return readers, nil
	}
	pipe := ib.d.Redis.Pipeline()
	var cmds [keyspace.ActiveInboxShards]*redis.FloatSliceCmd
	for s, members := range byShard {
		if len(members) == 0 {
			continue
		}
		key := ib.d.Keys.ActiveInboxes(s)
		cmds[s] = pipe.ZMScore(ctx, key, members...)
		if last := ib.pruned[s].Load(); now.UnixNano()-last > int64(activePruneEvery) && ib.pruned[s].CompareAndSwap(last, now.UnixNano()) {
			pipe.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now.UnixMilli(), 10))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	active := make(map[int64]bool, asked)
	for s, members := range byShard {
		if cmds[s] == nil {
			continue
		}
		for i, v := range cmds[s].Val() {
			if until := int64(v); until > nowMs {
				id, _ := strconv.ParseInt(members[i], 10, 64)
				active[id] = true
				if ib.activeUntil != nil {
					ib.activeUntil.Set(id, until)
				}
			}
		}
	}
	out := make([]int64, 0, len(readers))
	for _, r := range readers {
		if active[r] || known(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Deliver adds author's new post, keyed by its own id, to the inboxes of
// those of readers the index of active inboxes names, with plain
// pipelined commands, and announces the readers it entered for (see the
// rules above). The caller has left out the readers who do not follow the
// author or hide them. It returns how many inboxes took the entry.
func (ib *Inboxes) Deliver(ctx context.Context, post, author int64, readers []int64) (int, error) {
	active, err := ib.ActiveAmong(ctx, readers)
	if err != nil {
		return 0, err
	}
	delivered := 0
	for len(active) > 0 {
		n := min(len(active), inboxPipelineSize)
		got, err := ib.deliverRound(ctx, post, author, active[:n])
		delivered += got
		if err != nil {
			return delivered, err
		}
		active = active[n:]
	}
	return delivered, nil
}

// deliverRound is one round trip of Deliver.
func (ib *Inboxes) deliverRound(ctx context.Context, post, author int64, readers []int64) (int, error) {
	cfg := ib.d.Cfg
	entry := redis.Z{Score: float64(post), Member: strconv.FormatInt(post, 10)}
	pipe := ib.d.Redis.Pipeline()
	adds := make([]*redis.IntCmd, len(readers))
	for i, r := range readers {
		inbox := ib.d.Keys.Inbox(r)
		trim := trimDue(r, post, ib.trimEvery())
		if trim {
			pipe.ZAddNX(ctx, inbox, redis.Z{Score: -2, Member: trimFlag})
		}
		adds[i] = pipe.ZAddNX(ctx, inbox, entry)
		if trim {
			// Ranks 0 and 1 are the flag and the floor marker.
			pipe.ZRemRangeByRank(ctx, inbox, 2, -int64(cfg.InboxCap)-1)
		}
		pipe.ExpireNX(ctx, inbox, cfg.InboxTTL)
	}
	_, failed := pipe.Exec(ctx)
	var added []int64
	var there []Change
	for i, r := range readers {
		n, err := adds[i].Result()
		switch {
		case err != nil:
		case n == 1:
			added = append(added, r)
		default:
			there = append(there, AddSource(r, post, author, Source{User: author, Event: post}, cfg.InboxCap))
		}
	}
	if len(added) > 0 {
		ib.announce(ctx, announced{added: map[livemsg.Add][]int64{{Post: post, Key: post}: added}})
	}
	if failed != nil {
		return len(added), failed
	}
	merged, err := ib.Apply(ctx, there)
	return len(added) + merged, err
}
