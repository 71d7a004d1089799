package feed

import (
	"slices"
	"testing"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
)

// The feed of every mode equals the feed pulled from MySQL, with tiny caps
// and thresholds so that trimming, celebrities and paging past the cached
// window all happen.
func TestFeedModesAgreeWithPull(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode })
			reader, other := te.user("reader"), te.user("other")
			celeb, a, b := te.user("celeb"), te.user("author_a"), te.user("author_b")
			for _, f := range []int64{reader, other, a, b} {
				te.follow(f, celeb) // celeb reaches 4 followers: a celebrity
			}
			te.follow(reader, a)
			te.follow(reader, b)
			te.readFeed(reader, 3) // the reader becomes active: an inbox exists
			var posts []int64
			for i := range 4 {
				posts = append(posts, te.post(a, "a"), te.post(celeb, "c"), te.post(other, "o"))
				if i%2 == 0 {
					te.repost(b, posts[len(posts)-1]) // other's post, reposted into the feed
					te.repost(celeb, posts[len(posts)-3])
				}
			}
			te.deletePost(a, posts[3])
			te.settle()
			for _, size := range []int{1, 2, 5, 100} {
				got, want := te.readFeed(reader, size), te.pulledFeed(reader)
				if !slices.EqualFunc(got, want, feedItemEqual) {
					t.Fatalf("page size %d:\n got %v\nwant %v", size, got, want)
				}
			}
		})
	}
}

func feedItemEqual(a, b feedItem) bool {
	return a.Post == b.Post && a.Key == b.Key && slices.Equal(a.Reposters, b.Reposters)
}

// Paging older from inside the cached window down to its floor, when the
// reader's inbox reaches further down than a followed celebrity's outbox:
// the round that meets the window's floor ends the window, and MySQL serves
// what lies below. (It used to start the same round again, for ever, at the
// floor; a backward page's probe for older entries hung there.) Checked in
// every mode, both ways, with page sizes small enough for the probe to see
// a full inbox below the floor.
func TestPagingBelowCelebrityWindow(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode; c.CelebrityFollowers = 3; c.InboxCap = 8 })
			reader, author, celeb := te.user("reader"), te.user("author"), te.user("celeb")
			te.follow(reader, author)
			for _, f := range []int64{reader, te.user("fan1"), te.user("fan2")} {
				te.follow(f, celeb) // three followers: a celebrity
			}
			te.readFeed(reader, 5) // the reader is active: an inbox exists
			for range 10 {
				te.post(author, "older, fanned out") // the inbox keeps the newest 8
			}
			for range 10 {
				te.post(celeb, "newer, merged at read time") // so does the outbox: its floor lies above every inbox entry
			}
			te.settle()
			want := te.pulledFeed(reader)
			if len(want) != 20 {
				t.Fatalf("the pulled feed has %d entries, want 20", len(want))
			}
			for _, size := range []int{1, 2, 3, 4} {
				for _, backward := range []bool{false, true} {
					if got := te.pageFeed(reader, size, backward, len(want), nil); !slices.EqualFunc(got, want, feedItemEqual) {
						t.Fatalf("paged by %d (backward %v):\n got %v\nwant %v", size, backward, got, want)
					}
				}
			}
			for _, at := range []string{metrics.NoProgressMerge, metrics.NoProgressCursor} {
				if n := lcCount(te.metrics.NoProgress.WithLabelValues(at)); n != 0 {
					t.Fatalf("a read stopped without progress (%s) %v times: the guard, not the read, ended it", at, n)
				}
			}
		})
	}
}
