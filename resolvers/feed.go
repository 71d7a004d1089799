package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *mutationResolver) MarkFeedRead(ctx context.Context, upTo *string) (*models.MarkFeedReadPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	n, err := r.Engine.MarkFeedRead(ctx, viewer, upTo)
	if err != nil {
		return nil, err
	}
	return &models.MarkFeedReadPayload{UnreadCount: n, UnreadCountCapped: r.Engine.UnreadCountCapped(n)}, nil
}

// UnreadCount is counted once per response: each alias of the feed asks
// the same loader.
func (r *feedConnectionResolver) UnreadCount(ctx context.Context, _ *models.FeedConnection) (int, error) {
	if _, err := viewer.Require(ctx); err != nil {
		return 0, err
	}
	return dataloader.For(ctx).UnreadCount.Get(ctx)
}

// UnreadCountCapped reads the count UnreadCount reads: no second count.
func (r *feedConnectionResolver) UnreadCountCapped(ctx context.Context, conn *models.FeedConnection) (bool, error) {
	n, err := r.UnreadCount(ctx, conn)
	if err != nil {
		return false, err
	}
	return r.Engine.UnreadCountCapped(n), nil
}
