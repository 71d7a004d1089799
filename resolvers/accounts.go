package resolvers

import (
	"context"

	"feedservice/graph/model"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *mutationResolver) SignUp(ctx context.Context, input model.SignUpInput) (*models.AuthPayload, error) {
	return r.Engine.SignUp(ctx, input.Username, input.Password, input.DisplayName)
}

func (r *mutationResolver) LogIn(ctx context.Context, input model.LogInInput) (*models.AuthPayload, error) {
	return r.Engine.LogIn(ctx, input.Username, input.Password)
}

func (r *mutationResolver) LogOut(ctx context.Context) (bool, error) {
	id, err := viewer.Require(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Engine.LogOut(ctx, id); err != nil {
		return false, err
	}
	// The fields after this one, and a websocket's next operations, act
	// for no one.
	viewer.Revoke(ctx)
	return true, nil
}

func (r *mutationResolver) UpdateProfile(ctx context.Context, input model.UpdateProfileInput) (*models.User, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.ChangeProfile(ctx, viewer, models.ProfileChange{DisplayName: input.DisplayName, Bio: input.Bio, IsProtected: input.IsProtected})
}
