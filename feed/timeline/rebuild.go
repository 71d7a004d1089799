package timeline

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
)

// Ensure makes sure the reader has an inbox. A missing one is rebuilt
// from MySQL into temporary keys and swapped in atomically, so no reader
// sees half a feed; concurrent callers, on any instance, wait for the one
// rebuild. It reports whether this call rebuilt it.
func (ib *Inboxes) Ensure(ctx context.Context, reader int64) (bool, error) {
	_, rebuilt, err := ib.ensure(ctx, reader, false)
	return rebuilt, err
}

// ensureAnswering is Ensure for a read that can answer from what the
// rebuild reads: when this call rebuilds, it returns the rebuild's
// snapshot as soon as MySQL has answered, and swaps it in after, in the
// background (Wait waits for it); a read of the inbox meanwhile waits for
// the swap, as for any rebuild. It returns nil when the inbox was there or
// another caller rebuilt it.
func (ib *Inboxes) ensureAnswering(ctx context.Context, reader int64) (*snapshot, error) {
	snap, _, err := ib.ensure(ctx, reader, true)
	return snap, err
}

func (ib *Inboxes) ensure(ctx context.Context, reader int64, answering bool) (*snapshot, bool, error) {
	var snap *snapshot
	lock := ib.d.Keys.RebuildLock(reader)
	rebuilt, err := redisx.EnsureOnceBy(ctx, ib.d.Redis, func() (bool, error) { return ib.whole(ctx, reader) }, lock, func(token string, locked time.Time) error {
		s, err := ib.readSnapshot(ctx, reader, locked)
		if err != nil {
			ib.d.Redis.Del(context.WithoutCancel(ctx), lock)
			return err
		}
		if !answering {
			return ib.swapIn(ctx, reader, token, s)
		}
		snap = s
		ib.writes.Add(1)
		go func() {
			defer ib.writes.Done()
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisx.RebuildLockTTL)
			defer cancel()
			if err := ib.swapIn(wctx, reader, token, s); err != nil {
				// The inbox stays missing: the reader's next read rebuilds it.
				ib.d.WarnRedis("inbox rebuild: the write after the answer", err)
			}
		}()
		return nil
	})
	return snap, rebuilt, err
}

// Wait waits for the inbox writes that rebuilds left to the background
// (see ensureAnswering).
func (ib *Inboxes) Wait() { ib.writes.Wait() }

// whole reports whether reader's inbox exists with its floor marker: a key
// without it is what the fan-out wrote after the inbox went (see Deliver),
// and is rebuilt as a missing one.
func (ib *Inboxes) whole(ctx context.Context, reader int64) (bool, error) {
	n, err := ib.d.Redis.ZCount(ctx, ib.d.Keys.Inbox(reader), "-1", "-1").Result()
	return n > 0, err
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
