package feed

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
	"feedservice/store"
)

// rebuildLockTTL bounds a rebuild: a crashed rebuilder frees the lock then.
const rebuildLockTTL = 10 * time.Second

// ensureInbox makes sure the reader has an inbox. A missing one is rebuilt
// from MySQL into temporary keys and swapped in atomically, so no reader
// sees half a feed; concurrent callers, on any instance, wait for the one
// rebuild. It reports whether this call rebuilt it.
func (e *Engine) ensureInbox(ctx context.Context, reader int64) (bool, error) {
	lock := e.keys.RebuildLock(reader)
	for {
		n, err := e.redis.Exists(ctx, e.keys.Inbox(reader)).Result()
		if err != nil || n == 1 {
			return false, err
		}
		token, locked := redisx.NewToken(), time.Now()
		got, err := e.redis.SetNX(ctx, lock, token, rebuildLockTTL).Result()
		if err != nil {
			return false, err
		}
		if got {
			// Someone may have swapped a rebuilt inbox in between our check
			// and our lock: then there is nothing to do.
			if n, err := e.redis.Exists(ctx, e.keys.Inbox(reader)).Result(); err != nil || n == 1 {
				e.redis.Del(ctx, lock)
				return false, err
			}
			return true, e.rebuildInbox(ctx, reader, token, locked)
		}
		if err := redisx.WaitForUnlock(ctx, e.redis, lock, rebuildLockTTL, 5*time.Millisecond); err != nil {
			return false, err
		}
	}
}

// waitForUnlock polls until lock is gone, within rebuildLockTTL.
func (e *Engine) waitForUnlock(ctx context.Context, lock string) error {
	deadline := time.Now().Add(rebuildLockTTL)
	for time.Now().Before(deadline) {
		n, err := e.redis.Exists(ctx, lock).Result()
		if err != nil || n == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return redisx.ErrLockTimeout
}

// rebuildInbox pulls the reader's newest InboxCap entries from MySQL, with
// their sources, and swaps them in as the inbox. MySQL may be a replica
// that holds every commit from before locked, when the lock was taken.
func (e *Engine) rebuildInbox(ctx context.Context, reader int64, token string, locked time.Time) error {
	defer e.redis.Del(context.WithoutCancel(ctx), e.keys.RebuildLock(reader)) // after a failure; the swap deletes it on success
	// A followee set that outlived its inbox goes before MySQL is read: a
	// follow committed after that read finds no set and the lock, waits for
	// the swap and lands on the set swapped in, where it would otherwise
	// land on the old set and be lost by the swap.
	if err := e.redis.Del(ctx, e.keys.Following(reader), e.keys.FollowingVersion(reader)).Err(); err != nil {
		return err
	}
	mysql := e.rep.LaggingSince(ctx, locked, reader)
	followees, err := e.store.FolloweeIDs(mysql, reader)
	if err != nil {
		return err
	}
	entries, err := e.pullEntries(mysql, followees, store.Older, math.MaxInt64, e.cfg.InboxCap)
	if err != nil {
		return err
	}
	var floor int64
	if len(entries) == e.cfg.InboxCap {
		floor = entries[len(entries)-1].Key
	}
	sources, err := e.entrySources(mysql, followees, entries)
	if err != nil {
		return err
	}
	tmp, tmpSrc, tmpFollowing := e.keys.InboxTemp(reader), e.keys.InboxSourcesTemp(reader), e.keys.FollowingTemp(reader)
	pipe := e.redis.TxPipeline()
	pipe.Del(ctx, tmp, tmpSrc, tmpFollowing)
	pipe.SAdd(ctx, tmpFollowing, followingMembers(followees)...)
	members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", floor)}}
	for _, en := range entries {
		members = append(members, redis.Z{Score: float64(en.Key), Member: en.PostID})
	}
	pipe.ZAdd(ctx, tmp, members...)
	for id, list := range sources {
		pipe.HSet(ctx, tmpSrc, id, formatSources(list))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	keys := []string{tmp, tmpSrc, e.keys.Inbox(reader), e.keys.InboxSources(reader), e.keys.RebuildLock(reader),
		tmpFollowing, e.keys.Following(reader), e.keys.FollowingVersion(reader)}
	if err := swapInboxScript.Run(ctx, e.redis, keys, token, e.cfg.InboxTTL.Milliseconds(), redisx.NewToken()).Err(); err != nil {
		return err
	}
	e.metrics.Rebuilds.Inc()
	return nil
}

// entrySources lists the sources of the entries that did not come from
// their author alone: the followed author at the post's id, and each
// followee's live repost.
func (e *Engine) entrySources(ctx context.Context, followees []int64, entries []entry) (map[int64][]source, error) {
	out := map[int64][]source{}
	if len(entries) == 0 {
		return out, nil
	}
	ids := make([]int64, len(entries))
	for i, en := range entries {
		ids[i] = en.PostID
	}
	reposts, err := e.store.Reposts(ctx, followees, ids)
	if err != nil || len(reposts) == 0 {
		return out, err
	}
	originals, err := e.cache.StoredPosts(ctx, ids)
	if err != nil {
		return nil, err
	}
	followed := make(map[int64]bool, len(followees))
	for _, id := range followees {
		followed[id] = true
	}
	// Only reposted entries need their sources written down: an entry its
	// author alone brought has none (the author is implied).
	for _, r := range reposts {
		out[*r.RepostOfID] = append(out[*r.RepostOfID], source{User: r.AuthorID, Event: r.ID})
	}
	for _, o := range originals {
		if o != nil && followed[o.AuthorID] && out[o.ID] != nil {
			out[o.ID] = append(out[o.ID], source{User: o.AuthorID, Event: o.ID})
		}
	}
	return out, nil
}
