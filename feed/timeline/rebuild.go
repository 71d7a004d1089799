package timeline

import (
	"context"
	"feedservice/feed/pull"
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
	return redisx.EnsureOnceBy(ctx, ib.d.Redis, func() (bool, error) { return ib.whole(ctx, reader) }, ib.d.Keys.RebuildLock(reader), func(token string, locked time.Time) error {
		return ib.rebuild(ctx, reader, token, locked)
	})
}

// whole reports whether reader's inbox exists with its floor marker: a key
// without it is what the fan-out wrote after the inbox went (see Deliver),
// and is rebuilt as a missing one.
func (ib *Inboxes) whole(ctx context.Context, reader int64) (bool, error) {
	n, err := ib.d.Redis.ZCount(ctx, ib.d.Keys.Inbox(reader), "-1", "-1").Result()
	return n > 0, err
}

// rebuild pulls the reader's newest InboxCap entries from MySQL, with
// their sources, and swaps them in as the inbox. MySQL may be a replica
// that holds every commit from before locked, when the lock was taken.
func (ib *Inboxes) rebuild(ctx context.Context, reader int64, token string, locked time.Time) error {
	defer ib.d.Redis.Del(context.WithoutCancel(ctx), ib.d.Keys.RebuildLock(reader)) // after a failure; the swap deletes it on success
	// A followee set that outlived its inbox goes before MySQL is read: a
	// follow committed after that read finds no set and the lock, waits for
	// the swap and lands on the set swapped in, where it would otherwise
	// land on the old set and be lost by the swap.
	if err := ib.d.Redis.Del(ctx, ib.d.Keys.Following(reader), ib.d.Keys.FollowingVersion(reader)).Err(); err != nil {
		return err
	}
	// The fan-out writes to the readers the index of active inboxes names:
	// from here on, to this one, into the key the rebuilt inbox replaces,
	// whose entries the swap keeps. So a post committed after MySQL is
	// read below reaches the rebuilt inbox.
	if err := ib.activate(ctx, reader); err != nil {
		return err
	}
	mysql := ib.rep.AllowLagSince(ctx, locked, reader)
	followees, hidden, err := ib.d.Store.FeedView(mysql, reader)
	if err != nil {
		return err
	}
	view := pull.NewView(followees, hidden)
	entries, late, err := ib.pull.Newest(mysql, view, ib.d.Cfg.InboxCap)
	if err != nil {
		return err
	}
	var floor int64
	if len(entries) == ib.d.Cfg.InboxCap {
		floor = entries[len(entries)-1].Key
	}
	sources, err := ib.entrySources(mysql, view, entries)
	if err != nil {
		return err
	}
	// An entry whose first arrival lies below the floor, with later ones
	// above it, is held at those, as the fan-out would have left it: MySQL
	// does not serve it above the floor, and when its first arrival goes
	// (deleted, or its reposter unfollowed) the entry moves up to the
	// next, which only the inbox can show. Reads place it exactly
	// (see exactPositions), as any entry older than the window.
	place := map[int64]int64{}
	for _, l := range late {
		place[l.PostID] = l.Event // passed newest first: the last is the earliest
		sources[l.PostID] = append(sources[l.PostID], Source{User: l.User, Event: l.Event})
	}
	for id, key := range place {
		entries = append(entries, pull.Entry{Key: key, PostID: id})
	}
	tmp, tmpSrc, tmpFollowing := ib.d.Keys.InboxTemp(reader), ib.d.Keys.InboxSourcesTemp(reader), ib.d.Keys.FollowingTemp(reader)
	pipe := ib.d.Redis.TxPipeline()
	pipe.Del(ctx, tmp, tmpSrc, tmpFollowing)
	pipe.SAdd(ctx, tmpFollowing, followingMembers(followees, hidden)...)
	members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", floor)}}
	for _, en := range entries {
		members = append(members, redis.Z{Score: float64(en.Key), Member: en.PostID})
	}
	pipe.ZAdd(ctx, tmp, members...)
	keyOf := make(map[int64]int64, len(entries))
	for _, en := range entries {
		keyOf[en.PostID] = en.Key
	}
	for id, list := range sources {
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

// entrySources lists the sources of the entries that did not come from
// their author alone: the followed author at the post's id, and each
// live repost by a followee the view counts through.
func (ib *Inboxes) entrySources(ctx context.Context, view pull.View, entries []pull.Entry) (map[int64][]Source, error) {
	out := map[int64][]Source{}
	if len(entries) == 0 {
		return out, nil
	}
	ids := make([]int64, len(entries))
	for i, en := range entries {
		ids[i] = en.PostID
	}
	reposts, err := ib.d.Store.Reposts(ctx, view.Followees, ids)
	if err != nil || len(reposts) == 0 {
		return out, err
	}
	originals, err := ib.cache.StoredPosts(ctx, ids)
	if err != nil {
		return nil, err
	}
	// Only reposted entries need their sources written down: an entry its
	// author alone brought has none (the author is implied).
	for _, r := range reposts {
		out[*r.RepostOfID] = append(out[*r.RepostOfID], Source{User: r.AuthorID, Event: r.ID})
	}
	for _, o := range originals {
		if o != nil && view.Counts(o.AuthorID) && out[o.ID] != nil {
			out[o.ID] = append(out[o.ID], Source{User: o.AuthorID, Event: o.ID})
		}
	}
	return out, nil
}
