package difftest

import (
	"context"
	"strconv"
	"time"

	"feedservice/graph"
	"feedservice/models"
)

// The world's lists: a few, their members and feeds made as the other
// lists' and the feed's are.

type list struct {
	graph.ListResolver
	w *world
}

func (r resolvers) List() graph.ListResolver { return list{w: r.w} }

// worldList is the list of id, its name from the strange strings.
func (w *world) worldList(id int64) *models.List {
	return &models.List{ID: id, OwnerID: 1, Name: w.text("list", id), MemberCount: int(w.hash("members", id) % 6),
		CreatedAt: time.Date(2026, 11, 25, 9, 0, 0, int(id), time.UTC)}
}

func (r list) Members(_ context.Context, obj *models.List, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	return query{w: r.w}.related("List.members "+strconv.FormatInt(obj.ID, 10), first, after, last, before)
}

func (r list) Feed(ctx context.Context, obj *models.List, first *int, after *string, last *int, before *string) (*models.FeedConnection, error) {
	return query{w: r.w}.Feed(ctx, first, after, last, before)
}

func (r query) Lists(_ context.Context, first *int, after *string, last *int, before *string) (*models.ListConnection, error) {
	call := []any{ptrInt(first), ptrString(after), ptrInt(last), ptrString(before)}
	n := int(r.w.hash("Query.lists") % 5)
	from, to, err := r.w.page("Query.lists", n, first, last, call...)
	if err != nil {
		return nil, err
	}
	c := &models.ListConnection{PageInfo: pageInfo(from, to, n), TotalCount: n}
	for i := from; i < to; i++ {
		c.Edges = append(c.Edges, &models.ListEdge{Cursor: "l" + strconv.Itoa(i), Node: r.w.worldList(int64(i + 1))})
	}
	return resolve(r.w, "Query.lists", c, call...)
}

func (r mutation) listPayload(field, listID string) (*models.ListPayload, error) {
	return resolve(r.w, field, &models.ListPayload{List: r.w.worldList(1 + int64(r.w.hash(field, listID)%5))}, listID)
}

func (r mutation) CreateList(_ context.Context, name string) (*models.ListPayload, error) {
	return r.listPayload("Mutation.createList", name)
}

func (r mutation) RenameList(_ context.Context, listID string, name string) (*models.ListPayload, error) {
	return r.listPayload("Mutation.renameList", listID+name)
}

func (r mutation) DeleteList(_ context.Context, listID string) (*models.DeleteListPayload, error) {
	return resolve(r.w, "Mutation.deleteList", &models.DeleteListPayload{DeletedListID: listID}, listID)
}

func (r mutation) AddToList(_ context.Context, listID string, userID string) (*models.ListPayload, error) {
	return r.listPayload("Mutation.addToList", listID+userID)
}

func (r mutation) RemoveFromList(_ context.Context, listID string, userID string) (*models.ListPayload, error) {
	return r.listPayload("Mutation.removeFromList", listID+userID)
}
