package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *userResolver) ViewerIsFollowing(ctx context.Context, obj *models.User) (bool, error) {
	if viewer.ID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).ViewerFollows.Load(ctx, obj.ID)
}

func (r *userResolver) FollowsViewer(ctx context.Context, obj *models.User) (bool, error) {
	if viewer.ID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).FollowsViewer.Load(ctx, obj.ID)
}

func (r *userResolver) Timeline(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string) (*models.PostConnection, error) {
	return r.Engine.Timeline(ctx, viewer.ID(ctx), obj, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userResolver) Followers(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string, offset *int) (*models.UserConnection, error) {
	args := paging.PageArgs{First: first, After: after, Last: last, Before: before}
	jump, err := args.JumpArgs(offset)
	if err != nil || jump != nil {
		return jumpOrError(ctx, obj, jump, err, r.Engine.FollowersAt)
	}
	return r.Engine.Followers(ctx, obj, args)
}

func (r *userResolver) Following(ctx context.Context, obj *models.User, first *int, after *string, last *int, before *string, offset *int) (*models.UserConnection, error) {
	args := paging.PageArgs{First: first, After: after, Last: last, Before: before}
	jump, err := args.JumpArgs(offset)
	if err != nil || jump != nil {
		return jumpOrError(ctx, obj, jump, err, r.Engine.FollowingAt)
	}
	return r.Engine.Following(ctx, obj, args)
}

type jumpFunc func(ctx context.Context, user *models.User, args paging.JumpArgs) (*models.UserConnection, error)

// jumpOrError answers a relation list's page jump, or the error of its arguments.
func jumpOrError(ctx context.Context, user *models.User, args *paging.JumpArgs, err error, jump jumpFunc) (*models.UserConnection, error) {
	if err != nil {
		return nil, err
	}
	return jump(ctx, user, *args)
}

func (r *userEdgeResolver) Node(ctx context.Context, obj *models.UserEdge) (*models.User, error) {
	u, err := dataloader.For(ctx).Users.Load(ctx, obj.UserID)
	if u == nil && err == nil {
		return nil, apperr.NotFound("user %d of this list no longer exists", obj.UserID)
	}
	return u, err
}
