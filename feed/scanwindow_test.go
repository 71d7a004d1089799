package feed

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/models"
	"feedservice/store"
)

// The pull scan, a returning reader's page and the rebuild of their inbox
// read the followees' events a window of time at a time (pull.Window: a
// day, then eight times longer each time). On a feed whose posts and reposts lie from a minute to
// nearly three years back, every page they give, of every size and from
// every place, in either direction, is the page of one read of every event
// (store.HomeEvents with no window, walked whole): windows neither skip nor repeat an
// event at their edges, and a repost placed at an earlier arrival in
// another window keeps its place and its reposters.
func TestScanReadsWindowsOfTime(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode })
			ctx := context.Background()
			reader, outsider, muted := te.user("reader"), te.user("outsider"), te.user("muted")
			var authors []int64
			for _, name := range []string{"ann", "bob", "cat"} {
				authors = append(authors, te.user(name))
				te.follow(reader, authors[len(authors)-1])
			}
			te.follow(reader, muted)
			te.mute(reader, muted)
			te.settle()

			// Events at these ages, some around the windows' edges (a day
			// back, then nine days, seventy-three, 585).
			now := time.Now()
			ages := []time.Duration{time.Minute, 2 * time.Hour, 23 * time.Hour, 24 * time.Hour, 25 * time.Hour,
				3 * 24 * time.Hour, 9 * 24 * time.Hour, 9*24*time.Hour + time.Millisecond, 40 * 24 * time.Hour,
				70 * 24 * time.Hour, 400 * 24 * time.Hour, 600 * 24 * time.Hour, 1000 * 24 * time.Hour}
			var posts []*models.Post
			seq := int64(0)
			at := func(age time.Duration) int64 { seq++; return ids.IDAt(now.Add(-age)) + seq } // seq: within an id's sequence bits
			add := func(author int64, age time.Duration, repostOf *int64) int64 {
				p := &models.Post{ID: at(age), AuthorID: author, Body: "at " + age.String(), RepostOfID: repostOf, CreatedAt: now.Add(-age)}
				posts = append(posts, p)
				return p.ID
			}
			for i, age := range ages {
				add(authors[i%3], age, nil)
				add(muted, age, nil)
			}
			// An outsider's old post, reposted by a followee 3 days ago
			// (its first arrival, in the second window) and by another an
			// hour ago (a later arrival, in the first); an old post of a
			// followee, reposted (no arrival: it came by itself).
			old := add(outsider, 500*24*time.Hour, nil)
			add(authors[0], 3*24*time.Hour, &old)
			add(authors[1], time.Hour, &old)
			own := add(authors[2], 70*24*time.Hour, nil)
			add(authors[0], 2*time.Hour+time.Millisecond, &own)
			if err := te.store.DB().Create(&posts).Error; err != nil {
				t.Fatal(err)
			}

			followees, hidden, err := te.store.FeedView(ctx, reader)
			if err != nil {
				t.Fatal(err)
			}
			view := pull.NewView(followees, hidden)
			events, err := te.store.HomeEvents(ctx, reader, view.Followees, math.MaxInt64, 0, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := pull.Walk(view, events, nil, 1<<20, nil)
			want := te.itemsWithReposters(view.Followees, all)
			if len(want) != len(ages)+2 {
				t.Fatalf("the feed read whole holds %d entries, want %d: %v", len(want), len(ages)+2, want)
			}
			for n := 1; n <= len(all)+1; n++ {
				got, err := te.pull.Entries(ctx, view, store.Older, math.MaxInt64, n)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, all[:min(n, len(all))], entryKeyEqual) {
					t.Fatalf("the newest %d entries, by windows:\n got %v\nwant %v", n, got, all[:min(n, len(all))])
				}
			}
			for k := range all {
				older, err := te.pull.Entries(ctx, view, store.Older, all[k].Key, len(all))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(older, all[k+1:], entryKeyEqual) {
					t.Fatalf("the entries below %d:\n got %v\nwant %v", all[k].Key, older, all[k+1:])
				}
				newer, err := te.pull.Entries(ctx, view, store.Newer, all[k].Key, len(all))
				if err != nil {
					t.Fatal(err)
				}
				above := slices.Clone(all[:k])
				slices.Reverse(above)
				if !slices.EqualFunc(newer, above, entryKeyEqual) {
					t.Fatalf("the entries above %d:\n got %v\nwant %v", all[k].Key, newer, above)
				}
			}
			if newer, err := te.pull.Entries(ctx, view, store.Newer, 0, 3); err != nil || len(newer) != 3 || newer[0].Key != all[len(all)-1].Key {
				t.Fatalf("the 3 oldest entries, from the start: %v (%v), want the oldest first", newer, err)
			}

			// A returning reader's first pages, of each size.
			for _, size := range []int{1, 4, 9, len(want)} {
				te.forgetInbox(t, reader)
				conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &size})
				if err != nil {
					t.Fatal(err)
				}
				var got []feedItem
				for _, e := range conn.Edges {
					key, _ := paging.DecodeCursor(paging.CursorFeed, e.Cursor)
					got = append(got, feedItem{Post: e.Node.PostID, Reposters: e.Node.ReposterIDs, Key: key})
				}
				if !slices.EqualFunc(got, want[:size], feedItemEqual) {
					t.Fatalf("a returning reader's first page of %d:\n got %v\nwant %v", size, got, want[:size])
				}
				te.waitInbox(t, reader)
			}
		})
	}
}

func entryKeyEqual(a, b pull.Entry) bool { return a.Key == b.Key && a.PostID == b.PostID }
