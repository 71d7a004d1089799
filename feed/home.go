package feed

import (
	"context"

	"feedservice/models"
	"feedservice/store"
)

// Feed pages the viewer's home feed, newest first.
func (e *Engine) Feed(ctx context.Context, viewerID int64, args PageArgs) (*models.FeedConnection, error) {
	followees, err := e.store.FolloweeIDs(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	fetch := func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]entry, error) {
		return e.pullEntries(ctx, followees, dir, bound, limit)
	}
	entries, info, err := paginate(ctx, cursorFeed, args, fetch, func(en entry) int64 { return en.Key })
	if err != nil {
		return nil, err
	}
	reposters, err := e.reposters(ctx, followees, entries)
	if err != nil {
		return nil, err
	}
	conn := &models.FeedConnection{PageInfo: info, Edges: make([]*models.FeedEdge, len(entries))}
	for i, en := range entries {
		conn.Edges[i] = &models.FeedEdge{
			Cursor: encodeCursor(cursorFeed, en.Key),
			Node:   &models.FeedItem{PostID: en.PostID, ReposterIDs: reposters[en.PostID], AddedAt: IDTime(en.Key)},
		}
	}
	return conn, nil
}
