package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed"
	"feedservice/models"
)

func (r *userResolver) ViewerIsFollowing(ctx context.Context, obj *models.User) (bool, error) {
	if feed.ViewerID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).ViewerFollows.Load(ctx, obj.ID)
}

func (r *userResolver) FollowsViewer(ctx context.Context, obj *models.User) (bool, error) {
	if feed.ViewerID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).FollowsViewer.Load(ctx, obj.ID)
}

func (r *userResolver) Timeline(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string) (*models.PostConnection, error) {
	return r.Engine.Timeline(ctx, obj, feed.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userResolver) Followers(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string) (*models.UserConnection, error) {
	return r.Engine.Followers(ctx, obj, feed.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userResolver) Following(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string) (*models.UserConnection, error) {
	return r.Engine.Following(ctx, obj, feed.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userEdgeResolver) Node(ctx context.Context, obj *models.UserEdge) (*models.User, error) {
	u, err := dataloader.For(ctx).Users.Load(ctx, obj.UserID)
	if u == nil && err == nil {
		return nil, feed.NotFound("user %d of this list no longer exists", obj.UserID)
	}
	return u, err
}
