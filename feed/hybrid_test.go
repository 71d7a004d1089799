package feed

import (
	"slices"
	"testing"
)

// The feed of every mode equals the feed pulled from MySQL, with tiny caps
// and thresholds so that trimming, celebrities and paging past the cached
// window all happen.
func TestFeedModesAgreeWithPull(t *testing.T) {
	for _, mode := range []Mode{ModePull, ModePush, ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			te := newTestEngine(t, func(c *Config) { c.Mode = mode })
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
