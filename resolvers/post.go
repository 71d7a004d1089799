package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/internal/apperr"
	"feedservice/models"
)

func (r *postResolver) Author(ctx context.Context, obj *models.Post) (*models.User, error) {
	u, err := dataloader.For(ctx).Users.Load(ctx, obj.AuthorID)
	if u == nil && err == nil {
		return nil, apperr.NotFound("the author of post %d no longer exists", obj.ID)
	}
	return u, err
}

// RepostOf is null for a post that is no repost, for a repost whose
// original was deleted, and for one whose original's author blocks the
// viewer or is blocked by them (the repost itself stays, so that every
// connection keeps its edges, cursors and counts).
func (r *postResolver) RepostOf(ctx context.Context, obj *models.Post) (*models.Post, error) {
	if obj.RepostOfID == nil {
		return nil, nil
	}
	l := dataloader.For(ctx)
	p, err := l.Posts.Load(ctx, *obj.RepostOfID)
	if p == nil || p.Deleted() || err != nil {
		return nil, err
	}
	if ok, err := l.Readable(ctx, p); !ok {
		return nil, err
	}
	return p, nil
}
