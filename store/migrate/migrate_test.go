package migrate_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
	"feedservice/store/migrate"
)

// onEachDatabase runs test as a subtest on each database the store
// supports, MariaDB ("mysql", a fresh database of its own) and SQLite
// ("sqlite", a file in the test's temporary directory), with a store
// opened on it, closed when the subtest ends, and not migrated; opts is
// the store's database with the options migrate makes its tables with.
func onEachDatabase(t *testing.T, test func(t *testing.T, s *store.Store, opts *gorm.DB)) {
	t.Helper()
	for _, db := range []struct {
		name string
		cfg  func(t *testing.T) store.Config
	}{
		{"mysql", func(t *testing.T) store.Config { return store.Config{MySQLDSN: testenv.MySQL(t)} }},
		{"sqlite", func(t *testing.T) store.Config {
			return store.Config{SQLitePath: filepath.Join(t.TempDir(), "feed.db")}
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			s, err := store.Open(context.Background(), db.cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			test(t, s, migrate.TableOptions(s.DB(), db.name == "mysql"))
		})
	}
}

// A database at version 1 (rows already in it) migrates to version 2: the
// rows get version 0, and every update of a row moves its version, on
// MariaDB and on SQLite.
func TestMigrateV2AddsRowVersions(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *store.Store, opts *gorm.DB) {
		ctx := context.Background()
		// Version 1 as it shipped, with a user and a post in it.
		if err := opts.AutoMigrate(&migrate.SchemaMigration{}); err != nil {
			t.Fatal(err)
		}
		if err := migrate.Steps[0].Up(opts); err != nil {
			t.Fatal(err)
		}
		db := s.DB()
		now := time.Now().UTC().Truncate(time.Millisecond)
		db.Create(&migrate.SchemaMigration{Version: 1, Name: "v1", AppliedAt: now})
		db.Create(&migrate.V1User{ID: 1, Username: "old", UsernameKey: "old", CreatedAt: now, LastActiveAt: now})
		db.Create(&migrate.V1User{ID: 2, Username: "other", UsernameKey: "other", CreatedAt: now, LastActiveAt: now})
		db.Create(&migrate.V1Post{ID: 10, AuthorID: 1, Body: "old post", CreatedAt: now})

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

// isDuplicate reports whether err refuses a row whose key is taken, on
// MariaDB or SQLite.
func isDuplicate(err error) bool {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Version 7 applies to a fresh database, with the other steps, and to one
// at version 6 with rows in it, alone; either way the blocks and mutes
// tables have their indexes, on the columns the lists and checks read,
// and refuse a second row for a pair.
func TestMigrateV7AddsBlocksAndMutes(t *testing.T) {
	const step = "7 blocks, mutes"
	check := func(t *testing.T, db *gorm.DB) {
		t.Helper()
		m := db.Migrator()
		for _, c := range []struct {
			table any
			index string
			cols  []string
		}{
			{&migrate.V7Block{}, "ix_blocks_blocker_seq", []string{"blocker_id", "id"}},
			{&migrate.V7Block{}, "ux_blocks_blocked", []string{"blocked_id", "blocker_id"}},
			{&migrate.V7Mute{}, "ix_mutes_muter_seq", []string{"muter_id", "id"}},
			{&migrate.V7Mute{}, "ux_mutes_muted", []string{"muted_id", "muter_id"}},
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
			if err := db.Create(row).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Create(row).Error; !isDuplicate(err) {
				t.Errorf("a second %T for the same pair: %v, want a duplicate key", row, err)
			}
		}
	}
	t.Run("fresh", func(t *testing.T) {
		onEachDatabase(t, func(t *testing.T, s *store.Store, _ *gorm.DB) {
			applied, err := s.Migrate(context.Background())
			if err != nil || len(applied) != len(migrate.Steps) || !slices.Contains(applied, step) {
				t.Fatalf("Migrate applied %v, %v; want every step, %q among them", applied, err, step)
			}
			check(t, s.DB())
		})
	})
	t.Run("from6", func(t *testing.T) {
		onEachDatabase(t, func(t *testing.T, s *store.Store, opts *gorm.DB) {
			ctx := context.Background()
			if err := opts.AutoMigrate(&migrate.SchemaMigration{}); err != nil {
				t.Fatal(err)
			}
			db := s.DB()
			now := time.Now().UTC().Truncate(time.Millisecond)
			for _, m := range migrate.Steps {
				if m.Version >= 7 {
					continue
				}
				if err := m.Up(opts); err != nil {
					t.Fatal(err)
				}
				db.Create(&migrate.SchemaMigration{Version: m.Version, Name: m.Name, AppliedAt: now})
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
				if err := db.Omit("is_protected").Create(row).Error; err != nil {
					t.Fatal(err)
				}
			}
			applied, err := s.Migrate(ctx)
			if err != nil || len(applied) != len(migrate.Steps)-6 || applied[0] != step {
				t.Fatalf("Migrate applied %v, %v; want step 7 and those after it", applied, err)
			}
			// The follow made at version 6 ends with a block made at 7.
			if changed, err := s.Block(ctx, 1, 2, 101, now); err != nil || !changed {
				t.Fatalf("block after the migration: %v, %v", changed, err)
			}
			if u, err := s.UserByID(ctx, 1); err != nil || u.FollowerCount != 0 {
				t.Fatalf("user 1 after the block: %+v (%v), want no follower", u, err)
			}
			db.Where("1 = 1").Delete(&models.Block{})
			check(t, db)
		})
	})
}
