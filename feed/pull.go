package feed

import (
	"context"

	"feedservice/feed/config"
	"feedservice/store"
)

// entry is one home-feed entry: an original post at the place it first
// entered the feed.
type entry struct {
	Key       int64   // sort key: the id of the post or repost that brought it first
	PostID    int64   // the original post
	Reposters []int64 // followees who reposted it, most recent first; nil: not known yet
}

// The pull scan reads followees' posts in id order in batches that grow
// from pullBatchMin (at least twice the page) up to pullBatchMax.
const (
	pullBatchMin = 32
	pullBatchMax = 2000
)

// pullEntries computes feed entries beyond bound from MySQL alone (fan-in at
// read time). An original post's place is its earliest arrival: the post
// itself when a followee wrote it, else the first live repost by a
// followee. Scanning followees' posts in order and keeping each event that
// is its original's first arrival yields entries in order, each once.
func (e *Engine) pullEntries(ctx context.Context, followees []int64, dir store.Direction, bound int64, limit int) ([]entry, error) {
	var out []entry
	if len(followees) == 0 || limit <= 0 {
		return out, nil
	}
	followed := make(map[int64]bool, len(followees))
	for _, id := range followees {
		followed[id] = true
	}
	batch := max(2*limit, pullBatchMin)
	for {
		events, err := e.store.FeedEvents(ctx, followees, dir, bound, batch)
		if err != nil {
			return nil, err
		}
		firsts, err := e.firstArrivals(ctx, followees, followed, events)
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			if ev.RepostOfID == nil || firsts[*ev.RepostOfID] == ev.ID {
				out = append(out, entry{Key: ev.ID, PostID: ev.OriginalID()})
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
func (e *Engine) firstArrivals(ctx context.Context, followees []int64, followed map[int64]bool, events []store.FeedEvent) (map[int64]int64, error) {
	var reposted []int64
	for _, ev := range events {
		if ev.RepostOfID != nil {
			reposted = append(reposted, *ev.RepostOfID)
		}
	}
	if len(reposted) == 0 {
		return nil, nil
	}
	originals, err := e.Posts(ctx, reposted)
	if err != nil {
		return nil, err
	}
	var candidates []int64
	for _, o := range originals {
		if o != nil && !o.Deleted() && !followed[o.AuthorID] {
			candidates = append(candidates, o.ID)
		}
	}
	return e.store.FirstReposts(ctx, followees, candidates)
}

// addReposters fills in the reposters of the entries that lack them: the
// followees who reposted each, most recent first, at most MaxReposters.
// With followees nil, MySQL finds the viewer's followees itself.
func (e *Engine) addReposters(ctx context.Context, viewerID int64, followees []int64, entries []entry) error {
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
		reposts, err = e.store.RepostsByFollowees(ctx, viewerID, ids)
	} else {
		reposts, err = e.store.Reposts(ctx, followees, ids)
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
