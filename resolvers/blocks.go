package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *mutationResolver) Block(ctx context.Context, userID string) (*models.BlockPayload, error) {
	return changeRelation(ctx, userID, r.Engine.Block)
}

func (r *mutationResolver) Unblock(ctx context.Context, userID string) (*models.BlockPayload, error) {
	return changeRelation(ctx, userID, r.Engine.Unblock)
}

func (r *mutationResolver) Mute(ctx context.Context, userID string) (*models.MutePayload, error) {
	return changeRelation(ctx, userID, r.Engine.Mute)
}

func (r *mutationResolver) Unmute(ctx context.Context, userID string) (*models.MutePayload, error) {
	return changeRelation(ctx, userID, r.Engine.Unmute)
}

func (r *queryResolver) BlockedUsers(ctx context.Context, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.BlockedUsers(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *queryResolver) MutedUsers(ctx context.Context, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.MutedUsers(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userResolver) ViewerHasBlocked(ctx context.Context, obj *models.User) (bool, error) {
	if viewer.ID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).ViewerBlocks.Load(ctx, obj.ID)
}

func (r *userResolver) ViewerHasMuted(ctx context.Context, obj *models.User) (bool, error) {
	if viewer.ID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).ViewerMutes.Load(ctx, obj.ID)
}

func (r *relatedUserEdgeResolver) Node(ctx context.Context, obj *models.RelatedUserEdge) (*models.User, error) {
	u, err := dataloader.For(ctx).Users.Load(ctx, obj.UserID)
	if u == nil && err == nil {
		return nil, apperr.NotFound("user %d of this list no longer exists", obj.UserID)
	}
	return u, err
}
