package feed

import (
	"context"

	"feedservice/feed/livemsg"
	"feedservice/feed/paging"
)

// MarkFeedRead moves the viewer's read marker to the entry of the feed
// cursor upTo, or to the newest entry when upTo is nil, and returns the
// unread count after it. The marker never moves backwards.
func (e *Engine) MarkFeedRead(ctx context.Context, viewerID int64, upTo *string) (int, error) {
	var key int64
	if upTo != nil {
		var err error
		if key, err = paging.DecodeCursor(paging.CursorFeed, *upTo); err != nil {
			return 0, err
		}
	} else {
		one := 1
		newest, err := e.Feed(ctx, viewerID, paging.PageArgs{First: &one})
		if err != nil {
			return 0, err
		}
		if len(newest.Edges) > 0 {
			key, _ = paging.DecodeCursor(paging.CursorFeed, newest.Edges[0].Cursor)
		}
	}
	moved, err := e.store.MoveFeedReadKey(ctx, viewerID, key, e.now().UTC())
	if err != nil {
		return 0, err
	}
	if moved {
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
		e.stream.Poke()
	}
	e.pub.Publish(ctx, e.keys.ReaderChannel(viewerID), livemsg.Change()) // every device of the viewer
	return e.UnreadCount(ctx, viewerID)
}
