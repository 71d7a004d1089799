package feed

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
)

// A returning reader (whose inbox expired) gets their first page from two
// statements of the page's size (their view, then a window of their
// followees' events), while the inbox's rebuild, in the
// background, has its write held back: the answer waits for neither. The
// page is the feed MySQL holds; once the write is let go, the inbox is
// whole and the next page asks MySQL nothing.
func TestReturningReaderAnswersBeforeTheInboxIsWritten(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			// The statement counter is registered before the engine's
			// dispatcher and workers run queries on the store.
			st := newTestStore(t)
			sql := ctSQL(t, st)
			rdb, prefix := testenv.Redis(t)
			te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.Mode = mode; c.InboxCap = 16 })
			reader, other := te.user("reader"), te.user("other")
			var authors []int64
			for i := range 3 {
				authors = append(authors, te.user("author"+strconv.Itoa(i)))
				te.follow(reader, authors[i])
			}
			te.follow(other, authors[0])
			for i := range 12 {
				te.post(authors[i%3], "post "+strconv.Itoa(i))
			}
			outside := te.post(other, "by someone the reader does not follow")
			te.repost(authors[1], outside)
			te.repost(authors[2], outside)
			te.settle()
			want := te.pulledFeed(reader)
			if len(want) < 10 {
				t.Fatalf("the pulled feed holds %d entries; the test wants 10 or more", len(want))
			}

			te.forgetInbox(t, reader)
			// The rebuild's write of its temporary inbox is held.
			hook := testenv.HoldCommands(testenv.IsCommand("zadd", te.keys.InboxTemp(reader)))
			te.redis.AddHook(hook)
			defer hook.Release()
			size := 5
			ctx, cancel := context.WithTimeout(sql.ctx(), testenv.Scale(5*time.Second))
			defer cancel()
			conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &size})
			if err != nil {
				t.Fatalf("the first page, while the rebuild's write is held: %v", err)
			}
			select {
			case <-hook.Held():
			case <-ctx.Done():
				t.Fatal("the rebuild never wrote the inbox")
			}
			// The view, then the followees' events of the last day (the
			// test's posts are all in it).
			if n := sql.n.Load(); n != 2 {
				t.Errorf("the returning reader's page ran %d SQL statements, want 2", n)
			}
			var got []feedItem
			for _, e := range conn.Edges {
				key, _ := paging.DecodeCursor(paging.CursorFeed, e.Cursor)
				got = append(got, feedItem{Post: e.Node.PostID, Reposters: e.Node.ReposterIDs, Key: key})
			}
			if !slices.EqualFunc(got, want[:size], feedItemEqual) {
				t.Errorf("the first page, answered before the write:\n got %v\nwant %v", got, want[:size])
			}
			if n, err := te.redis.Exists(context.Background(), te.keys.Inbox(reader)).Result(); err != nil || n != 0 {
				t.Fatalf("the inbox exists (%d, %v) while its write is held", n, err)
			}

			hook.Release()
			te.settle() // waits for the background write
			te.waitInbox(t, reader)
			sql.n.Store(0)
			var all []feedItem
			var after *string
			for page := 0; page == 0 || after != nil; page++ {
				conn, err := te.Feed(sql.ctx(), reader, paging.PageArgs{First: &size, After: after})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range conn.Edges {
					key, _ := paging.DecodeCursor(paging.CursorFeed, e.Cursor)
					all = append(all, feedItem{Post: e.Node.PostID, Reposters: e.Node.ReposterIDs, Key: key})
				}
				after = nil
				if conn.PageInfo.HasNextPage {
					after = conn.PageInfo.EndCursor
				}
			}
			if got := all; !slices.EqualFunc(got, want, feedItemEqual) {
				t.Errorf("the feed read from the rebuilt inbox:\n got %v\nwant %v", got, want)
			}
			if n := sql.n.Load(); n != 0 {
				t.Errorf("pages of the rebuilt inbox ran %d SQL statements, want 0", n)
			}
		})
	}
}
