package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"feedservice/feed/config"
)

// TestLaterArrivalOfAnEntryBelowTheFloor: a rebuilt inbox holds the
// entries whose first arrival is in its window, and also the later
// arrivals in the window of entries whose first arrival lies below it, as
// the fan-out would have left them. When that first arrival goes (its
// repost deleted, its reposter unfollowed), the entry moves up to its next
// arrival, inside the window, where only the inbox can show it. Found by
// the model test with blocks and mutes (MODEL_SEED=944276734102709216, push
// and hybrid, step 1173: a deleted repost).
func TestLaterArrivalOfAnEntryBelowTheFloor(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		for _, removal := range []string{"delete", "unfollow"} {
			t.Run(fmt.Sprintf("%s/%s", mode, removal), func(t *testing.T) {
				t.Parallel()
				te := newTestEngine(t, func(c *config.Config) { c.Mode = mode; c.InboxCap = 3 })
				ctx := context.Background()
				reader, first, later, author, writer := te.user("reader"), te.user("first"), te.user("later"), te.user("author"), te.user("writer")
				for _, f := range []int64{first, later, writer} {
					te.follow(reader, f)
				}
				post := te.post(author, "reposted twice")
				early := te.repost(first, post)
				var own []int64
				for i := range 4 {
					own = append(own, te.post(writer, fmt.Sprintf("post %d", i)))
				}
				late := te.repost(later, post)
				te.settle()
				// The inbox is lost and rebuilt: its window holds the last
				// three of the writer's posts and the later repost.
				if err := te.redis.Del(ctx, te.keys.Inbox(reader), te.keys.InboxSources(reader), te.keys.Following(reader)).Err(); err != nil {
					t.Fatal(err)
				}
				te.pageFeed(reader, 2, false, 5, nil)
				if removal == "delete" {
					te.deletePost(first, early)
				} else {
					te.unfollow(reader, first)
				}
				te.settle()
				want := []feedItem{{Post: post, Reposters: []int64{later}, Key: late}}
				for _, p := range slices.Backward(own) {
					want = append(want, feedItem{Post: p, Reposters: []int64{}, Key: p})
				}
				for _, backward := range []bool{false, true} {
					got := te.pageFeed(reader, 2, backward, len(want), nil)
					if !slices.EqualFunc(got, want, feedItemEqual) {
						t.Errorf("feed (backward %v):\n got %v\nwant %v", backward, got, want)
					}
				}
			})
		}
	}
}
