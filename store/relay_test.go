package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"feedservice/models"
)

// applyRelays runs the relay until no half is pending.
func applyRelays(t testing.TB, s *Store) {
	t.Helper()
	for range 100 {
		n, err := s.ApplyRelays(context.Background(), 1000)
		if err != nil {
			t.Fatalf("apply the relay: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the relay still had halves to apply after 100 rounds")
}

// pendingRelays lists the halves waiting on every node.
func pendingRelays(t testing.TB, s *Store) []relayChange {
	t.Helper()
	var out []relayChange
	if err := s.db.Order("id").Find(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// checkBothSides checks, over the whole database, that every relation is
// written on both of its nodes and every count agrees with its rows: a
// followings row for each followers row (with the same follow id) and the
// reverse, the follow counts, blocked_by for each block, muted_by for
// each mute, reposts_by_original for each repost and the originals'
// repost counts. It returns the follows, as "follower>followee".
func checkBothSides(t testing.TB, s *Store) map[string]int64 {
	t.Helper()
	var followings []models.Following
	var followers []models.Follower
	var users []models.User
	if err := s.db.Find(&followings).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Find(&followers).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Find(&users).Error; err != nil {
		t.Fatal(err)
	}
	follows := map[string]int64{}
	following, followed := map[int64]int{}, map[int64]int{}
	for _, f := range followings {
		follows[fmt.Sprintf("%d>%d", f.UserID, f.FolloweeID)] = f.ID
		following[f.UserID]++
	}
	seen := map[string]bool{}
	for _, f := range followers {
		key := fmt.Sprintf("%d>%d", f.FollowerID, f.UserID)
		seen[key] = true
		followed[f.UserID]++
		if id, ok := follows[key]; !ok || id != f.ID {
			t.Errorf("followers row %s (follow %d) without its followings row (%d, found %v)", key, f.ID, id, ok)
		}
	}
	for key := range follows {
		if !seen[key] {
			t.Errorf("followings row %s without its followers row", key)
		}
	}
	for _, u := range users {
		if u.FollowingCount != following[u.ID] || u.FollowerCount != followed[u.ID] {
			t.Errorf("user %d counts %d following and %d followers; the rows say %d and %d",
				u.ID, u.FollowingCount, u.FollowerCount, following[u.ID], followed[u.ID])
		}
	}
	pairs := func(query string) []string {
		var rows []struct{ A, B int64 }
		if err := s.db.Raw(query).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = fmt.Sprintf("%d>%d", r.A, r.B)
		}
		slices.Sort(out)
		return out
	}
	for _, twin := range [][2]string{
		{"SELECT blocker_id AS a, blocked_id AS b FROM blocks", "SELECT blocker_id AS a, user_id AS b FROM blocked_by"},
		{"SELECT muter_id AS a, muted_id AS b FROM mutes", "SELECT muter_id AS a, user_id AS b FROM muted_by"},
		{"SELECT id AS a, repost_of_id AS b FROM posts WHERE repost_of_id IS NOT NULL AND deleted_at IS NULL",
			"SELECT id AS a, original_id AS b FROM reposts_by_original WHERE deleted_at IS NULL"},
	} {
		if a, b := pairs(twin[0]), pairs(twin[1]); !slices.Equal(a, b) {
			t.Errorf("%s: %v\n%s: %v", twin[0], a, twin[1], b)
		}
	}
	var originals []struct {
		ID          int64
		RepostCount int
		Live        int
	}
	if err := s.db.Raw(`SELECT p.id, p.repost_count, (SELECT COUNT(*) FROM reposts_by_original r
		WHERE r.original_id = p.id AND r.deleted_at IS NULL) AS live FROM posts p WHERE p.repost_of_id IS NULL`).Scan(&originals).Error; err != nil {
		t.Fatal(err)
	}
	for _, p := range originals {
		if p.RepostCount != p.Live {
			t.Errorf("post %d counts %d reposts, %d live", p.ID, p.RepostCount, p.Live)
		}
	}
	return follows
}

// A write between two nodes commits the actor's side alone: the actor
// reads it at once, the other side waits for the relay. Applied, each
// half completes the write; applied a second time (the relay stopped
// between the other node's commit and the deletion of the half on the
// actor's), it changes nothing.
func TestShardedMySQLRelayAppliesEachHalfOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 8) // users 1-8, user n on node n mod 4
	// step runs a write, checks its actor's side, applies the relay
	// twice over, and checks both sides.
	step := func(name string, write func() (bool, error), actorSide func() bool) {
		t.Helper()
		if changed, err := write(); err != nil || !changed {
			t.Fatalf("%s: changed %v, %v", name, changed, err)
		}
		if !actorSide() {
			t.Errorf("%s: the actor's side is not there before the relay ran", name)
		}
		halves := pendingRelays(t, s)
		applyRelays(t, s)
		for _, h := range halves { // again, as if the relay had stopped before deleting them
			if err := s.db.Create(&h).Error; err != nil {
				t.Fatal(err)
			}
		}
		applyRelays(t, s)
		checkBothSides(t, s)
	}
	following := func(a, b int64) func() bool {
		return func() bool { ok, _ := s.Follows(ctx, a, b); return ok }
	}
	step("follow", func() (bool, error) { return s.Follow(ctx, 1, 2, 101, at) }, following(1, 2))
	if got := counts(t, s, 2); got != [2]int{1, 0} {
		t.Errorf("the followee's counts after the relay: %v, want one follower", got)
	}
	step("follow back", func() (bool, error) { return s.Follow(ctx, 2, 1, 102, at) }, following(2, 1))
	step("unfollow", func() (bool, error) { return s.Unfollow(ctx, 1, 2, models.EventUnfollowed, at) }, func() bool { return !following(1, 2)() })
	step("follow again", func() (bool, error) { return s.Follow(ctx, 1, 2, 103, at) }, following(1, 2))
	step("a follower's removal", func() (bool, error) { return s.Unfollow(ctx, 2, 1, models.EventFollowerRemoved, at) }, func() bool {
		found, _ := s.FollowersAmong(ctx, 1, []int64{2})
		return !found[2]
	})
	step("follow 3", func() (bool, error) { return s.Follow(ctx, 3, 1, 104, at) }, following(3, 1))
	step("block", func() (bool, error) { return s.Block(ctx, 1, 2, 201, at) }, func() bool { return !following(1, 2)() })
	step("mute", func() (bool, error) { return s.Mute(ctx, 3, 2, 202, at) }, func() bool { m, _ := s.MutedAmong(ctx, 3, []int64{2}); return m[2] })
	step("unblock", func() (bool, error) { return s.Unblock(ctx, 1, 2, at) }, func() bool { b, _ := s.BlockedAmong(ctx, 1, []int64{2}); return !b[2] })
	original := &models.Post{ID: 1000*int64(MaxShards) + 2, AuthorID: 2, Body: "original", CreatedAt: at}
	if err := s.CreatePost(ctx, original); err != nil {
		t.Fatal(err)
	}
	repost := &models.Post{ID: 1001*int64(MaxShards) + 3, AuthorID: 3, RepostOfID: &original.ID, CreatedAt: at}
	step("repost", func() (bool, error) { _, created, err := s.Repost(ctx, repost); return created, err }, func() bool {
		tl, _ := s.TimelinePage(ctx, 3, Older, 1<<62, 10)
		return len(tl) == 1
	})
	if reposters, err := s.ReposterIDs(ctx, original.ID); err != nil || !slices.Equal(reposters, []int64{3}) {
		t.Errorf("reposters after the relay: %v, %v", reposters, err)
	}
	step("repost deleted", func() (bool, error) { _, err := s.DeletePost(ctx, repost.ID, 3, at); return err == nil, err }, func() bool {
		tl, _ := s.TimelinePage(ctx, 3, Older, 1<<62, 10)
		return len(tl) == 0
	})

	// A follow whose follower's node did not know yet of the followee's
	// block: the block's half ends it there, and its own half, refused on
	// the followee's node, undoes it (each once).
	if _, err := s.Block(ctx, 4, 5, 301, at); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Follow(ctx, 5, 4, 302, at); err != nil || !changed {
		t.Fatalf("a follow before the block's half arrived: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if ok, _ := s.Follows(ctx, 5, 4); ok {
		t.Error("a follow of a user who blocked the follower survived the relay")
	}
	if changed, err := s.Follow(ctx, 5, 4, 303, at); !errors.Is(err, ErrBlocked) {
		t.Errorf("a follow once the block arrived: %v, %v; want ErrBlocked", changed, err)
	}
	checkBothSides(t, s)
	// The same when the followee unblocked before the follow's half
	// arrived (user 6's node's halves are applied before user 7's): the
	// block's half ends the follow on the follower's node after its
	// followers row was written, and takes that row away too.
	if changed, err := s.Follow(ctx, 6, 7, 304, at); err != nil || !changed {
		t.Fatalf("follow 6 -> 7: %v, %v", changed, err)
	}
	if _, err := s.Block(ctx, 7, 6, 305, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Unblock(ctx, 7, 6, at); err != nil {
		t.Fatal(err)
	}
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["6>7"] != 0 {
		t.Error("a follow that a block ended before its half arrived survived the relay")
	}
	if n, _, err := s.OutboxLag(ctx); err != nil || n == 0 {
		t.Errorf("the events of the halves: OutboxLag %d, %v; want them waiting for dispatch", n, err)
	}
}
