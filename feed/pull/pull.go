// Package pull is the pull path: a reader's home feed read from MySQL, the
// followees' posts merged in id order (store.FeedEvents), with reposts
// placed where their post first entered the feed. Entry and View are the
// feed's entries and what it is made of, for the inbox paths above too.
package pull

import (
	"context"
	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"math"
	"slices"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/models"
	"feedservice/store"
)

// Entry is one home-feed Entry: an original post at the place it first
// entered the feed.
type Entry struct {
	Key       int64   // sort key: the id of the post or repost that brought it first
	PostID    int64   // the original post
	Reposters []int64 // followees who reposted it, most recent first; nil: not known yet
}

// View is what a reader's feed is made of (see store.FeedView): the
// followees it counts through, those the reader follows and does not hide,
// and the users whose posts it hides wherever they come from.
type View struct {
	Followees []int64 // sorted
	Hidden    []int64 // sorted
}

// NewView is the view of a reader who follows followees and hides hidden
// (in any order, followees possibly among hidden). It keeps neither slice.
func NewView(followees, hidden []int64) View {
	v := View{Hidden: slices.Clone(hidden)}
	slices.Sort(v.Hidden)
	v.Hidden = slices.Compact(v.Hidden)
	v.Followees = make([]int64, 0, len(followees))
	for _, id := range followees {
		if !v.Hides(id) {
			v.Followees = append(v.Followees, id)
		}
	}
	slices.Sort(v.Followees)
	return v
}

// Counts reports whether the feed takes entries through user.
func (v View) Counts(user int64) bool {
	_, ok := slices.BinarySearch(v.Followees, user)
	return ok
}

// Hides reports whether the feed hides user's posts.
func (v View) Hides(user int64) bool {
	_, ok := slices.BinarySearch(v.Hidden, user)
	return ok
}

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
// is its original's first arrival yields entries in order, each once. The
// followees are the view's (none it hides), and a repost of a post whose
// author the view hides is no arrival.
func (f *Feeds) Entries(ctx context.Context, view View, dir store.Direction, bound int64, limit int) ([]Entry, error) {
	return f.scan(ctx, view, dir, bound, limit, nil)
}

// Late is an arrival a scan passed over because its post arrived earlier:
// User's live repost Event of PostID.
type Late struct {
	PostID, User, Event int64
}

// Newest is the newest limit entries (see Entries), and the later arrivals
// of other entries among the events above the last of them: entries whose
// first arrival lies further down, and which an inbox of those limit
// entries must still hold at their later arrivals (see inbox's rebuild).
func (f *Feeds) Newest(ctx context.Context, view View, limit int) ([]Entry, []Late, error) {
	var late []Late
	entries, err := f.scan(ctx, view, store.Older, math.MaxInt64, limit, func(l Late) { late = append(late, l) })
	if err != nil {
		return nil, nil, err
	}
	in := make(map[int64]bool, len(entries))
	for _, en := range entries {
		in[en.PostID] = true
	}
	late = slices.DeleteFunc(late, func(l Late) bool { return in[l.PostID] })
	return entries, late, nil
}

// scan is Entries, telling passed (when not nil) each live arrival it
// passes over, in scan order, until the last entry it returns.
func (f *Feeds) scan(ctx context.Context, view View, dir store.Direction, bound int64, limit int, passed func(Late)) ([]Entry, error) {
	var out []Entry
	followees := view.Followees
	if len(followees) == 0 || limit <= 0 {
		return out, nil
	}
	batch := max(2*limit, pullBatchMin)
	w := NewWindow(dir, bound, time.Now())
	for {
		events, err := f.d.Store.FeedEvents(ctx, followees, dir, bound, w.Edge(), batch)
		if err != nil {
			return nil, err
		}
		firsts, originals, err := f.firstArrivals(ctx, view, events)
		if err != nil {
			return nil, err
		}
		full := false
		if out, full = Walk(view, withArrivals(events, firsts, originals), out, limit, passed); full {
			return out, nil
		}
		var more, done bool
		if bound, more, done = w.After(len(events), batch, lastID(events)); done {
			return out, nil
		}
		if more {
			batch = min(2*batch, pullBatchMax)
		}
	}
}

// A scan of older entries reads one window of time at a time (see
// store.FeedEvents; a returning reader's page and an inbox's rebuild read
// store.HomeEvents so too): from the bound (or now), firstScanWindow's
// worth of ids, then windows each scanWindowGrowth times longer, past the
// last, until the page is full or a window would start before the first
// id (that one is the rest of the feed). A reader of a hundred authors,
// who post once a day or two, finds a page in the first day's window; a
// reader of a few quiet authors reads three or four windows, each a few
// index dives per author. A scan of newer entries (an unread count from
// the read marker, a page back towards the top) reads the rest of the feed
// at once: it starts at a bound the reader has seen, often long ago, and
// windows from there would be empty until they reached the posts of now.
const (
	firstScanWindow  = 24 * time.Hour
	scanWindowGrowth = 8
)

// Window is the window of time a scan reads: its far end (Edge) and its
// length.
type Window struct {
	dir  store.Direction
	now  time.Time
	edge int64
	span time.Duration
}

// NewWindow is the first window of a scan in direction dir from bound, at
// now.
func NewWindow(dir store.Direction, bound int64, now time.Time) *Window {
	w := &Window{dir: dir, now: now, span: firstScanWindow}
	w.edge = w.edgeFrom(bound)
	return w
}

