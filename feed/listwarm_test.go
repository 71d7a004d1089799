package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// TestWarmListPageRunsNoSQL: in push and hybrid modes (a member a
// celebrity in hybrid), a warm list (node) and a warm first and deep page
// of its feed run no SQL statement, with a muted member, a blocked
// followee, members' reposts of others' posts, of each other's and of a
// protected author's, and a deleted post in effect; and the pages are those
// the pull path reads from MySQL.
func TestWarmListPageRunsNoSQL(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			st := newTestStore(t)
			sql := ctSQL(t, st) // before the engine runs: gorm's callbacks are not safe to change under it
			rdb, prefix := testenv.Redis(t)
			te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) {
				c.Mode, c.CelebrityFollowers = mode, 3
				c.InboxCap = 100              // every page within the outboxes' window
				c.LocalCacheTTL = time.Minute // a warm page's statements, not revalidation's
			})
			// The reference: the pull path on the same database, quiet.
			refRedis, refPrefix := testenv.Redis(t)
			ref := startTestEngine(t, st, refRedis, refPrefix, func(c *config.Config) {
				c.Mode, c.Dispatch, c.FanoutWorkers = config.ModePull, false, 0
			})

			r := te.user("reader")
			var members []int64
			for i := range 4 {
				members = append(members, te.user(fmt.Sprintf("member%d", i)))
			}
			star, muted, blocked, outsider, guarded := te.user("star"), te.user("muted"), te.user("blocked"), te.user("outsider"), te.user("guarded")
			for i := range 3 {
				te.follow(te.user(fmt.Sprintf("fan%d", i)), star) // with the reader's, a celebrity in hybrid mode
			}
			for _, u := range append(slices.Clone(members), star, muted, blocked) {
				te.follow(r, u)
			}
			te.touchFeed(r)
			l := te.createList(r, "warm")
			te.addToList(r, l, append(slices.Clone(members), star, muted, blocked)...)
			closed := te.post(guarded, "before protection")
			te.repost(members[0], closed)
			for i := range 8 {
				for _, a := range append(slices.Clone(members), star, muted, blocked) {
					te.post(a, fmt.Sprintf("post %d", i))
				}
				o := te.post(outsider, fmt.Sprintf("outsider %d", i))
				te.repost(members[i%4], o)
				if i%2 == 0 {
					te.repost(members[(i+1)%4], o)
					te.repost(muted, te.post(outsider, fmt.Sprintf("for the muted %d", i)))
				}
			}
			own := te.post(members[1], "reposted by another member")
			te.repost(members[2], own)
			gone := te.post(members[3], "deleted")
			if err := te.DeletePost(context.Background(), members[3], gone); err != nil {
				t.Fatal(err)
			}
			te.mute(r, muted)
			te.block(r, blocked)
			protect := true
			if _, err := te.ChangeProfile(context.Background(), guarded, models.ProfileChange{IsProtected: &protect}); err != nil {
				t.Fatal(err)
			}
			te.settle()

			type page struct {
				name string
				args paging.PageArgs
			}
			first, size := 20, 8
			firstPage := page{"first page", paging.PageArgs{First: &first}}
			cold, err := te.ListFeed(context.Background(), r, te.list(r, l), paging.PageArgs{First: &size})
			if err != nil {
				t.Fatal(err)
			}
			second, err := te.ListFeed(context.Background(), r, te.list(r, l), paging.PageArgs{First: &size, After: cold.PageInfo.EndCursor})
			if err != nil {
				t.Fatal(err)
			}
			deepPage := page{"third page", paging.PageArgs{First: &size, After: second.PageInfo.EndCursor}}
			for _, p := range []page{firstPage, deepPage} {
				te.ListFeed(context.Background(), r, te.list(r, l), p.args) // cold: fills every tier
				before := sql.n.Load()
				got, err := te.List(sql.ctx(), r, l.ID)
				if err != nil || got == nil || got.MemberCount != 6 {
					t.Fatalf("the warm list: %+v, %v; want it with 6 members (the block took one out)", got, err)
				}
				conn, err := te.ListFeed(sql.ctx(), r, got, p.args)
				if err != nil {
					t.Fatal(err)
				}
				if n := sql.n.Load() - before; n != 0 {
					t.Errorf("%s: a warm list and %s of its feed ran %d SQL statements, want 0", mode, p.name, n)
				}
				want, err := ref.ListFeed(context.Background(), r, got, p.args)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := listEdges(t, l, conn), listEdges(t, l, want); !slices.EqualFunc(g, w, feedItemEqual) || len(g) != *p.args.First {
					t.Fatalf("%s: the warm %s\n got %v\nwant %v (the pull path's)", mode, p.name, g, w)
				}
				if conn.PageInfo.HasNextPage != want.PageInfo.HasNextPage || conn.PageInfo.HasPreviousPage != want.PageInfo.HasPreviousPage {
					t.Fatalf("%s: the warm %s's page info %+v, the pull path's %+v", mode, p.name, conn.PageInfo, want.PageInfo)
				}
			}
		})
	}
}

