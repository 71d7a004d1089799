package resolvers

import (
	"context"

	"feedservice/internal/viewer"
	"feedservice/models"
)

// relationChange is an engine call that changes a relation of the viewer
// with userID: follow, block, mute and their undoing.
type relationChange[P any] func(ctx context.Context, viewerID, userID int64) (*P, error)

// changeRelation checks the viewer and the user id, then makes the change.
func changeRelation[P any](ctx context.Context, userID string, change relationChange[P]) (*P, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	id, err := parseID(models.KindUser, userID)
	if err != nil {
		return nil, err
	}
	return change(ctx, viewer, id)
}

func (r *mutationResolver) Follow(ctx context.Context, userID string) (*models.FollowPayload, error) {
	return changeRelation(ctx, userID, r.Engine.Follow)
}

func (r *mutationResolver) Unfollow(ctx context.Context, userID string) (*models.FollowPayload, error) {
	return changeRelation(ctx, userID, r.Engine.Unfollow)
}

func (r *mutationResolver) RemoveFollower(ctx context.Context, userID string) (*models.FollowPayload, error) {
	return changeRelation(ctx, userID, r.Engine.RemoveFollower)
}
