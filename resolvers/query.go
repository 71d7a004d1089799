package resolvers

import (
	"context"

	"feedservice/dataloader"
	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *queryResolver) Node(ctx context.Context, id string) (models.Node, error) {
	kind, n, err := parseAnyID(id)
	if err != nil {
		return nil, err
	}
	return r.loadNode(ctx, kind, n)
}

func (r *queryResolver) Nodes(ctx context.Context, ids []string) ([]models.Node, error) {
	if len(ids) > config.MaxNodesPerRequest {
		return nil, apperr.BadInput("nodes takes at most %d ids", config.MaxNodesPerRequest)
	}
	// A repeated id is refused, not answered again: its answer would cost
	// its client only the id's bytes in the document, whatever it selects.
	type node struct {
		kind string
		id   int64
	}
	seen := make(map[node]bool, len(ids))
	nodes := make([]models.Node, len(ids))
	for i, id := range ids {
		kind, n, err := parseAnyID(id)
		if err != nil {
			return nil, err
		}
		if seen[node{kind, n}] {
			return nil, apperr.BadInput("nodes was given the id %s more than once; ask for each node once", apperr.Quote(id))
		}
		seen[node{kind, n}] = true
		if nodes[i], err = r.loadNode(ctx, kind, n); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// loadNode loads a node through the loaders; nil (not an error) for an
// unknown id or a deleted post, as Relay expects of node(), and for a post
// whose author blocks the viewer or is blocked by them: to the viewer it
// is as absent; and for a list that is not the viewer's (lists are
// private).
func (r *queryResolver) loadNode(ctx context.Context, kind string, id int64) (models.Node, error) {
	l := dataloader.For(ctx)
	switch kind {
	case models.KindList:
		owner := viewer.ID(ctx)
		if owner == 0 {
			return nil, nil
		}
		list, err := r.Engine.List(ctx, owner, id)
		if list == nil || err != nil {
			return nil, err
		}
		return list, nil
	case models.KindUser:
		u, err := l.Users.Load(ctx, id)
		if u == nil || err != nil {
			return nil, err
		}
		return u, nil
	default:
		p, err := l.Posts.Load(ctx, id)
		if p == nil || p.Deleted() || err != nil {
			return nil, err
		}
		if ok, err := l.Readable(ctx, p); !ok {
			return nil, err
		}
		return p, nil
	}
}

func (r *queryResolver) Viewer(ctx context.Context) (*models.User, error) {
	id := viewer.ID(ctx)
	if id == 0 {
		return nil, nil
	}
	return dataloader.For(ctx).Users.Load(ctx, id)
}

func (r *queryResolver) User(ctx context.Context, username string) (*models.User, error) {
	return r.Engine.UserByUsername(ctx, username)
}

func (r *queryResolver) Feed(ctx context.Context, first *int, after *string, last *int, before *string) (*models.FeedConnection, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Engine.Feed(ctx, viewer, paging.PageArgs{First: first, After: after, Last: last, Before: before})
	if err == nil {
		err = dataloader.For(ctx).PrimeFeed(ctx, conn)
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}
