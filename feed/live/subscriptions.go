package live

import (
	"context"
	"feedservice/feed/pull"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/paging"
	"feedservice/feed/timeline"
	"feedservice/models"
)

// Streams are the live streams of this instance's viewers, served from
// the messages of its hub.
type Streams struct {
	d        *deps.Deps
	hub      *Hub
	reads    *timeline.Reads
	inboxes  *timeline.Inboxes
	outboxes *outbox.Outboxes
}

// NewStreams serves live streams from hub's messages.
func NewStreams(d *deps.Deps, hub *Hub, reads *timeline.Reads, x *timeline.Inboxes, o *outbox.Outboxes) *Streams {
	return &Streams{d: d, hub: hub, reads: reads, inboxes: x, outboxes: o}
}

// UnreadCounts streams the viewer's unread count: the current value at
// once, then the new value after each change. A client that reads slowly
// gets the newest count, never a backlog. The stream ends with ctx.
func (ss *Streams) UnreadCounts(ctx context.Context, viewerID int64) (<-chan int, error) {
	l, err := ss.hub.Listen(ctx, viewerID, ss.Authors)
	if err != nil {
		return nil, err
	}
	out := make(chan int, 1)
	l.Recount() // the first count is an exact one
	go func() {
		defer close(out)
		// The count is the set of unread keys: a new entry's key joins it
		// (twice is once, and order does not matter); a recount replaces
		// it. An entry committed before a recount is in the recount, and
		// its key, arriving after, joins the set only once.
		// Until one count succeeded (Redis failing falls back to MySQL, so
		// only both failing), there is no count to send: never a made-up 0.
		last, marker, unread, counted := -1, int64(0), map[int64]bool{}, false
		// Fan-out announces new entries only to readers with an inbox: a
		// count that could not build one (Redis failed, or its pool was
		// busy) tries again after wait, doubling, then recounts.
		var retry <-chan time.Time
		wait := inboxRetryFirst
		for {
			ss.refreshListener(ctx, l)
			recount, keys := l.TakeCount()
			if recount {
				if retry == nil && !ss.hasInbox(ctx, viewerID) {
					retry, wait = time.After(wait), min(2*wait, inboxRetryMax)
				}
				entries, m, err := ss.reads.UnreadEntries(ctx, viewerID)
				if err != nil {
					if ctx.Err() == nil {
						l.Recount() // again at the next change
						ss.d.Log.WarnContext(ctx, "unread count", "viewer", viewerID, "err", err)
					}
				} else {
					marker, unread, counted = m, make(map[int64]bool, len(entries)), true
					for _, en := range entries {
						unread[en.Key] = true
					}
				}
			}
			for _, k := range keys {
				if k > marker {
					unread[k] = true
				}
			}
			if n := min(len(unread), ss.d.Cfg.MaxUnreadCount); counted && n != last {
				last = n
				select {
				case <-out: // replace a count the client has not taken yet
				default:
				}
				out <- n
			}
			select {
			case <-ctx.Done():
				return
			case <-l.Wake():
			case <-retry:
				retry = nil
				if !ss.hasInbox(ctx, viewerID) {
					retry, wait = time.After(wait), min(2*wait, inboxRetryMax)
					continue
				}
				wait = inboxRetryFirst
				l.Recount() // entries may have come while there was no inbox
			}
		}
	}()
	return out, nil
}

// How soon a live count without an inbox tries to build one again, and the
// longest it waits between tries while Redis stays away.
const (
	inboxRetryFirst = time.Second
	inboxRetryMax   = 30 * time.Second
)

// hasInbox makes sure a live reader has an inbox in push and hybrid modes,
// and says whether it could.
func (ss *Streams) hasInbox(ctx context.Context, viewerID int64) bool {
	if ss.d.Cfg.Mode == config.ModePull {
		return true
	}
	_, err := ss.inboxes.Ensure(ctx, viewerID)
	return err == nil
}

