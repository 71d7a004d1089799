package store

import (
	"context"
	"slices"
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
		if _, err := s.UpdateProfile(ctx, 1, models.ProfileChange{Bio: &bio}, now); err != nil {
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

// Version 7 applies to a fresh database, with the other steps, and to one
// at version 6 with rows in it, alone; either way the blocks and mutes
// tables have their indexes, on the columns the lists and checks read,
// and refuse a second row for a pair.
func TestMigrateV7AddsBlocksAndMutes(t *testing.T) {
	const step = "7 blocks, mutes"
	check := func(t *testing.T, s *Store) {
		t.Helper()
		m := s.db.Migrator()
		for _, c := range []struct {
			table any
			index string
			cols  []string
		}{
			{&v7Block{}, "ix_blocks_blocker_seq", []string{"blocker_id", "id"}},
			{&v7Block{}, "ux_blocks_blocked", []string{"blocked_id", "blocker_id"}},
			{&v7Mute{}, "ix_mutes_muter_seq", []string{"muter_id", "id"}},
			{&v7Mute{}, "ux_mutes_muted", []string{"muted_id", "muter_id"}},
		} {
			indexes, err := m.GetIndexes(c.table)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, ix := range indexes {
				if ix.Name() == c.index {
					cols = ix.Columns()
				}
			}
			if !slices.Equal(cols, c.cols) {
				t.Errorf("index %s has columns %v, want %v", c.index, cols, c.cols)
			}
		}
		now := time.Now().UTC()
		for _, row := range []any{&models.Block{BlockerID: 1, BlockedID: 2, ID: 5, CreatedAt: now}, &models.Mute{MuterID: 1, MutedID: 2, ID: 6, CreatedAt: now}} {
			if err := s.db.Create(row).Error; err != nil {
				t.Fatal(err)
			}
			if err := s.db.Create(row).Error; !isDuplicate(err) {
				t.Errorf("a second %T for the same pair: %v, want a duplicate key", row, err)
			}
		}
	}
	t.Run("fresh", func(t *testing.T) {
		onEachDatabase(t, func(t *testing.T, s *Store) {
			applied, err := s.Migrate(context.Background())
			if err != nil || len(applied) != len(migrations) || !slices.Contains(applied, step) {
				t.Fatalf("Migrate applied %v, %v; want every step, %q among them", applied, err, step)
			}
			check(t, s)
		})
	})
	t.Run("from6", func(t *testing.T) {
		onEachDatabase(t, func(t *testing.T, s *Store) {
			ctx := context.Background()
			db := s.tableOptions(s.db)
			if err := db.AutoMigrate(&schemaMigration{}); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Truncate(time.Millisecond)
			for _, m := range migrations {
				if m.Version >= 7 {
					continue
				}
				if err := m.Up(db); err != nil {
					t.Fatal(err)
				}
				s.db.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: now})
			}
			// User 2 follows user 1, written as version 6's code wrote it.
			for _, row := range []any{
				&models.User{ID: 1, Username: "old", UsernameKey: "old", CreatedAt: now, LastActiveAt: now, FollowerCount: 1},
				&models.User{ID: 2, Username: "other", UsernameKey: "other", CreatedAt: now, LastActiveAt: now, FollowingCount: 1},
				&models.Following{UserID: 2, FolloweeID: 1, ID: 100, CreatedAt: now},
				&models.Follower{UserID: 1, FollowerID: 2, ID: 100, CreatedAt: now},
			} {
				// Columns of later versions are left out, as version 6's
				// code had none.
				if err := s.db.Omit("is_protected").Create(row).Error; err != nil {
					t.Fatal(err)
				}
			}
			applied, err := s.Migrate(ctx)
			if err != nil || len(applied) != len(migrations)-6 || applied[0] != step {
				t.Fatalf("Migrate applied %v, %v; want step 7 and those after it", applied, err)
			}
			// The follow made at version 6 ends with a block made at 7.
			if changed, err := s.Block(ctx, 1, 2, 101, now); err != nil || !changed {
				t.Fatalf("block after the migration: %v, %v", changed, err)
			}
			if u, err := s.UserByID(ctx, 1); err != nil || u.FollowerCount != 0 {
				t.Fatalf("user 1 after the block: %+v (%v), want no follower", u, err)
			}
			s.db.Where("1 = 1").Delete(&models.Block{})
			check(t, s)
		})
	})
}