// listEdges are the entries of a page of list l's feed.
func listEdges(t testing.TB, l *models.List, conn *models.FeedConnection) []feedItem {
	t.Helper()
	out := make([]feedItem, len(conn.Edges))
	for i, e := range conn.Edges {
		key, err := paging.DecodeCursor(paging.CursorListFeed(l.ID), e.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = feedItem{Post: e.Node.PostID, Reposters: e.Node.ReposterIDs, Key: key}
	}
	return out
}

// BenchmarkListPage reads, side by side, warm first pages of the home feed
// (page=home) and of a list holding every followee (page=list: the same
// entries) of BenchmarkFeedPage's reader of 200 followees, in push and
// hybrid modes, on one client, with the engine's default LocalCacheTTL:
// so the list's page pays, beside its merge over 200 outboxes, the outboxes
// read again once their copies are a LocalCacheTTL old.
//
//	go test -run '^$' -bench ListPage ./feed
func BenchmarkListPage(b *testing.B) {
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		b.Run("mode="+string(mode), func(b *testing.B) {
			te, reader, authors, _ := feedFixture(b, mode, 200)
			l, err := te.CreateList(context.Background(), reader, "everyone")
			if err != nil {
				b.Fatal(err)
			}
			for _, a := range authors {
				if _, err := te.AddToList(context.Background(), reader, l.List.ID, a); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("page=home", func(b *testing.B) { benchFirstPages(b, te, reader) })
			b.Run("page=list", func(b *testing.B) {
				size := benchPageSize
				read := func() {
					conn, err := te.ListFeed(context.Background(), reader, l.List, paging.PageArgs{First: &size})
					if err != nil || len(conn.Edges) != size {
						b.Fatalf("a list page: %v, %v", conn, err)
					}
				}
				for start := time.Now(); time.Since(start) < benchWarmUp; {
					read()
				}
				b.ReportAllocs()
				for b.Loop() {
					read()
				}
			})
		})
	}
}

// A list page read once its members' outbox copies are older than
// LocalCacheTTL takes them again for their versions, unchanged, instead of
// reading the outboxes whole (two ZRANGEBYSCOREs each, in the read script:
// Redis's own count, INFO commandstats, on a private redis-server); and an
// outbox that changed is read again, so its new post shows.
func TestListPageRevalidatesOutboxesByVersion(t *testing.T) {
	t.Parallel()
	server := testenv.StartRedis(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	ttl := testenv.Scale(200 * time.Millisecond)
	te := startTestEngine(t, newTestStore(t), rdb, "revalidate:", func(c *config.Config) {
		c.Mode, c.InboxCap, c.LocalCacheTTL = config.ModePush, 100, ttl
	})
	r := te.user("reader")
	var members []int64
	for i := range 10 {
		members = append(members, te.user(fmt.Sprintf("member%d", i)))
		te.follow(r, members[i])
	}
	l := te.createList(r, "all")
	te.addToList(r, l, members...)
	for i := range 3 {
		for _, m := range members {
			te.post(m, fmt.Sprintf("post %d", i))
		}
	}
	te.settle()
	first := 5
	page := func() []int64 {
		t.Helper()
		conn, err := te.ListFeed(context.Background(), r, te.list(r, l), paging.PageArgs{First: &first})
		if err != nil || len(conn.Edges) != first {
			t.Fatalf("a list page: %v, %v", conn, err)
		}
		var posts []int64
		for _, e := range conn.Edges {
			posts = append(posts, e.Node.PostID)
		}
		return posts
	}
	page() // every outbox read whole once
	time.Sleep(2 * ttl)
	before, _ := commandCalls(t, rdb)
	page()
	after, _ := commandCalls(t, rdb)
	if n := after["zrangebyscore"] - before["zrangebyscore"]; n >= int64(len(members)) {
		t.Errorf("a page after LocalCacheTTL read %d outboxes' ranges (ZRANGEBYSCORE %d), want them taken again by version", n/2, n)
	}
	fresh := te.post(members[0], "fresh")
	te.settle()
	time.Sleep(2 * ttl)
	if got := page(); got[0] != fresh {
		t.Fatalf("after a member's new post the list opens with %d, want %d", got[0], fresh)
	}
}
