package store

import (
	"context"
	"testing"
	"time"

	"feedservice/models"
)

// On one database a follow's two sides commit together; a database that
// was left with one side written (by a version that committed them apart)
// is completed by the same change retried: each side is written or removed
// where it is missing, with its count, and the retry reports a change.
// (A retry found the first row and answered "unchanged" over half a
// follow.) On the sharded layout the relay completes the other side
// instead (TestShardedMySQLRelayAppliesEachHalfOnce).
func TestRetryCompletesHalfAppliedChanges(t *testing.T) {
	onEachDatabase(t, retryCompletesHalfApplied)
}

func retryCompletesHalfApplied(t *testing.T, s *Store) {
	ctx := context.Background()
	at := relationStore(t, s, 8)
	undo := func(model any, where string, args ...any) {
		t.Helper()
		if err := s.db.Where(where, args...).Delete(model).Error; err != nil {
			t.Fatal(err)
		}
	}
	bump := func(id int64, column string, delta int) {
		t.Helper()
		if err := s.db.Exec("UPDATE users SET "+column+" = "+column+" + ? WHERE id = ?", delta, id).Error; err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, changed bool, err error, counts1, counts2 [2]int, follower, followee int64) {
		t.Helper()
		if err != nil || !changed {
			t.Fatalf("%s, retried: changed %v, %v; want a change", what, changed, err)
		}
		if got := counts(t, s, follower); got != counts1 {
			t.Errorf("%s: user %d's counts %v, want %v", what, follower, got, counts1)
		}
		if got := counts(t, s, followee); got != counts2 {
			t.Errorf("%s: user %d's counts %v, want %v", what, followee, got, counts2)
		}
	}
	rows := func(follower, followee int64) (following, followers int64) {
		t.Helper()
		s.db.Model(&models.Following{}).Where("user_id = ? AND followee_id = ?", follower, followee).Count(&following)
		s.db.Model(&models.Follower{}).Where("user_id = ? AND follower_id = ?", followee, follower).Count(&followers)
		return following, followers
	}

	// A follow whose followee side did not commit.
	mustFollow(t, s, 1, 2, 101, at)
	undo(&models.Follower{}, "user_id = ? AND follower_id = ?", 2, 1)
	bump(2, "follower_count", -1)
	changed, err := s.Follow(ctx, 1, 2, 201, at)
	expect("follow without its followers row", changed, err, [2]int{0, 1}, [2]int{1, 0}, 1, 2)
	if a, b := rows(1, 2); a != 1 || b != 1 {
		t.Errorf("follow 1 -> 2 has %d followings and %d followers rows, want 1 and 1", a, b)
	}
	// A follow whose follower side did not commit.
	mustFollow(t, s, 3, 4, 102, at)
	undo(&models.Following{}, "user_id = ? AND followee_id = ?", 3, 4)
	bump(3, "following_count", -1)
	changed, err = s.Follow(ctx, 3, 4, 202, at)
	expect("follow without its followings row", changed, err, [2]int{0, 1}, [2]int{1, 0}, 3, 4)
	// Once whole, the same follow changes nothing.
	if changed, err := s.Follow(ctx, 3, 4, 203, at); err != nil || changed {
		t.Errorf("a whole follow followed again: changed %v, %v", changed, err)
	}
	// An unfollow whose followee side did not commit.
	mustFollow(t, s, 5, 6, 103, at)
	undo(&models.Following{}, "user_id = ? AND followee_id = ?", 5, 6)
	bump(5, "following_count", -1)
	changed, err = s.Unfollow(ctx, 5, 6, 104, at)
	expect("unfollow that left the followers row", changed, err, [2]int{0, 0}, [2]int{0, 0}, 5, 6)
	if a, b := rows(5, 6); a != 0 || b != 0 {
		t.Errorf("unfollow 5 -> 6 left %d followings and %d followers rows", a, b)
	}
	// A block whose unfollow of the followee side did not commit.
	mustFollow(t, s, 7, 8, 104, at)
	if changed, err := s.Block(ctx, 8, 7, 301, at); err != nil || !changed {
		t.Fatalf("block: %v %v", changed, err)
	}
	if err := s.db.Create(&models.Follower{UserID: 8, FollowerID: 7, ID: 104, CreatedAt: at}).Error; err != nil {
		t.Fatal(err)
	}
	bump(8, "follower_count", +1)
	changed, err = s.Block(ctx, 8, 7, 302, at)
	expect("block that left a followers row", changed, err, [2]int{0, 0}, [2]int{0, 0}, 7, 8)
	if changed, err := s.Block(ctx, 8, 7, 303, at); err != nil || changed {
		t.Errorf("a whole block blocked again: changed %v, %v", changed, err)
	}
}

// Migrating a sharded database from version 7 fills muted_by from the
// mutes made before it, so that "who mutes me" is read on one node for
// them too.
func TestShardedMySQLMigrateFillsMutedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	relationStore(t, s, 4)
	at := time.Now().UTC()
	// Mutes as version 7 wrote them: the mutes row alone.
	for _, m := range []models.Mute{{MuterID: 1, MutedID: 2, ID: 11, CreatedAt: at}, {MuterID: 3, MutedID: 2, ID: 12, CreatedAt: at}, {MuterID: 4, MutedID: 1, ID: 13, CreatedAt: at}} {
		if err := s.db.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Exec("DELETE FROM schema_migrations WHERE version = 8").Error; err != nil {
		t.Fatal(err)
	}
	migrating, err := Open(ctx, Config{MySQLDSN: s.dsn, ShardDSNs: nodes})
	if err != nil {
		t.Fatal(err)
	}
	defer migrating.Close()
	if _, err := migrating.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for muted, want := range map[int64][]int64{2: {1, 3}, 1: {4}} {
		muting, err := s.MutingAmong(ctx, muted, []int64{1, 2, 3, 4})
		if err != nil || len(muting) != len(want) {
			t.Errorf("who mutes %d after the migration: %v (%v), want %v", muted, muting, err, want)
		}
		for _, id := range want {
			if !muting[id] {
				t.Errorf("who mutes %d after the migration: %v, want %v", muted, muting, want)
			}
		}
	}
}
