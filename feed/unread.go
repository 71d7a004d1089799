package feed

import (
	"context"

	"feedservice/store"
)

// MaxUnreadCount caps the unread count: past it the red dot shows this
// number, and counting stops there, so a long-absent reader costs no more.
const MaxUnreadCount = 999

// UnreadCount is the number of feed entries newer than the viewer's read
// marker, at most MaxUnreadCount.
func (e *Engine) UnreadCount(ctx context.Context, viewerID int64) (int, error) {
	e.metrics.unreadCounts.Inc()
	unread, _, err := e.unreadEntries(ctx, viewerID)
	return len(unread), err
}

// unreadEntries lists the feed entries newer than the viewer's read marker
// (at most MaxUnreadCount), and the marker.
func (e *Engine) unreadEntries(ctx context.Context, viewerID int64) ([]entry, int64, error) {
	u, err := e.store.UserByID(ctx, viewerID)
	if err != nil {
		return nil, 0, err
	}
	if e.cfg.Mode != ModePull {
		unread, err := e.unreadFromInbox(ctx, viewerID, u.FeedReadKey)
		return unread, u.FeedReadKey, err
	}
	followees, err := e.store.FolloweeIDs(ctx, viewerID)
	if err != nil {
		return nil, 0, err
	}
	unread, err := e.pullEntries(ctx, followees, store.Newer, u.FeedReadKey, MaxUnreadCount)
	return unread, u.FeedReadKey, err
}

// MarkFeedRead moves the viewer's read marker to the entry of the feed
// cursor upTo, or to the newest entry when upTo is nil, and returns the
// unread count after it. The marker never moves backwards.
func (e *Engine) MarkFeedRead(ctx context.Context, viewerID int64, upTo *string) (int, error) {
	var key int64
	if upTo != nil {
		var err error
		if key, err = decodeCursor(cursorFeed, *upTo); err != nil {
			return 0, err
		}
	} else {
		one := 1
		newest, err := e.Feed(ctx, viewerID, PageArgs{First: &one})
		if err != nil {
			return 0, err
		}
		if len(newest.Edges) > 0 {
			key, _ = decodeCursor(cursorFeed, newest.Edges[0].Cursor)
		}
	}
	if err := e.store.MoveFeedReadKey(ctx, viewerID, key); err != nil {
		return 0, err
	}
	e.dropLocal(ctx, []int64{viewerID}, nil)
	e.publish(ctx, e.keys.readerChannel(viewerID), "change") // every device of the viewer
	return e.UnreadCount(ctx, viewerID)
}
