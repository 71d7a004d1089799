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
func (x *Inboxes) Ensure(ctx context.Context, reader int64) (bool, error) {
	return redisx.EnsureOnce(ctx, x.d.Redis, x.d.Keys.Inbox(reader), x.d.Keys.RebuildLock(reader), func(token string, locked time.Time) error {
		return x.rebuild(ctx, reader, token, locked)
	})
}

// rebuild pulls the reader's newest InboxCap entries from MySQL, with
// their sources, and swaps them in as the inbox. MySQL may be a replica
// that holds every commit from before locked, when the lock was taken.
func (x *Inboxes) rebuild(ctx context.Context, reader int64, token string, locked time.Time) error {
	defer x.d.Redis.Del(context.WithoutCancel(ctx), x.d.Keys.RebuildLock(reader)) // after a failure; the swap deletes it on success
	// A followee set that outlived its inbox goes before MySQL is read: a
	// follow committed after that read finds no set and the lock, waits for
	// the swap and lands on the set swapped in, where it would otherwise
	// land on the old set and be lost by the swap.
	if err := x.d.Redis.Del(ctx, x.d.Keys.Following(reader), x.d.Keys.FollowingVersion(reader)).Err(); err != nil {
		return err
	}
	mysql := x.rep.AllowLagSince(ctx, locked, reader)
	followees, hidden, err := x.d.Store.FeedView(mysql, reader)
	if err != nil {
		return err
	}
	view := NewView(followees, hidden)
	entries, late, err := x.pull.Newest(mysql, view, x.d.Cfg.InboxCap)
	if err != nil {
		return err
	}
	var floor int64
	if len(entries) == x.d.Cfg.InboxCap {
		floor = entries[len(entries)-1].Key
	}
	sources, err := x.entrySources(mysql, view, entries)
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
		entries = append(entries, Entry{Key: key, PostID: id})
	}
	tmp, tmpSrc, tmpFollowing := x.d.Keys.InboxTemp(reader), x.d.Keys.InboxSourcesTemp(reader), x.d.Keys.FollowingTemp(reader)
	pipe := x.d.Redis.TxPipeline()
	pipe.Del(ctx, tmp, tmpSrc, tmpFollowing)
	pipe.SAdd(ctx, tmpFollowing, followingMembers(followees, hidden)...)
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
	keys := []string{tmp, tmpSrc, x.d.Keys.Inbox(reader), x.d.Keys.InboxSources(reader), x.d.Keys.RebuildLock(reader),
		tmpFollowing, x.d.Keys.Following(reader), x.d.Keys.FollowingVersion(reader)}
	if err := swapInboxScript.Run(ctx, x.d.Redis, keys, token, x.d.Cfg.InboxTTL.Milliseconds(), redisx.NewToken()).Err(); err != nil {
		return err
	}
	x.d.Metrics.Rebuilds.Inc()
	return nil
}

// entrySources lists the sources of the entries that did not come from
// their author alone: the followed author at the post's id, and each
// live repost by a followee the view counts through.
func (x *Inboxes) entrySources(ctx context.Context, view View, entries []Entry) (map[int64][]Source, error) {
	out := map[int64][]Source{}
	if len(entries) == 0 {
		return out, nil
	}
	ids := make([]int64, len(entries))
	for i, en := range entries {
		ids[i] = en.PostID
	}
	reposts, err := x.d.Store.Reposts(ctx, view.Followees, ids)
	if err != nil || len(reposts) == 0 {
		return out, err
	}
	originals, err := x.cache.StoredPosts(ctx, ids)
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
