package resolvers

import (
	"context"

	"feedservice/feed"
	"feedservice/models"
)

// Live red dots are the subject of their own issue ("Live red dots"); until
// it lands, both subscriptions refuse with a clear error instead of staying
// silent.

func (r *subscriptionResolver) UnreadCount(ctx context.Context) (<-chan int, error) {
	if _, err := feed.RequireViewer(ctx); err != nil {
		return nil, err
	}
	return nil, feed.ErrLiveUpdatesUnavailable
}

func (r *subscriptionResolver) FeedItemAdded(ctx context.Context) (<-chan *models.FeedEdge, error) {
	if _, err := feed.RequireViewer(ctx); err != nil {
		return nil, err
	}
	return nil, feed.ErrLiveUpdatesUnavailable
}