// FeedItemsAdded streams each entry as it enters the viewer's feed, with a
// cursor for paging. The stream ends with ctx.
func (ss *Streams) FeedItemsAdded(ctx context.Context, viewerID int64) (<-chan *models.FeedEdge, error) {
	l, err := ss.hub.Listen(ctx, viewerID, ss.Authors)
	if err != nil {
		return nil, err
	}
	out := make(chan *models.FeedEdge)
	go func() {
		defer close(out)
		ss.keepInbox(ctx, viewerID)
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.Wake():
				ss.refreshListener(ctx, l)
				ss.keepInbox(ctx, viewerID) // e.g. after Redis came back empty
			case add := <-l.Added():
				edge, err := ss.edgeAt(ctx, viewerID, add)
				if err != nil && ctx.Err() == nil {
					ss.d.Log.WarnContext(ctx, "feed item for subscription", "viewer", viewerID, "err", err)
				}
				if edge == nil {
					continue
				}
				select {
				case out <- edge:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// keepInbox makes sure a live reader has an inbox: fan-out only reaches
// readers who have one, and announces new entries only there.
func (ss *Streams) keepInbox(ctx context.Context, viewerID int64) {
	if ss.d.Cfg.Mode == config.ModePull {
		return
	}
	if _, err := ss.inboxes.Ensure(ctx, viewerID); err != nil && ctx.Err() == nil {
		ss.d.Log.WarnContext(ctx, "inbox for live reader", "viewer", viewerID, "err", err)
	}
}

func (ss *Streams) refreshListener(ctx context.Context, l *Listener) {
	if l.TakeRefresh() {
		if err := ss.hub.Update(ctx, l); err != nil && ctx.Err() == nil {
			ss.d.Log.WarnContext(ctx, "re-subscribe listener", "viewer", l.Reader(), "err", err)
		}
	}
}

// edgeAt is the feed edge of add if the post is in the viewer's feed at
// that key now (a repost of a post already in the feed does not enter it).
func (ss *Streams) edgeAt(ctx context.Context, viewerID int64, add livemsg.Add) (*models.FeedEdge, error) {
	one := 1
	after := paging.EncodeCursor(paging.CursorFeed, add.Key+1)
	conn, err := ss.reads.Feed(ctx, viewerID, paging.PageArgs{First: &one, After: &after})
	if err != nil || len(conn.Edges) == 0 {
		return nil, err
	}
	edge := conn.Edges[0]
	if edge.Node.PostID != add.Post || edge.Cursor != paging.EncodeCursor(paging.CursorFeed, add.Key) {
		return nil, nil
	}
	return edge, nil
}

// Authors are the followees whose posts reach the reader without
// fan-out, so the reader's listeners hear of them on the authors' channels:
// followed celebrities in hybrid mode, every followee in pull mode; none
// whose posts the reader's feed hides.
func (ss *Streams) Authors(ctx context.Context, reader int64) ([]int64, error) {
	switch ss.d.Cfg.Mode {
	case config.ModePull:
		followees, hidden, err := ss.d.Store.FeedView(ctx, reader)
		return pull.NewView(followees, hidden).Followees, err
	case config.ModeHybrid:
		celebs, err := ss.outboxes.Celebrities(ctx)
		if err != nil && ctx.Err() == nil {
			// Redis failed (away, or its pool busy past its timeout): MySQL
			// knows the celebrities too, and a subscription must not fail
			// for a cache.
			ss.d.Log.WarnContext(ctx, "celebrities of a listener from MySQL", "reader", reader, "err", err)
			celebs, err = ss.d.Store.UserIDsWithFollowers(ctx, ss.d.Cfg.CelebrityFollowers)
		}
		if err != nil || len(celebs) == 0 {
			return nil, err
		}
		followed, _, err := ss.inboxes.Sight(ctx, reader, celebs)
		var out []int64
		for _, c := range celebs {
			if followed[c] {
				out = append(out, c)
			}
		}
		return out, err
	}
	return nil, nil
}
