package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"feedservice/models"
)

// TestCreatePostsRefusesARepostOfADeletedPost: a bulk write whose repost
// names a deleted original writes nothing, as Repost refuses it one at a
// time; the same batch with a live original is written whole, with the
// counts and the events, and EventsApplied records its events dispatched.
func TestCreatePostsRefusesARepostOfADeletedPost(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Truncate(time.Millisecond)
		users := []*models.User{{ID: 1, Username: "author", CreatedAt: at, LastActiveAt: at}, {ID: 2, Username: "reposter", CreatedAt: at, LastActiveAt: at}}
		if err := s.CreateUsers(ctx, users); err != nil {
			t.Fatal(err)
		}
		original := int64(10)
		deleted := int64(11)
		if err := s.CreatePosts(ctx, []*models.Post{{ID: original, AuthorID: 1, Body: "kept", CreatedAt: at}, {ID: deleted, AuthorID: 1, Body: "gone", CreatedAt: at}}, EventsPending); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeletePost(ctx, deleted, 1, at); err != nil {
			t.Fatal(err)
		}
		batch := []*models.Post{{ID: 20, AuthorID: 2, RepostOfID: &original, CreatedAt: at}, {ID: 21, AuthorID: 2, RepostOfID: &deleted, CreatedAt: at}}
		if err := s.CreatePosts(ctx, batch, EventsApplied); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a repost of a deleted post: %v, want ErrNotFound", err)
		}
		reposter, err := s.UserByID(ctx, 2)
		if err != nil || reposter.PostCount != 0 {
			t.Fatalf("after the refused batch the reposter has %d posts (%v), want 0", reposter.PostCount, err)
		}
		if err := s.CreatePosts(ctx, batch[:1], EventsApplied); err != nil {
			t.Fatal(err)
		}
		posts, err := s.PostsByIDs(ctx, []int64{original})
		if err != nil || len(posts) != 1 || posts[0].RepostCount != 1 {
			t.Fatalf("the original after one repost: %+v (%v), want a repost count of 1", posts, err)
		}
		var pending []models.OutboxEvent
		if err := s.db.Where("dispatched_at IS NULL").Order("id").Find(&pending).Error; err != nil {
			t.Fatal(err)
		}
		// The two posts' events and the deletion's wait; the repost's, applied, does not.
		if len(pending) != 3 || pending[2].Kind != models.EventPostDeleted {
			t.Fatalf("pending events %+v, want the two posts' and the deletion's", pending)
		}
	})
}
