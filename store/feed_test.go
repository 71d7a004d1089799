package store

import (
	"context"
	"slices"
	"testing"

	"feedservice/models"
)

// A window's edge is in it, and the bound is not: FeedEvents and
// HomeEvents list the events between them, in page order, with no edge
// the rest of the feed; a scan that goes on from the edge it read (as a
// bound) so meets every event once.
func TestFeedEventsStopAtTheWindowsEdge(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 4)
		mustFollow(t, s, 1, 2, 101, at)
		mustFollow(t, s, 1, 3, 102, at)
		var posts []*models.Post
		for id := int64(1000); id < 1010; id++ {
			posts = append(posts, &models.Post{ID: id, AuthorID: 2 + id%3, Body: "post", CreatedAt: at})
		}
		if err := s.DB().Create(&posts).Error; err != nil {
			t.Fatal(err)
		}
		counted := []int64{2, 3} // user 4's posts (1001, 1004, 1007) are not the reader's
		ids := func(events []FeedEvent) []int64 {
			var out []int64
			for _, ev := range events {
				out = append(out, ev.ID)
			}
			return out
		}
		for _, c := range []struct {
			dir         Direction
			bound, edge int64
			want        []int64
		}{
			{Older, 1009, 1003, []int64{1008, 1006, 1005, 1003}},
			{Older, 1009, 0, []int64{1008, 1006, 1005, 1003, 1002, 1000}},
			{Older, 1003, 1000, []int64{1002, 1000}},
			{Newer, 1000, 1006, []int64{1002, 1003, 1005, 1006}},
			{Newer, 1006, 0, []int64{1008, 1009}},
		} {
			events, err := s.FeedEvents(ctx, counted, c.dir, c.bound, c.edge, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(events); !slices.Equal(got, c.want) {
				t.Errorf("FeedEvents(%v beyond %d, to %d) = %v, want %v", c.dir, c.bound, c.edge, got, c.want)
			}
			if c.dir != Older {
				continue
			}
			home, err := s.HomeEvents(ctx, 1, counted, c.bound, c.edge, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, ev := range home {
				got = append(got, ev.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("HomeEvents(below %d, to %d) = %v, want %v", c.bound, c.edge, got, c.want)
			}
		}
		if events, err := s.FeedEvents(ctx, counted, Older, 1009, 1003, 2); err != nil || !slices.Equal(ids(events), []int64{1008, 1006}) {
			t.Errorf("FeedEvents limited to 2 = %v (%v), want the newest 2", ids(events), err)
		}
	})
}
