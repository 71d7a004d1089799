package feed

import (
	"context"

	"feedservice/feed/paging"
	"feedservice/feed/timeline"
	"feedservice/models"
)

// The reads of the home feed, its live streams and its inserted entries:
// the work is timeline's, subscriptions' and home's.

// Feed pages the viewer's home feed, newest first (see timeline.Reads.Feed).
func (e *Engine) Feed(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.FeedConnection, error) {
	return e.reads.Feed(ctx, viewerID, args)
}

// UnreadCount is the number of feed entries newer than the viewer's read
// marker, at most Config.MaxUnreadCount.
func (e *Engine) UnreadCount(ctx context.Context, viewerID int64) (int, error) {
	return e.reads.UnreadCount(ctx, viewerID)
}

// UnreadCountCapped says whether count, an unread count, is at the cap
// (Config.MaxUnreadCount): counting stopped there, so at least that many
// entries are unread and the red dot shows it as "999+".
func (e *Engine) UnreadCountCapped(count int) bool { return count >= e.cfg.MaxUnreadCount }

// WithReadMemo gives the reads made with ctx one memo of the viewers'
// state (see timeline.WithReadMemo). The API layer calls it once per
// query response.
func WithReadMemo(ctx context.Context) context.Context { return timeline.WithReadMemo(ctx) }

// Home pages the viewer's home connection: the feed with promoted posts
// and suggested users inserted (see home.Mixer.Home).
func (e *Engine) Home(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.HomeConnection, *models.FeedConnection, error) {
	return e.home.Home(ctx, viewerID, args)
}

// SetPromoted promotes a post, or ends its promotion (an operator's action).
func (e *Engine) SetPromoted(ctx context.Context, postID int64, promoted bool) error {
	return e.home.SetPromoted(ctx, postID, promoted)
}

// DismissHomeEntry hides an inserted entry from the viewer's home: a
// suggested user (isUser) or a promoted post.
func (e *Engine) DismissHomeEntry(ctx context.Context, viewerID int64, isUser bool, id int64) error {
	return e.home.DismissHomeEntry(ctx, viewerID, isUser, id)
}

// HomeCandidatesKey is the Redis key of a viewer's inserted entries (see
// home.Mixer.CandidatesKey).
func (e *Engine) HomeCandidatesKey(viewerGlobalID string) string {
	return e.home.CandidatesKey(viewerGlobalID)
}

// UnreadCounts streams the viewer's unread count (see
// live.Streams.UnreadCounts). The engine must be started.
func (e *Engine) UnreadCounts(ctx context.Context, viewerID int64) (<-chan int, error) {
	return e.subs.UnreadCounts(ctx, viewerID)
}

// FeedItemsAdded streams each entry as it enters the viewer's feed (see
// live.Streams.FeedItemsAdded). The engine must be started.
func (e *Engine) FeedItemsAdded(ctx context.Context, viewerID int64) (<-chan *models.FeedEdge, error) {
	return e.subs.FeedItemsAdded(ctx, viewerID)
}
