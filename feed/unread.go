package feed

import (
	"context"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/models"
	"feedservice/store"
)

// UnreadCount is the number of feed entries newer than the viewer's read
// marker, at most MaxUnreadCount.
func (e *Engine) UnreadCount(ctx context.Context, viewerID int64) (int, error) {
	e.metrics.UnreadCounts.Inc()
	unread, _, err := e.unreadEntries(ctx, viewerID)
	return len(unread), err
}

// unreadEntries lists the feed entries newer than the viewer's read marker
// (at most MaxUnreadCount), and the marker.
func (e *Engine) unreadEntries(ctx context.Context, viewerID int64) ([]pull.Entry, int64, error) {
	u, err := e.readMarker(ctx, viewerID)
	if err != nil {
		return nil, 0, err
	}
	if e.cfg.Mode != config.ModePull {
		unread, err := e.unreadFromInbox(ctx, viewerID, u.FeedReadKey)
		return unread, u.FeedReadKey, err
	}
	lagging := e.rep.Lagging(ctx, viewerID)
	followees, err := e.store.FolloweeIDs(lagging, viewerID)
	if err != nil {
		return nil, 0, err
	}
	unread, err := e.pull.Entries(lagging, followees, store.Newer, u.FeedReadKey, config.MaxUnreadCount)
	return unread, u.FeedReadKey, err
}

// readMarker is the viewer as their Redis copy holds them, for the read
// marker: the copy, not the local tier, since the copy is refreshed before
// markFeedRead answers, so it is the viewer's own latest write. A query
// that also reads the feed has it from the reader's state, read with it in
// one round trip.
func (e *Engine) readMarker(ctx context.Context, viewerID int64) (*models.User, error) {
	if e.cfg.Mode != config.ModePull && memoFor(ctx, viewerID) != nil {
		if _, err := e.newReader(ctx, viewerID, nil); err == nil {
			if u := memoSelf(ctx, viewerID); u != nil {
				return u, nil
			}
		}
	}
	users, err := e.cache.UsersBelowLocal(ctx, []int64{viewerID})
	if err != nil {
		return nil, err
	}
	if u := users[viewerID]; u != nil {
		return u, nil
	}
	return nil, store.ErrNotFound
}

// MarkFeedRead moves the viewer's read marker to the entry of the feed
// cursor upTo, or to the newest entry when upTo is nil, and returns the
// unread count after it. The marker never moves backwards.
func (e *Engine) MarkFeedRead(ctx context.Context, viewerID int64, upTo *string) (int, error) {
	var key int64
	if upTo != nil {
		var err error
		if key, err = paging.DecodeCursor(paging.CursorFeed, *upTo); err != nil {
			return 0, err
		}
	} else {
		one := 1
		newest, err := e.Feed(ctx, viewerID, paging.PageArgs{First: &one})
		if err != nil {
			return 0, err
		}
		if len(newest.Edges) > 0 {
			key, _ = paging.DecodeCursor(paging.CursorFeed, newest.Edges[0].Cursor)
		}
	}
	moved, err := e.store.MoveFeedReadKey(ctx, viewerID, key, e.now().UTC())
	if err != nil {
		return 0, err
	}
	if moved {
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
		e.stream.Poke()
	}
	e.pub.Publish(ctx, e.keys.ReaderChannel(viewerID), "change") // every device of the viewer
	return e.UnreadCount(ctx, viewerID)
}
