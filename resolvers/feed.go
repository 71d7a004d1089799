package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed"
	"feedservice/models"
)

func (r *mutationResolver) MarkFeedRead(ctx context.Context, upTo *string) (*models.MarkFeedReadPayload, error) {
	viewer, err := feed.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	n, err := r.Engine.MarkFeedRead(ctx, viewer, upTo)
	if err != nil {
		return nil, err
	}
	return &models.MarkFeedReadPayload{UnreadCount: n}, nil
}

// UnreadCount is counted once per response: each alias of the feed asks
// the same loader.
func (r *feedConnectionResolver) UnreadCount(ctx context.Context, _ *models.FeedConnection) (int, error) {
	if _, err := feed.RequireViewer(ctx); err != nil {
		return 0, err
	}
	return dataloader.For(ctx).UnreadCount.Get(ctx)
}

func (r *feedItemResolver) Post(ctx context.Context, obj *models.FeedItem) (*models.Post, error) {
	if obj.LoadedPost != nil {
		return obj.LoadedPost, nil
	}
	return dataloader.For(ctx).Posts.Load(ctx, obj.PostID)
}

func (r *feedItemResolver) Reposters(ctx context.Context, obj *models.FeedItem) ([]*models.User, error) {
	users, err := dataloader.For(ctx).Users.LoadAll(ctx, obj.ReposterIDs)
	if err != nil {
		return nil, err
	}
	out := users[:0]
	for _, u := range users {
		if u != nil {
			out = append(out, u)
		}
	}
	return out, nil
}
