package feed

import (
	"context"
	"errors"

	"feedservice/feed/ids"
	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/feed/text"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Lists are private: every read and change names the viewer as the
// owner, so another user's list is as absent (nil, or NOT_FOUND). They are
// read from the primary: a list changes only by its owner's hand, who
// must see the change at once, and no event carries it anywhere.

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
	return e.listPayload(ctx, viewerID, listID)
}

// DeleteList deletes one of the viewer's lists.
func (e *Engine) DeleteList(ctx context.Context, viewerID, listID int64) (*models.DeleteListPayload, error) {
	if err := e.store.DeleteList(ctx, viewerID, listID); err != nil {
		return nil, listError(err)
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
	return e.listPayload(ctx, viewerID, listID)
}

// RemoveFromList takes userID out of one of the viewer's lists.
// Idempotent.
func (e *Engine) RemoveFromList(ctx context.Context, viewerID, listID, userID int64) (*models.ListPayload, error) {
	if err := e.store.RemoveListMember(ctx, viewerID, listID, userID); err != nil {
		return nil, listError(err)
	}
	return e.listPayload(ctx, viewerID, listID)
}

// List is the viewer's list listID; nil when the viewer has none of that
// id (another user's included).
func (e *Engine) List(ctx context.Context, viewerID, listID int64) (*models.List, error) {
	return e.store.ListByID(ctx, viewerID, listID)
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
// feed would hold if they followed only its members. It is the pull
// path's merge (package pull) over a view narrowed to the members, with
// the viewer's mutes and blocks hidden as in home.
func (e *Engine) ListFeed(ctx context.Context, viewerID int64, l *models.List, args paging.PageArgs) (*models.FeedConnection, error) {
	kind := paging.CursorListFeed(l.ID)
	if _, err := args.Window(kind); err != nil {
		return nil, err
	}
	members, err := e.store.ListMemberIDs(ctx, viewerID, l.ID)
	if err != nil {
		return nil, err
	}
	followees, hidden, err := e.store.FeedView(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	view := pull.NewView(members, hidden)
	following := pull.NewView(followees, nil).Followees // sorted, for the protection filter
	entries, info, err := paging.Paginate(ctx, e.metrics, kind, args, e.reads.VisibleTo(viewerID, nil, following, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
		return e.pull.Entries(ctx, view, dir, bound, limit)
	}), func(en pull.Entry) int64 { return en.Key })
	if err != nil {
		return nil, err
	}
	if err := e.pull.AddReposters(ctx, viewerID, view.Followees, entries); err != nil {
		return nil, err
	}
	conn := &models.FeedConnection{PageInfo: info, Edges: make([]*models.FeedEdge, len(entries))}
	for i, en := range entries {
		conn.Edges[i] = &models.FeedEdge{
			Cursor: paging.EncodeCursor(kind, en.Key),
			Node:   &models.FeedItem{PostID: en.PostID, ReposterIDs: en.Reposters, AddedAt: ids.IDTime(en.Key)},
		}
	}
	return conn, nil
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
