package timeline

import (
	"context"
	"errors"
	"feedservice/feed/pull"

	"feedservice/feed/config"
	"feedservice/feed/internal/redisx"
	"feedservice/models"
	"feedservice/store"
)

// UnreadCount is the number of feed entries newer than the viewer's read
// marker, at most Config.MaxUnreadCount.
func (reads *Reads) UnreadCount(ctx context.Context, viewerID int64) (int, error) {
	reads.d.Metrics.UnreadCounts.Inc()
	unread, _, err := reads.UnreadEntries(ctx, viewerID)
	return len(unread), err
}

// UnreadEntries lists the feed entries newer than the viewer's read marker
// (at most Config.MaxUnreadCount), and the marker.
func (reads *Reads) UnreadEntries(ctx context.Context, viewerID int64) ([]pull.Entry, int64, error) {
	u, err := reads.readMarker(ctx, viewerID)
	if err != nil {
		return nil, 0, err
	}
	if reads.d.Cfg.Mode != config.ModePull {
		unread, err := reads.unreadFromInbox(ctx, viewerID, u.FeedReadKey)
		return unread, u.FeedReadKey, err
	}
	lagging := reads.rep.AllowLag(ctx, viewerID)
	view, err := reads.viewFromMySQL(lagging, viewerID)
	if err != nil {
		return nil, 0, err
	}
	unread, err := reads.VisibleTo(viewerID, nil, view.Followees, func(_ context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
		return reads.pull.Entries(lagging, view, dir, bound, limit)
	})(ctx, store.Newer, u.FeedReadKey, reads.d.Cfg.MaxUnreadCount)
	return unread, u.FeedReadKey, err
}

// readMarker is the viewer as their Redis copy holds them, for the read
// marker: the copy, not the local tier, since the copy is refreshed before
// markFeedRead answers, so it is the viewer's own latest write. A query
// that also reads the feed has it from the reader's state, read with it in
// one round trip.
func (reads *Reads) readMarker(ctx context.Context, viewerID int64) (*models.User, error) {
	if reads.d.Cfg.Mode != config.ModePull && memoFor(ctx, viewerID) != nil {
		if _, err := reads.state(ctx, viewerID, nil); err == nil {
			if u := memoSelf(ctx, viewerID); u != nil {
				return u, nil
			}
		}
	}
	users, err := reads.cache.UsersBelowLocal(ctx, []int64{viewerID})
	if err != nil {
		return nil, err
	}
	if u := users[viewerID]; u != nil {
		return u, nil
	}
	return nil, store.ErrNotFound
}

// unreadFromInbox lists the entries newer than the marker in push and
// hybrid modes, falling back to MySQL when Redis fails.
func (reads *Reads) unreadFromInbox(ctx context.Context, viewerID, marker int64) ([]pull.Entry, error) {
	r, err := reads.state(ctx, viewerID, nil)
	if err == nil {
		var unread []pull.Entry
		fetch := reads.VisibleTo(viewerID, r.posts, r.knownFollowees(), func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
			return reads.fetchMerged(ctx, r, dir, bound, limit)
		})
		if unread, err = fetch(ctx, store.Newer, marker, reads.d.Cfg.MaxUnreadCount); err == nil {
			return unread, nil
		}
	}
	var re redisx.Error
	if !errors.As(err, &re) {
		return nil, err
	}
	view, err := reads.viewFromMySQL(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	return reads.VisibleTo(viewerID, nil, view.Followees, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
		return reads.pull.Entries(ctx, view, dir, bound, limit)
	})(ctx, store.Newer, marker, reads.d.Cfg.MaxUnreadCount)
}
