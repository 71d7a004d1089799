package timeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/redisx"
)

// Ensure makes sure the reader has an inbox. A missing one is rebuilt
// from MySQL into temporary keys and swapped in atomically, so no reader
// sees half a feed; concurrent callers, on any instance, wait for the one
// rebuild. It reports whether this call rebuilt it.
func (ib *Inboxes) Ensure(ctx context.Context, reader int64) (bool, error) {
	lock := ib.d.Keys.RebuildLock(reader)
	return redisx.EnsureOnceBy(ctx, ib.d.Redis, func() (bool, error) { return ib.whole(ctx, reader) }, lock, func(token string) error {
		s, err := ib.readSnapshot(ctx, reader)
		if err != nil {
			ib.d.Redis.Del(context.WithoutCancel(ctx), lock)
			return err
		}
		return ib.swapIn(ctx, reader, token, s)
	})
}

// A returning reader's page answers from a read of MySQL of the page's
// size (pageSnapshot), and their inbox is rebuilt after, in the
// background: at most Config.RebuildsRunning rebuilds at once on an
// instance, the others waiting their turn in order, up to
// MaxWaitingRebuilds. A burst of returning readers so gets its pages at
// the pace of those reads, and its inboxes as fast as the rebuilds that
// remain can go; a reader whose rebuild still waits reads MySQL again.

// MaxWaitingRebuilds bounds the rebuilds that wait for a slot on one
// instance (8 bytes and a map entry each). A rebuild that finds the line
// full is dropped (feed_inbox_rebuilds_dropped_total): the reader's next
// page asks again.
const MaxWaitingRebuilds = 10_000

// rebuildTimeout bounds one background rebuild (its MySQL read and its
// write); it is the rebuild lock's lifetime.
const rebuildTimeout = redisx.RebuildLockTTL

// rebuildLine is the background rebuilds of one instance: those waiting,
// in order, and how many run.
type rebuildLine struct {
	mu      sync.Mutex
	waiting []int64
	queued  map[int64]bool // waiting or running
	running int
	max     int // MaxWaitingRebuilds, lower in tests
}

// rebuildLater rebuilds reader's inbox in the background (Wait waits for
// it), unless it waits or runs already.
func (ib *Inboxes) rebuildLater(reader int64) {
	q := &ib.rebuilds
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.queued[reader]:
		return
	case len(q.waiting) >= q.max:
		ib.d.Metrics.RebuildsDropped.Inc()
		return
	}
	q.waiting = append(q.waiting, reader)
	q.queued[reader] = true
	ib.d.Metrics.RebuildsWaiting.Inc()
	if q.running < ib.d.Cfg.RebuildsRunning {
		q.running++
		ib.writes.Add(1)
		go ib.runRebuilds()
	}
}

// runRebuilds rebuilds the waiting inboxes, one after another, until none
// waits.
func (ib *Inboxes) runRebuilds() {
	defer ib.writes.Done()
	q := &ib.rebuilds
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		reader := q.waiting[0]
		q.waiting = q.waiting[1:]
		ib.d.Metrics.RebuildsWaiting.Dec()
		q.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), rebuildTimeout)
		if _, err := ib.Ensure(ctx, reader); err != nil {
			// The inbox stays missing: the reader's next page reads MySQL
			// and asks again.
			ib.d.WarnRedis("inbox rebuild after a returning reader's page", err)
		}
		cancel()
		q.mu.Lock()
		delete(q.queued, reader)
		q.mu.Unlock()
	}
}

// Stop drops the rebuilds still waiting (the readers' next pages ask
// again); those running finish.
func (ib *Inboxes) Stop() {
	q := &ib.rebuilds
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, reader := range q.waiting {
		delete(q.queued, reader)
	}
	ib.d.Metrics.RebuildsWaiting.Sub(float64(len(q.waiting)))
	q.waiting = nil
}

// Wait waits for the work that reads left to the background: the
// rebuilds of returning readers' inboxes, and the folds.
func (ib *Inboxes) Wait() { ib.writes.Wait() }