// Edge is the id at the window's far end (included), 0 when the window is
// the rest of the feed.
func (w *Window) Edge() int64 { return w.edge }

// edgeFrom is the far end of a window of span below bound, 0 for the
// rest of the feed (always, for a scan of newer entries).
func (w *Window) edgeFrom(bound int64) int64 {
	if w.dir != store.Older {
		return 0
	}
	from := w.now
	if bound <= ids.IDAt(w.now) {
		from = ids.IDTime(bound)
	}
	edge := ids.IDAt(from.Add(-w.span))
	if edge <= 0 {
		return 0
	}
	return edge
}

// After is where a scan goes on from once it has read n events from the
// window, a batch of batch at most, the last of them last: below last
// when the batch was full (more: the window may hold more, and the scan
// may read a larger batch), else from the next window (Widen), or nowhere
// (done) when the window read was the rest of the feed.
func (w *Window) After(n, batch int, last int64) (bound int64, more, done bool) {
	switch {
	case n == batch && n > 0:
		return last, true, false
	case w.edge == 0:
		return 0, false, true
	}
	return w.Widen(), false, false
}

// lastID is the id of the last of events, 0 when there is none.
func lastID(events []store.FeedEvent) int64 {
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].ID
}

// Widen moves on to the next window, past the one read, and returns the
// bound it starts from (the edge read, which the next window leaves out).
func (w *Window) Widen() int64 {
	read := w.edge
	w.span *= scanWindowGrowth
	w.edge = w.edgeFrom(read)
	return read
}

// Walk goes through events (in page order, each with its original's author
// and state and its first arrival, as store.HomeEvents gives them) as
// the pull scan does: each event that is its original's first arrival in
// the view is an entry, appended to out until it holds limit (full);
// passed, when not nil, is told of each other live arrival it passes over
// before that. An original post is its own first arrival; a repost is
// when its original is live, by an author the view neither counts (whose
// post arrived first by itself) nor hides, and the repost is the
// original's earliest by the view's followees.
func Walk(view View, events []store.SnapshotEvent, out []Entry, limit int, passed func(Late)) (entries []Entry, full bool) {
	for _, ev := range events {
		switch {
		case ev.RepostOfID == nil:
			out = append(out, Entry{Key: ev.ID, PostID: ev.ID})
		case !ev.OriginalLive || view.Hides(ev.OriginalAuthor):
			continue // no arrival at all
		case !view.Counts(ev.OriginalAuthor) && ev.FirstRepost == ev.ID:
			out = append(out, Entry{Key: ev.ID, PostID: *ev.RepostOfID})
		default:
			if passed != nil {
				passed(Late{PostID: *ev.RepostOfID, User: ev.AuthorID, Event: ev.ID})
			}
			continue
		}
		if len(out) == limit {
			return out, true
		}
	}
	return out, false
}

// withArrivals is events with what Walk needs of each repost: its
// original (from originals) and its first arrival (from firsts).
func withArrivals(events []store.FeedEvent, firsts map[int64]int64, originals map[int64]*models.Post) []store.SnapshotEvent {
	out := make([]store.SnapshotEvent, len(events))
	for i, ev := range events {
		out[i] = store.SnapshotEvent{FeedEvent: ev}
		if ev.RepostOfID == nil {
			continue
		}
		if o := originals[*ev.RepostOfID]; o != nil && !o.Deleted() {
			out[i].OriginalAuthor, out[i].OriginalLive = o.AuthorID, true
		}
		out[i].FirstRepost = firsts[*ev.RepostOfID]
	}
	return out
}

// firstArrivals maps each original reposted in events to the id of its
// first repost by a followee, for originals that are live and whose author
// is neither counted (a followed author's post arrives first by itself)
// nor hidden; and returns the originals it loaded, by id.
func (f *Feeds) firstArrivals(ctx context.Context, view View, events []store.FeedEvent) (map[int64]int64, map[int64]*models.Post, error) {
	var reposted []int64
	for _, ev := range events {
		if ev.RepostOfID != nil {
			reposted = append(reposted, *ev.RepostOfID)
		}
	}
	if len(reposted) == 0 {
		return nil, nil, nil
	}
	loaded, err := f.cache.Posts(ctx, reposted)
	if err != nil {
		return nil, nil, err
	}
	originals := make(map[int64]*models.Post, len(loaded))
	var candidates []int64
	for _, o := range loaded {
		if o == nil {
			continue
		}
		originals[o.ID] = o
		if !o.Deleted() && !view.Counts(o.AuthorID) && !view.Hides(o.AuthorID) {
			candidates = append(candidates, o.ID)
		}
	}
	firsts, err := f.d.Store.FirstReposts(ctx, view.Followees, candidates)
	return firsts, originals, err
}

// AddReposters fills in the reposters of the entries that lack them: the
// followees who reposted each, most recent first, at most MaxReposters.
// With followees nil, MySQL finds the viewer's followees itself (those
// the viewer does not mute); else they are a View's.
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

// Feeds reads home feeds the pull way: from MySQL.
type Feeds struct {
	d     *deps.Deps
	cache *cache.Tiers
}

// NewFeeds reads through d's store, and the posts it checks through c.
func NewFeeds(d *deps.Deps, c *cache.Tiers) *Feeds { return &Feeds{d: d, cache: c} }
