package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/paging"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *mutationResolver) ApproveFollowRequest(ctx context.Context, userID string) (*models.FollowPayload, error) {
	return changeRelation(ctx, userID, r.Engine.ApproveFollowRequest)
}

func (r *mutationResolver) RejectFollowRequest(ctx context.Context, userID string) (*models.FollowPayload, error) {
	return changeRelation(ctx, userID, r.Engine.RejectFollowRequest)
}

func (r *queryResolver) FollowRequests(ctx context.Context, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.FollowRequests(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *userResolver) ViewerHasRequestedFollow(ctx context.Context, obj *models.User) (bool, error) {
	if viewer.ID(ctx) == 0 {
		return false, nil
	}
	return dataloader.For(ctx).ViewerRequested.Load(ctx, obj.ID)
}
