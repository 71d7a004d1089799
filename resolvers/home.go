package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/paging"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *queryResolver) Home(ctx context.Context, first *int, after *string, last *int, before *string) (*models.HomeConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	conn, page, err := r.Engine.Home(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
	if err == nil {
		err = dataloader.For(ctx).PrimeHome(ctx, conn, page)
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// UnreadCount is the feed's red dot: the inserted kinds never count.
func (r *homeConnectionResolver) UnreadCount(ctx context.Context, _ *models.HomeConnection) (int, error) {
	if _, err := viewer.Require(ctx); err != nil {
		return 0, err
	}
	return dataloader.For(ctx).UnreadCount.Get(ctx)
}

// UnreadCountCapped reads the count UnreadCount reads: no second count.
func (r *homeConnectionResolver) UnreadCountCapped(ctx context.Context, conn *models.HomeConnection) (bool, error) {
	n, err := r.UnreadCount(ctx, conn)
	if err != nil {
		return false, err
	}
	return r.Engine.UnreadCountCapped(n), nil
}

func (r *suggestedUserResolver) User(ctx context.Context, obj *models.SuggestedUser) (*models.User, error) {
	return dataloader.For(ctx).Users.Load(ctx, obj.UserID)
}

func (r *promotedPostResolver) Post(ctx context.Context, obj *models.PromotedPost) (*models.Post, error) {
	if obj.LoadedPost != nil {
		return obj.LoadedPost, nil
	}
	return dataloader.For(ctx).Posts.Load(ctx, obj.PostID)
}

func (r *promotePostPayloadResolver) Post(ctx context.Context, obj *models.PromotePostPayload) (*models.Post, error) {
	return dataloader.For(ctx).Posts.Load(ctx, obj.PostID)
}

func (r *mutationResolver) PromotePost(ctx context.Context, postID string) (*models.PromotePostPayload, error) {
	return r.setPromoted(ctx, postID, true)
}

func (r *mutationResolver) UnpromotePost(ctx context.Context, postID string) (*models.PromotePostPayload, error) {
	return r.setPromoted(ctx, postID, false)
}

func (r *mutationResolver) setPromoted(ctx context.Context, postID string, promoted bool) (*models.PromotePostPayload, error) {
	if err := viewer.RequireOperator(ctx); err != nil {
		return nil, err
	}
	id, err := parseID(models.KindPost, postID)
	if err != nil {
		return nil, err
	}
	if err := r.Engine.SetPromoted(ctx, id, promoted); err != nil {
		return nil, err
	}
	return &models.PromotePostPayload{PostID: id, Promoted: promoted}, nil
}

func (r *mutationResolver) DismissHomeEntry(ctx context.Context, id string) (*models.DismissHomeEntryPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	kind, n, err := parseAnyID(id)
	if err != nil {
		return nil, err
	}
	if err := r.Engine.DismissHomeEntry(ctx, viewer, kind == models.KindUser, n); err != nil {
		return nil, err
	}
	return &models.DismissHomeEntryPayload{DismissedID: id}, nil
}
