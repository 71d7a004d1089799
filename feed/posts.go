package feed

import (
	"context"
	"errors"
	"slices"

	"feedservice/feed/paging"
	"feedservice/feed/text"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// CreatePost publishes a post by the viewer.
func (e *Engine) CreatePost(ctx context.Context, viewerID int64, body string) (*models.Post, error) {
	body, err := text.PostBody(body)
	if err != nil {
		return nil, err
	}
	p := &models.Post{ID: e.ids.NextBeside(viewerID), AuthorID: viewerID, Body: body, CreatedAt: e.now().UTC()}
	if err := e.store.CreatePost(ctx, p); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, apperr.ErrUnauthenticated
		}
		return nil, err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, []int64{p.ID})
	e.afterCommit(ctx, nil)
	return p, nil
}

// Repost reposts postID (or, for a repost, its original) as the viewer.
// Reposting the same post again returns the existing repost.
func (e *Engine) Repost(ctx context.Context, viewerID, postID int64) (*models.Post, error) {
	target, err := e.cache.LivePost(ctx, postID)
	if err != nil {
		return nil, err
	}
	original := target.OriginalID()
	if err := e.readableForRepost(ctx, viewerID, target); err != nil {
		return nil, err
	}
	p := &models.Post{ID: e.ids.NextBeside(viewerID), AuthorID: viewerID, RepostOfID: &original, CreatedAt: e.now().UTC()}
	p, created, err := e.store.Repost(ctx, p)
	if created {
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, []int64{p.ID, original})
		e.afterCommit(ctx, nil)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("that post does not exist or was deleted")
	}
	return p, err
}

// readableForRepost refuses, as if it did not exist, a target that node
// would not show the viewer: by a user on the other side of a block from
// them, or a repost of such a user's post; and a protected account's post
// (see repostAllowed).
func (e *Engine) readableForRepost(ctx context.Context, viewerID int64, target *models.Post) error {
	authors := []int64{target.AuthorID}
	if target.RepostOfID != nil {
		original, err := e.cache.LivePost(ctx, *target.RepostOfID)
		if err != nil {
			return err
		}
		authors = append(authors, original.AuthorID)
	}
	blocked, err := e.BlockedEitherWayAmong(ctx, viewerID, slices.DeleteFunc(slices.Clone(authors), func(id int64) bool { return id == viewerID }))
	if err != nil {
		return err
	}
	if len(blocked) > 0 {
		return apperr.NotFound("that post does not exist or was deleted")
	}
	return e.repostAllowed(ctx, viewerID, authors)
}

// DeletePost deletes the viewer's post. Deleting it again succeeds.
func (e *Engine) DeletePost(ctx context.Context, viewerID, postID int64) error {
	p, err := e.store.DeletePost(ctx, postID, viewerID, e.now().UTC())
	if err == nil {
		// The tombstone is in Redis before the mutation answers: no read
		// that follows shows the post.
		posts := []int64{p.ID}
		if p.RepostOfID != nil {
			posts = append(posts, *p.RepostOfID)
		}
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, posts)
		e.afterCommit(ctx, nil)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apperr.NotFound("that post does not exist")
	case errors.Is(err, store.ErrForbidden):
		return apperr.New(apperr.CodeForbidden, "only its author may delete a post")
	}
	return err
}

// Posts loads posts by id, in the order of ids; nil where unknown, from
// the cache tiers. Deleted posts are included: callers decide how they
// show. The posts are shared with other readers: read them only.
func (e *Engine) Posts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	return e.cache.Posts(ctx, ids)
}

// Timeline pages the user's own posts and reposts, newest first, as the
// viewer (0 when signed out) may see them: none when either blocks the
// other (an empty connection, not an error), and none of a protected
// user's to whom is not their follower (its totalCount stays public).
func (e *Engine) Timeline(ctx context.Context, viewerID int64, user *models.User, args paging.PageArgs) (*models.PostConnection, error) {
	if viewerID != 0 && viewerID != user.ID {
		blocked, err := e.store.BlockedEitherWay(e.rep.AllowLag(ctx, viewerID), viewerID, user.ID)
		if err != nil {
			return nil, err
		}
		if blocked {
			if _, err := args.Window(paging.CursorTimeline); err != nil {
				return nil, err // bad arguments are still the client's
			}
			return &models.PostConnection{PageInfo: &models.PageInfo{}, Edges: []*models.PostEdge{}}, nil
		}
	}
	if hidden, err := e.timelineHidden(ctx, viewerID, user); err != nil || hidden {
		if _, werr := args.Window(paging.CursorTimeline); werr != nil {
			return nil, werr
		}
		return &models.PostConnection{PageInfo: &models.PageInfo{}, TotalCount: user.PostCount, Edges: []*models.PostEdge{}}, err
	}
	fetch := func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]*models.Post, error) {
		return e.store.TimelinePage(e.rep.AllowLag(ctx, user.ID), user.ID, dir, bound, limit)
	}
	posts, info, err := paging.Paginate(ctx, e.metrics, paging.CursorTimeline, args, fetch, func(p *models.Post) int64 { return p.ID })
	if err != nil {
		return nil, err
	}
	conn := &models.PostConnection{PageInfo: info, TotalCount: user.PostCount, Edges: make([]*models.PostEdge, len(posts))}
	for i, p := range posts {
		conn.Edges[i] = &models.PostEdge{Cursor: paging.EncodeCursor(paging.CursorTimeline, p.ID), Node: p}
	}
	return conn, nil
}
