package store

import (
	"context"
	"testing"
	"time"

	"feedservice/models"
)

// A database at version 1 (rows already in it) migrates to version 2: the
// rows get version 0, and every update of a row moves its version, on
// MariaDB and on SQLite.
func TestMigrateV2AddsRowVersions(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		// Version 1 as it shipped, with a user and a post in it.
		db := s.tableOptions(s.db)
		if err := db.AutoMigrate(&schemaMigration{}); err != nil {
			t.Fatal(err)
		}
		if err := migrateV1(db); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		s.db.Create(&schemaMigration{Version: 1, Name: "v1", AppliedAt: now})
		s.db.Create(&v1User{ID: 1, Username: "old", UsernameKey: "old", CreatedAt: now, LastActiveAt: now})
		s.db.Create(&v1User{ID: 2, Username: "other", UsernameKey: "other", CreatedAt: now, LastActiveAt: now})
		s.db.Create(&v1Post{ID: 10, AuthorID: 1, Body: "old post", CreatedAt: now})

		applied, err := s.Migrate(ctx)
		// Step 2 first; later steps (3 on) follow it.
		if err != nil || len(applied) == 0 || applied[0] != "2 users.version, posts.version" {
			t.Fatalf("Migrate applied %v, %v; want step 2 first", applied, err)
		}
		u, err := s.UserByID(ctx, 1)
		if err != nil || u.Version != 0 {
			t.Fatalf("user after the migration: %+v, %v", u, err)
		}
		bio := "new bio"
		if _, err := s.UpdateProfile(ctx, 1, nil, &bio, now); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MoveFeedReadKey(ctx, 1, 5, now); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, 1, 2, 100, now); err != nil {
			t.Fatal(err)
		}
		p := &models.Post{ID: 11, AuthorID: 2, RepostOfID: ptr(int64(10)), CreatedAt: now}
		if _, _, err := s.Repost(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeletePost(ctx, 10, 1, now); err != nil {
			t.Fatal(err)
		}
		users, _ := s.UsersByIDs(ctx, []int64{1, 2})
		posts, _ := s.PostsByIDs(ctx, []int64{10, 11})
		got := map[int64]int64{}
		for _, u := range users {
			got[u.ID] = u.Version
		}
		for _, p := range posts {
			got[p.ID] = p.Version
		}
		// User 1: profile, marker, following count, post count; user 2:
		// follower count, post count; post 10: repost count, deletion.
		want := map[int64]int64{1: 4, 2: 2, 10: 2, 11: 0}
		for id, v := range want {
			if got[id] != v {
				t.Errorf("row %d has version %d, want %d (all: %v)", id, got[id], v, got)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }
