package timeline

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/outbox"
	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/models"
	"feedservice/store"
)

// A list's feed is what its owner's home feed would hold if they followed
// only the list's members (internal/feedmodel). In push and hybrid modes
// it is merged at read time from the members' outboxes, as a hybrid page
// merges its celebrities' (this instance's copies, dropped on every
// instance when an outbox changes), over the window they all hold (keys at
// or above the highest of their floors). The owner's view comes from their
// followee set (the read state a home page loads), and the posts, with
// each original's live reposts, from the cache tiers; so a warm page asks
// MySQL nothing. Below the window, in pull mode (whose fan-out may keep
// no outbox), and when Redis fails, the pull path reads it from MySQL.

// ListFeed pages the feed of viewer's list listID, whose members are
// members, newest first, with cursors of the list's own kind.
func (reads *Reads) ListFeed(ctx context.Context, viewerID, listID int64, members []int64, args paging.PageArgs) (*models.FeedConnection, error) {
	kind := paging.CursorListFeed(listID)
	if _, err := args.Window(kind); err != nil {
		return nil, err
	}
	var (
		entries []pull.Entry
		info    *models.PageInfo
		view    pull.View
		loaded  map[int64]*models.Post
		err     error
	)
	fromMySQL := reads.d.Cfg.Mode == config.ModePull
	if !fromMySQL {
		entries, info, view, loaded, err = reads.listFromOutboxes(ctx, viewerID, kind, members, args)
		var re redisx.Error
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.As(err, &re) {
			reads.d.Log.WarnContext(ctx, "list feed read falls back to MySQL", "viewer", viewerID, "err", re.Err)
			fromMySQL = true
		} else if err != nil {
			return nil, err
		}
	}
	if fromMySQL {
		followees, hidden, err := reads.d.Store.FeedView(ctx, viewerID)
		if err != nil {
			return nil, err
		}
		slices.Sort(followees)
		view = pull.NewView(among(members, followees), hidden)
		fetch := reads.VisibleTo(viewerID, nil, followees, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
			return reads.pull.Entries(ctx, view, dir, bound, limit)
		})
		if entries, info, err = paging.Paginate(ctx, reads.d.Metrics, kind, args, fetch, entryKey); err != nil {
			return nil, err
		}
	}
	if err := reads.pull.AddReposters(ctx, viewerID, view.Followees, entries); err != nil {
		return nil, err
	}
	conn := &models.FeedConnection{PageInfo: info, Edges: make([]*models.FeedEdge, len(entries))}
	for i, en := range entries {
		conn.Edges[i] = &models.FeedEdge{
			Cursor: paging.EncodeCursor(kind, en.Key),
			Node:   &models.FeedItem{PostID: en.PostID, ReposterIDs: en.Reposters, AddedAt: ids.IDTime(en.Key), LoadedPost: loaded[en.PostID]},
		}
	}
	return conn, nil
}

// among is those of members whom the owner follows (followees, sorted):
// an unfollow takes its followee out of the owner's lists, and a copy of
// the lists may not know it yet.
func among(members, followees []int64) []int64 {
	out := make([]int64, 0, len(members))
	for _, m := range members {
		if _, ok := slices.BinarySearch(followees, m); ok {
			out = append(out, m)
		}
	}
	return out
}

// listFromOutboxes pages a list's feed from its members' outboxes (see
// above). Its errors from Redis are redisx.Errors.
func (reads *Reads) listFromOutboxes(ctx context.Context, viewerID int64, kind paging.CursorKind, members []int64, args paging.PageArgs) ([]pull.Entry, *models.PageInfo, pull.View, map[int64]*models.Post, error) {
	r, err := reads.state(ctx, viewerID, nil)
	if err != nil {
		return nil, nil, pull.View{}, nil, err
	}
	if _, err := r.allFollowees(ctx, reads); err != nil {
		return nil, nil, pull.View{}, nil, err
	}
	following := r.knownFollowees()
	view := pull.NewView(among(members, following), r.hidden)
	copies, err := reads.outboxes.Copies(ctx, view.Followees)
	if err != nil {
		return nil, nil, pull.View{}, nil, redisx.Fail(err)
	}
	l := &listRead{reads: reads, view: view, copies: copies, loaded: map[int64]*models.Post{}}
	if len(copies) < len(view.Followees) {
		l.copies = nil // an outbox not read: MySQL serves the list whole
	}
	fetch := reads.VisibleTo(viewerID, l.loaded, following, l.entries)
	entries, info, err := paging.Paginate(ctx, reads.d.Metrics, kind, args, fetch, entryKey)
	return entries, info, view, l.loaded, err
}

