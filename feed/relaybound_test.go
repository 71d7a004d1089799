package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// relayBound is the bound docs/operations.md states for the other user's
// side of a write between two data nodes: their followers list and count
// (in MySQL and in the Redis copies the API reads) catch up within it.
const relayBound = time.Second

// TestShardedMySQLRelayFollowersCatchUpWithinTheBound follows, through a
// running engine, users of other data nodes: the follower reads their own
// follow at once (their following list, count and followee set), and the
// followee's followers list and count, in MySQL and as the API reads
// them, catch up within relayBound (stretched by Scale on a slow
// machine). It logs the catch-up's median and maximum.
func TestShardedMySQLRelayFollowersCatchUpWithinTheBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newShardedTestStore(t)
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix)
	var users []int64
	for i := range 12 {
		users = append(users, te.user(fmt.Sprintf("bound%02d", i)))
	}
	var waits, calls []time.Duration
	for _, follower := range users[:4] {
		for _, followee := range users[4:] {
			if st.ShardOf(follower) == st.ShardOf(followee) {
				continue
			}
			before, err := te.Users(ctx, []int64{followee})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			te.follow(follower, followee)
			calls = append(calls, time.Since(start))
			// The follower's side, at once.
			mine, err := st.FollowingPage(ctx, follower, store.Older, 1<<62, 100)
			if err != nil || !slices.ContainsFunc(mine, func(r models.Relation) bool { return r.UserID == followee }) {
				t.Fatalf("%d's following list right after the follow: %v, %v", follower, mine, err)
			}
			if followed, err := te.FollowedBy(ctx, follower, []int64{followee}); err != nil || !followed[followee] {
				t.Fatalf("%d's followee set right after the follow: %v, %v", follower, followed, err)
			}
			// The followee's side, within the bound.
			want := before[0].FollowerCount + 1
			for {
				theirs, err := st.FollowersPage(ctx, followee, store.Older, 1<<62, 100)
				if err != nil {
					t.Fatal(err)
				}
				seen, err := te.Users(ctx, []int64{followee})
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(theirs, func(r models.Relation) bool { return r.UserID == follower }) && seen[0].FollowerCount == want {
					break
				}
				if time.Since(start) > testenv.Scale(10*relayBound) {
					t.Fatalf("%d's followers after %v: %v, count %d (want %d)", followee, time.Since(start), theirs, seen[0].FollowerCount, want)
				}
				time.Sleep(2 * time.Millisecond)
			}
			waits = append(waits, time.Since(start))
		}
	}
	slices.Sort(waits)
	slices.Sort(calls)
	t.Logf("%d follows between two nodes: the followee's side caught up in %v at the median, %v at most, from the follow's call (which took %v at the median)",
		len(waits), waits[len(waits)/2], waits[len(waits)-1], calls[len(calls)/2])
	if worst := waits[len(waits)-1]; worst > testenv.Scale(relayBound) {
		t.Errorf("a followee's side caught up in %v, beyond the bound %v (stretched to %v)", worst, relayBound, testenv.Scale(relayBound))
	}
}
