package timeline

import (
	"context"
	"errors"
	"feedservice/feed/pull"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// Feed pages the viewer's home feed, newest first. Pull mode reads MySQL;
// push and hybrid modes read the inbox (rebuilding a missing one) merged
// with followed celebrities' outboxes, and fall back to MySQL when Redis
// fails, so a read is slower then but still right.
func (reads *Reads) Feed(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.FeedConnection, error) {
	if _, err := args.Window(paging.CursorFeed); err != nil {
		return nil, err // bad arguments are the client's, whatever the mode
	}
	path := metrics.ReadPull
	var (
		entries []pull.Entry
		info    *models.PageInfo
		posts   map[int64]*models.Post // the posts the read already loaded
		err     error
	)
	if reads.d.Cfg.Mode != config.ModePull {
		path = metrics.ReadInbox
		entries, info, posts, err = reads.feedFromInbox(ctx, viewerID, args, &path)
		var re redisx.Error
		if ctx.Err() != nil {
			return nil, ctx.Err() // the client went away: nothing to fall back for
		}
		if errors.As(err, &re) {
			reads.d.Log.WarnContext(ctx, "feed read falls back to MySQL", "viewer", viewerID, "err", re.Err)
			path = metrics.ReadPullFallback
		} else if err != nil {
			return nil, err
		}
	}
	var followees []int64
	if path == metrics.ReadPull || path == metrics.ReadPullFallback {
		lagging := reads.rep.AllowLag(ctx, viewerID)
		view, err := reads.viewFromMySQL(lagging, viewerID)
		if err != nil {
			return nil, err
		}
		followees = view.Followees
		// The page's reads share the one read-your-writes check above.
		fetch := reads.VisibleTo(viewerID, nil, view.Followees, func(_ context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
			return reads.pull.Entries(lagging, view, dir, bound, limit)
		})
		if entries, info, err = paging.Paginate(ctx, reads.d.Metrics, paging.CursorFeed, args, fetch, entryKey); err != nil {
			return nil, err
		}
	}
	reads.d.Metrics.Reads.WithLabelValues(path).Inc()
	if err := reads.pull.AddReposters(ctx, viewerID, followees, entries); err != nil {
		return nil, err
	}
	conn := &models.FeedConnection{PageInfo: info, Edges: make([]*models.FeedEdge, len(entries))}
	for i, en := range entries {
		conn.Edges[i] = &models.FeedEdge{
			Cursor: paging.EncodeCursor(paging.CursorFeed, en.Key),
			Node:   &models.FeedItem{PostID: en.PostID, ReposterIDs: en.Reposters, AddedAt: ids.IDTime(en.Key), LoadedPost: posts[en.PostID]},
		}
	}
	return conn, nil
}

func (reads *Reads) feedFromInbox(ctx context.Context, viewerID int64, args paging.PageArgs, path *string) ([]pull.Entry, *models.PageInfo, map[int64]*models.Post, error) {
	r, err := reads.state(ctx, viewerID, earlyRead(args, paging.CursorFeed))
	if err != nil {
		return nil, nil, nil, err
	}
	if r.rebuilt {
		*path = metrics.ReadRebuild
	}
	fetch := reads.VisibleTo(viewerID, r.posts, r.knownFollowees(), func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
		return reads.fetchMerged(ctx, r, dir, bound, limit)
	})
	entries, info, err := paging.Paginate(ctx, reads.d.Metrics, paging.CursorFeed, args, fetch, entryKey)
	if err == nil && r.snap == nil {
		reads.foldLater(viewerID, r.following, r.celebs)
	}
	return entries, info, r.posts, err
}

func entryKey(en pull.Entry) int64 { return en.Key }

// viewFromMySQL is the reader's view (whom their feed counts through, and
// whose posts it hides) as MySQL has it.
func (reads *Reads) viewFromMySQL(ctx context.Context, reader int64) (pull.View, error) {
	followees, hidden, err := reads.d.Store.FeedView(ctx, reader)
	if err != nil {
		return pull.View{}, err
	}
	return pull.NewView(followees, hidden), nil
}