// whole reports whether reader's inbox exists with its floor marker, and
// its reader is in the index of active inboxes: a key without the marker is
// what the fan-out wrote after the inbox went (see Deliver), and an inbox
// whose reader the index lost is one the fan-out skips (see indexed); both
// are rebuilt as a missing one.
func (ib *Inboxes) whole(ctx context.Context, reader int64) (bool, error) {
	pipe := ib.d.Redis.Pipeline()
	floor := pipe.ZCount(ctx, ib.d.Keys.Inbox(reader), "-1", "-1")
	until := ib.queueIndexed(ctx, pipe, reader)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	return floor.Val() > 0 && indexed(until), nil
}

// queueIndexed queues, on pipe, the read of reader's time in the index of
// active inboxes (see indexed).
func (ib *Inboxes) queueIndexed(ctx context.Context, pipe redis.Pipeliner, reader int64) *redis.FloatCmd {
	return pipe.ZScore(ctx, ib.d.Keys.ActiveInboxes(keyspace.ActiveInboxShard(reader)), strconv.FormatInt(reader, 10))
}

// indexed says whether a reader's time in the index of active inboxes
// (queueIndexed's answer) is still ahead. The fan-out writes to the readers
// the index names, and a rebuild and a TTL refresh raise the time before
// the inbox's expiry, so a live inbox is always named; but Redis can lose
// the index's key and keep the inbox, on another node of a cluster (a
// failover that drops the last writes of one master, memory pressure, or
// a loss of everything that reaches the nodes one after another, as a
// rebuild swaps its inbox in). Such an inbox misses every post fanned out
// after: a read takes it for missing, answers from MySQL, and rebuilds it
// (the rebuild enters the reader in the index again).
func indexed(until *redis.FloatCmd) bool {
	return until.Err() == nil && int64(until.Val()) > time.Now().UnixMilli()
}

// swapIn writes the snapshot into temporary keys and swaps them in as the
// reader's inbox, its sources and their followee set, if the rebuild's
// lock is still token's.
func (ib *Inboxes) swapIn(ctx context.Context, reader int64, token string, sn *snapshot) error {
	defer ib.d.Redis.Del(context.WithoutCancel(ctx), ib.d.Keys.RebuildLock(reader)) // after a failure; the swap deletes it on success
	tmp, tmpSrc, tmpFollowing := ib.d.Keys.InboxTemp(reader), ib.d.Keys.InboxSourcesTemp(reader), ib.d.Keys.FollowingTemp(reader)
	pipe := ib.d.Redis.TxPipeline()
	pipe.Del(ctx, tmp, tmpSrc, tmpFollowing)
	pipe.SAdd(ctx, tmpFollowing, followingMembers(sn.followees, sn.hidden)...)
	members := make([]redis.Z, 0, len(sn.entries)+1)
	members = append(members, redis.Z{Score: -1, Member: fmt.Sprintf("~%d", sn.floor)})
	keyOf := make(map[int64]int64, len(sn.entries))
	for _, en := range sn.entries {
		members = append(members, redis.Z{Score: float64(en.Key), Member: en.PostID})
		keyOf[en.PostID] = en.Key
	}
	pipe.ZAdd(ctx, tmp, members...)
	for id, list := range sn.sources {
		pipe.HSet(ctx, tmpSrc, id, formatSources(list, keyOf[id]))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	keys := []string{tmp, tmpSrc, ib.d.Keys.Inbox(reader), ib.d.Keys.InboxSources(reader), ib.d.Keys.RebuildLock(reader),
		tmpFollowing, ib.d.Keys.Following(reader), ib.d.Keys.FollowingVersion(reader)}
	if err := swapInboxScript.Run(ctx, ib.d.Redis, keys, token, ib.d.Cfg.InboxTTL.Milliseconds(), redisx.NewToken()).Err(); err != nil {
		return err
	}
	ib.d.Metrics.Rebuilds.Inc()
	return nil
}
