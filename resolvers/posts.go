package resolvers

import (
	"context"

	"feedservice/graph/model"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *mutationResolver) CreatePost(ctx context.Context, input model.CreatePostInput) (*models.CreatePostPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Engine.CreatePost(ctx, viewer, input.Body)
	if err != nil {
		return nil, err
	}
	return &models.CreatePostPayload{Post: p}, nil
}

func (r *mutationResolver) Repost(ctx context.Context, postID string) (*models.CreatePostPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	id, err := parseID(models.KindPost, postID)
	if err != nil {
		return nil, err
	}
	p, err := r.Engine.Repost(ctx, viewer, id)
	if err != nil {
		return nil, err
	}
	return &models.CreatePostPayload{Post: p}, nil
}

func (r *mutationResolver) DeletePost(ctx context.Context, postID string) (*models.DeletePostPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	id, err := parseID(models.KindPost, postID)
	if err != nil {
		return nil, err
	}
	if err := r.Engine.DeletePost(ctx, viewer, id); err != nil {
		return nil, err
	}
	return &models.DeletePostPayload{DeletedPostID: postID}, nil
}
