// Package pull reads home feeds from MySQL alone (fan-in at read time): the
// whole feed in pull mode, and below the window the inboxes hold in the
// other modes.
package pull

import (
	"context"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/store"
)

// Entry is one home-feed Entry: an original post at the place it first
// entered the feed.
type Entry struct {
	Key       int64   // sort key: the id of the post or repost that brought it first
	PostID    int64   // the original post
	Reposters []int64 // followees who reposted it, most recent first; nil: not known yet
}

// Feeds reads feed entries from MySQL.
type Feeds struct {
	d     *deps.Deps
	cache *cache.Tiers
}

// New reads through d's store, and the posts it checks through c.
func New(d *deps.Deps, c *cache.Tiers) *Feeds { return &Feeds{d: d, cache: c} }

// The pull scan reads followees' posts in id order in batches that grow
// from pullBatchMin (at least twice the page) up to pullBatchMax.
const (
	pullBatchMin = 32
	pullBatchMax = 2000
)

// Entries computes feed entries beyond bound from MySQL alone (fan-in at
// read time). An original post's place is its earliest arrival: the post
// itself when a followee wrote it, else the first live repost by a
// followee. Scanning followees' posts in order and keeping each event that
// is its original's first arrival yields entries in order, each once.
func (f *Feeds) Entries(ctx context.Context, followees []int64, dir store.Direction, bound int64, limit int) ([]Entry, error) {
	var out []Entry
	if len(followees) == 0 || limit <= 0 {
		return out, nil
	}
	followed := make(map[int64]bool, len(followees))
	for _, id := range followees {
		followed[id] = true
	}
	batch := max(2*limit, pullBatchMin)
	for {
		events, err := f.d.Store.FeedEvents(ctx, followees, dir, bound, batch)
		if err != nil {
			return nil, err
		}
		firsts, err := f.firstArrivals(ctx, followees, followed, events)
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			if ev.RepostOfID == nil || firsts[*ev.RepostOfID] == ev.ID {
				out = append(out, Entry{Key: ev.ID, PostID: ev.OriginalID()})
				if len(out) == limit {
					return out, nil
				}
			}
		}
		if len(events) < batch {
			return out, nil
		}
		bound = events[len(events)-1].ID
		batch = min(2*batch, pullBatchMax)
	}
}

// firstArrivals maps each original reposted in events to the id of its
// first repost by a followee, for originals that are live and whose author
// is not followed (a followed author's post arrives first by itself).
func (f *Feeds) firstArrivals(ctx context.Context, followees []int64, followed map[int64]bool, events []store.FeedEvent) (map[int64]int64, error) {
	var reposted []int64
	for _, ev := range events {
		if ev.RepostOfID != nil {
			reposted = append(reposted, *ev.RepostOfID)
		}
	}
	if len(reposted) == 0 {
		return nil, nil
	}
	originals, err := f.cache.Posts(ctx, reposted)
	if err != nil {
		return nil, err
	}
	var candidates []int64
	for _, o := range originals {
		if o != nil && !o.Deleted() && !followed[o.AuthorID] {
			candidates = append(candidates, o.ID)
		}
	}
	return f.d.Store.FirstReposts(ctx, followees, candidates)
}

// AddReposters fills in the reposters of the entries that lack them: the
// followees who reposted each, most recent first, at most MaxReposters.
// With followees nil, MySQL finds the viewer's followees itself.
func (f *Feeds) AddReposters(ctx context.Context, viewerID int64, followees []int64, entries []Entry) error {
	var ids []int64
	for _, en := range entries {
		if en.Reposters == nil {
			ids = append(ids, en.PostID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var reposts []store.FeedEvent
	var err error
	if followees == nil {
		reposts, err = f.d.Store.RepostsByFollowees(ctx, viewerID, ids)
	} else {
		reposts, err = f.d.Store.Reposts(ctx, followees, ids)
	}
	if err != nil {
		return err
	}
	by := map[int64][]int64{}
	for _, r := range reposts {
		if o := *r.RepostOfID; len(by[o]) < config.MaxReposters {
			by[o] = append(by[o], r.AuthorID)
		}
	}
	for i := range entries {
		if entries[i].Reposters == nil {
			entries[i].Reposters = by[entries[i].PostID]
		}
	}
	return nil
}