// listRead is one page's read of a list's feed from its members' outboxes.
type listRead struct {
	reads  *Reads
	view   pull.View              // the members the feed counts through, and whom it hides
	copies map[int64]*outbox.Copy // the members' outboxes; nil: MySQL serves everything
	loaded map[int64]*models.Post // the originals read, by id
}

// window is the lowest key every member's outbox holds (the highest of
// their floors); 0 when MySQL has nothing below them.
func (l *listRead) window() int64 {
	var w int64
	for _, c := range l.copies {
		w = max(w, c.Floor())
	}
	return w
}

// entries is up to limit entries beyond bound: from the outboxes within
// the window, then from MySQL below it.
func (l *listRead) entries(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
	if limit <= 0 {
		return nil, nil
	}
	older := dir == store.Older
	window := l.window()
	if l.copies == nil || (older && bound <= window) || (!older && bound < window) {
		return l.reads.pull.Entries(ctx, l.view, dir, bound, limit)
	}
	m := newOutboxMerge(l.copies, older, bound, window)
	var out []pull.Entry
	for {
		items := m.next(readWant(limit, len(out)))
		if len(items) == 0 {
			break
		}
		events, err := l.events(ctx, items)
		if err != nil {
			return nil, err
		}
		var full bool
		if out, full = pull.Walk(l.view, events, out, limit, nil); full {
			break
		}
	}
	l.setReposters(out)
	if older && len(out) < limit && window > 0 {
		more, err := l.reads.pull.Entries(ctx, l.view, store.Older, window, limit-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// events are items as the pull walk takes them: each with its original's
// author and state and its original's first arrival in the view, from the
// originals' copies (their lists of live reposts), or from MySQL for an
// original reposted too often for its copy to keep the list. A post no
// longer live is left out.
func (l *listRead) events(ctx context.Context, items []mergedItem) ([]store.SnapshotEvent, error) {
	if err := l.load(ctx, items); err != nil {
		return nil, err
	}
	out := make([]store.SnapshotEvent, 0, len(items))
	var unkept []int64
	for _, it := range items {
		o := l.loaded[it.OriginalID]
		ev := store.SnapshotEvent{FeedEvent: store.FeedEvent{ID: it.PostID, AuthorID: it.author}}
		if it.PostID == it.OriginalID {
			if o != nil && !o.Deleted() {
				out = append(out, ev)
			}
			continue
		}
		original := it.OriginalID
		ev.RepostOfID = &original
		if o != nil && !o.Deleted() {
			ev.OriginalAuthor, ev.OriginalLive = o.AuthorID, true
			if !o.RepostsKept {
				unkept = append(unkept, original)
			} else if ev.FirstRepost = l.firstRepost(o, it.PostID); ev.FirstRepost == 0 {
				continue // the repost is gone
			}
		}
		out = append(out, ev)
	}
	if len(unkept) == 0 {
		return out, nil
	}
	l.reads.d.Metrics.RepostListMisses.Add(float64(len(unkept)))
	firsts, err := l.reads.d.Store.FirstReposts(ctx, l.view.Followees, uniq(unkept))
	if err != nil {
		return nil, err
	}
	for i := range out {
		if ev := &out[i]; ev.RepostOfID != nil && ev.OriginalLive && ev.FirstRepost == 0 {
			ev.FirstRepost = firsts[*ev.RepostOfID]
		}
	}
	return out, nil
}

// firstRepost is the earliest live repost of o by a member the view
// counts, from o's list of live reposts (kept); 0 when repost, one of the
// members', is not among them (deleted).
func (l *listRead) firstRepost(o *models.Post, repost int64) int64 {
	var first int64
	live := false
	for _, rp := range o.Reposts { // oldest first
		if first == 0 && l.view.Counts(rp.AuthorID) {
			first = rp.ID
		}
		live = live || rp.ID == repost
	}
	if !live {
		return 0
	}
	return first
}

// load reads the originals of items that the page has not read yet, from
// the cache tiers.
func (l *listRead) load(ctx context.Context, items []mergedItem) error {
	var missing []int64
	for _, it := range items {
		if _, ok := l.loaded[it.OriginalID]; !ok {
			missing = append(missing, it.OriginalID)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	posts, err := l.reads.cache.Posts(ctx, uniq(missing))
	if err != nil {
		return err
	}
	for _, p := range posts {
		if p != nil {
			l.loaded[p.ID] = p
		}
	}
	return nil
}

// setReposters gives each entry its reposters among the members the view
// counts, most recent first, at most config.MaxReposters, from its
// original's list of live reposts; an entry whose original keeps none is
// left to AddReposters (MySQL).
func (l *listRead) setReposters(entries []pull.Entry) {
	for i := range entries {
		o := l.loaded[entries[i].PostID]
		if o == nil || !o.RepostsKept {
			continue
		}
		reposters := []int64{}
		for j := len(o.Reposts) - 1; j >= 0 && len(reposters) < config.MaxReposters; j-- {
			if a := o.Reposts[j].AuthorID; l.view.Counts(a) {
				reposters = append(reposters, a)
			}
		}
		entries[i].Reposters = reposters
	}
}

// mergedItem is an outbox item with the outbox's author.
type mergedItem struct {
	outbox.Item
	author int64
}

// outboxMerge walks the items of several outboxes in page order from a
// bound: older, from the newest below it down to the window; or newer,
// from the oldest above it.
type outboxMerge struct {
	older bool
	heads []mergeHead
}

// mergeHead is one outbox's place in the walk: items[i] is its next item,
// while i lies within [lo, hi).
type mergeHead struct {
	author    int64
	items     []outbox.Item
	i, lo, hi int
}

func newOutboxMerge(copies map[int64]*outbox.Copy, older bool, bound, window int64) *outboxMerge {
	m := &outboxMerge{older: older, heads: make([]mergeHead, 0, len(copies))}
	for author, c := range copies {
		at := func(k int64) int {
			i, _ := slices.BinarySearchFunc(c.Items(), k, func(it outbox.Item, b int64) int { return cmp.Compare(it.PostID, b) })
			return i
		}
		h := mergeHead{author: author, items: c.Items()}
		if older {
			h.lo, h.hi = at(window), at(bound) // scores in [window, bound)
			h.i = h.hi - 1
		} else {
			h.lo, h.hi = at(bound+1), len(c.Items()) // scores above bound
			h.i = h.lo
		}
		if h.lo < h.hi {
			m.heads = append(m.heads, h)
		}
	}
	return m
}

// next is up to n more items, in page order.
func (m *outboxMerge) next(n int) []mergedItem {
	var out []mergedItem
	for len(out) < n {
		best := -1
		for j := range m.heads {
			h := &m.heads[j]
			if h.i < h.lo || h.i >= h.hi {
				continue
			}
			if best < 0 || m.before(h.items[h.i].PostID, m.heads[best].items[m.heads[best].i].PostID) {
				best = j
			}
		}
		if best < 0 {
			return out
		}
		h := &m.heads[best]
		out = append(out, mergedItem{Item: h.items[h.i], author: h.author})
		if m.older {
			h.i--
		} else {
			h.i++
		}
	}
	return out
}

// before says whether key a comes before key b in page order.
func (m *outboxMerge) before(a, b int64) bool {
	if m.older {
		return a > b
	}
	return a < b
}
