package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/paging"
	"feedservice/graph"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *Resolver) List() graph.ListResolver { return &listResolver{r} }

type listResolver struct{ *Resolver }

func (r *mutationResolver) CreateList(ctx context.Context, name string) (*models.ListPayload, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.CreateList(ctx, viewer, name)
}

func (r *mutationResolver) RenameList(ctx context.Context, listID string, name string) (*models.ListPayload, error) {
	viewer, list, err := viewerAndList(ctx, listID)
	if err != nil {
		return nil, err
	}
	return r.Engine.RenameList(ctx, viewer, list, name)
}

func (r *mutationResolver) DeleteList(ctx context.Context, listID string) (*models.DeleteListPayload, error) {
	viewer, list, err := viewerAndList(ctx, listID)
	if err != nil {
		return nil, err
	}
	return r.Engine.DeleteList(ctx, viewer, list)
}

func (r *mutationResolver) AddToList(ctx context.Context, listID string, userID string) (*models.ListPayload, error) {
	viewer, list, err := viewerAndList(ctx, listID)
	if err != nil {
		return nil, err
	}
	user, err := parseID(models.KindUser, userID)
	if err != nil {
		return nil, err
	}
	return r.Engine.AddToList(ctx, viewer, list, user)
}

func (r *mutationResolver) RemoveFromList(ctx context.Context, listID string, userID string) (*models.ListPayload, error) {
	viewer, list, err := viewerAndList(ctx, listID)
	if err != nil {
		return nil, err
	}
	user, err := parseID(models.KindUser, userID)
	if err != nil {
		return nil, err
	}
	return r.Engine.RemoveFromList(ctx, viewer, list, user)
}

func (r *queryResolver) Lists(ctx context.Context, first *int, after *string, last *int, before *string) (*models.ListConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.Lists(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

// Members and Feed are asked only of a list the viewer owns: node and
// lists answer no other.
func (r *listResolver) Members(ctx context.Context, obj *models.List, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	return r.Engine.ListMembers(ctx, viewer, obj, paging.PageArgs{First: first, After: after, Last: last, Before: before})
}

func (r *listResolver) Feed(ctx context.Context, obj *models.List, first *int, after *string, last *int, before *string) (*models.FeedConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Engine.ListFeed(ctx, viewer, obj, paging.PageArgs{First: first, After: after, Last: last, Before: before})
	if err == nil {
		err = dataloader.For(ctx).PrimeFeed(ctx, conn)
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// viewerAndList checks the viewer and the list id of a list change.
func viewerAndList(ctx context.Context, listID string) (int64, int64, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return 0, 0, err
	}
	list, err := parseID(models.KindList, listID)
	return viewer, list, err
}
