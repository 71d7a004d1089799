package feed

import (
	"context"
	"errors"

	"feedservice/feed/paging"
	"feedservice/feed/text"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Lists are private: every read and change names the viewer as the
// owner, so another user's list is as absent (nil, or NOT_FOUND). A list
// and its feed are read from the cache tiers (feed/lists, and
// timeline.Reads.ListFeed), whose copy of the owner's lists every change
// of them drops after its commit, before it answers (an unfollow's or a
// block's stream event drops it again); the rest reads the primary: a list
// changes only by its owner's hand, who must see the change at once.

// CreateList makes a list of the viewer's named name.
func (e *Engine) CreateList(ctx context.Context, viewerID int64, name string) (*models.ListPayload, error) {
	name, err := text.ListName(name)
	if err != nil {
		return nil, err
	}
	l, err := e.store.CreateList(ctx, viewerID, e.ids.Next(), name, e.now().UTC(), e.cfg.MaxListsPerUser)
	if errors.Is(err, store.ErrLimitReached) {
		return nil, apperr.BadInput("you have %d lists, the most one user may keep: delete one first", e.cfg.MaxListsPerUser)
	}
	if err != nil {
		return nil, listError(err)
	}
	if err := e.listsChanged(ctx, viewerID); err != nil {
		return nil, err
	}
	return &models.ListPayload{List: l}, nil
}

// RenameList renames one of the viewer's lists.
func (e *Engine) RenameList(ctx context.Context, viewerID, listID int64, name string) (*models.ListPayload, error) {
	name, err := text.ListName(name)
	if err != nil {
		return nil, err
	}
	if err := e.store.RenameList(ctx, viewerID, listID, name); err != nil {
		return nil, listError(err)
	}
	if err := e.listsChanged(ctx, viewerID); err != nil {
		return nil, err
	}
	return e.listPayload(ctx, viewerID, listID)
}

// DeleteList deletes one of the viewer's lists.
func (e *Engine) DeleteList(ctx context.Context, viewerID, listID int64) (*models.DeleteListPayload, error) {
	if err := e.store.DeleteList(ctx, viewerID, listID); err != nil {
		return nil, listError(err)
	}
	if err := e.listsChanged(ctx, viewerID); err != nil {
		return nil, err
	}
	return &models.DeleteListPayload{DeletedListID: models.NodeID(models.KindList, listID)}, nil
}

// AddToList adds userID, whom the viewer must follow, to one of the
// viewer's lists. Idempotent.
func (e *Engine) AddToList(ctx context.Context, viewerID, listID, userID int64) (*models.ListPayload, error) {
	l, err := e.store.ListByID(ctx, viewerID, listID)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, listError(store.ErrNotFound)
	}
	users, err := e.Users(ctx, []int64{userID})
	if err != nil {
		return nil, err
	}
	if users[0] == nil {
		return nil, apperr.NotFound("no such user")
	}
	_, err = e.store.AddListMember(ctx, viewerID, listID, userID, e.ids.Next(), e.now().UTC(), e.cfg.MaxListMembers)
	if errors.Is(err, store.ErrLimitReached) {
		return nil, apperr.BadInput("this list has %d members, the most a list may hold: remove one first", e.cfg.MaxListMembers)
	}
	if err != nil {
		return nil, listError(err)
	}
	if err := e.listsChanged(ctx, viewerID); err != nil {
		return nil, err
	}
	return e.listPayload(ctx, viewerID, listID)
}

// RemoveFromList takes userID out of one of the viewer's lists.
// Idempotent.
func (e *Engine) RemoveFromList(ctx context.Context, viewerID, listID, userID int64) (*models.ListPayload, error) {
	if err := e.store.RemoveListMember(ctx, viewerID, listID, userID); err != nil {
		return nil, listError(err)
	}
	if err := e.listsChanged(ctx, viewerID); err != nil {
		return nil, err
	}
	return e.listPayload(ctx, viewerID, listID)
}

// List is the viewer's list listID; nil when the viewer has none of that
// id (another user's included). It reads the cache tiers' copy of the
// viewer's lists (feed/lists).
func (e *Engine) List(ctx context.Context, viewerID, listID int64) (*models.List, error) {
	owned, err := e.lists.Of(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	l := owned.Find(listID)
	if l == nil {
		return nil, nil
	}
	return &models.List{OwnerID: viewerID, ID: l.ID, Name: l.Name, CreatedAt: l.CreatedAt, MemberCount: len(l.Members)}, nil
}

// Lists pages the viewer's lists, newest first.
func (e *Engine) Lists(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.ListConnection, error) {
	lists, info, err := paging.Paginate(ctx, e.metrics, paging.CursorLists, args, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]*models.List, error) {
		return e.store.ListsPage(ctx, viewerID, dir, bound, limit)
	}, func(l *models.List) int64 { return l.ID })
	if err != nil {
		return nil, err
	}
	total, err := e.store.ListCount(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	conn := &models.ListConnection{PageInfo: info, TotalCount: total, Edges: make([]*models.ListEdge, len(lists))}
	for i, l := range lists {
		conn.Edges[i] = &models.ListEdge{Cursor: paging.EncodeCursor(paging.CursorLists, l.ID), Node: l}
	}
	return conn, nil
}

// ListMembers pages the members of the viewer's list l, most recently
// added first.
func (e *Engine) ListMembers(ctx context.Context, viewerID int64, l *models.List, args paging.PageArgs) (*models.RelatedUserConnection, error) {
	count := func(context.Context, int64) (int, error) { return l.MemberCount, nil }
	return e.relatedUsers(ctx, paging.CursorMembers, args, count, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.ListMembersPage(ctx, viewerID, l.ID, dir, bound, limit)
	}, viewerID)
}

// ListFeed pages the feed of the viewer's list l: what the viewer's home
// feed would hold if they followed only its members (see
// timeline.Reads.ListFeed), its members read from the cache tiers' copy
// of the viewer's lists.
func (e *Engine) ListFeed(ctx context.Context, viewerID int64, l *models.List, args paging.PageArgs) (*models.FeedConnection, error) {
	owned, err := e.lists.Of(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	var members []int64
	if found := owned.Find(l.ID); found != nil {
		members = found.Members
	}
	return e.reads.ListFeed(ctx, viewerID, l.ID, members, args)
}

// listsChanged drops the cache tiers' copies of owners' lists after a
// change of them committed. A list's own mutation answers its failure (see
// package lists), so that the owner retries; the relations' changes log it.
func (e *Engine) listsChanged(ctx context.Context, owners ...int64) error {
	err := e.lists.Changed(ctx, owners...)
	if err != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "drop the copy of a user's lists", "owners", owners, "err", err)
	}
	return err
}

// listPayload answers a list change with the list as now stored.
func (e *Engine) listPayload(ctx context.Context, viewerID, listID int64) (*models.ListPayload, error) {
	l, err := e.store.ListByID(ctx, viewerID, listID)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, listError(store.ErrNotFound)
	}
	return &models.ListPayload{List: l}, nil
}

// listError is the client's face of a list change's refusal.
func listError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apperr.NotFound("no such list")
	case errors.Is(err, store.ErrNotFollowing):
		return apperr.New(apperr.CodeForbidden, "a list's members are people you follow: follow this user first")
	}
	return err
}
