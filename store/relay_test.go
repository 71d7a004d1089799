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

// applyAgain applies halves, which the relay applied already, a second
// time, as if it had stopped between their target's commit and their
// deletion.
func applyAgain(t testing.TB, s *Store, halves []relayChange) {
	t.Helper()
	for _, h := range halves {
		if err := s.db.Create(&h).Error; err != nil {
			t.Fatal(err)
		}
	}
	applyRelays(t, s)
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
// each mute, follow_requests_sent for each follow request, reposts_by_original
// for each repost and the originals' repost counts. It returns the
// follows, as "follower>followee".
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
		{"SELECT requester_id AS a, user_id AS b FROM follow_requests", "SELECT user_id AS a, target_id AS b FROM follow_requests_sent"},
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
		applyAgain(t, s, halves)
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
	step("unfollow", func() (bool, error) { return s.Unfollow(ctx, 1, 2, 102, at) }, func() bool { return !following(1, 2)() })
	step("follow again", func() (bool, error) { return s.Follow(ctx, 1, 2, 103, at) }, following(1, 2))
	step("a follower's removal", func() (bool, error) { return s.RemoveFollower(ctx, 1, 2, 110, at) }, func() bool {
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

// Approving a follow request between two nodes commits on the approver's
// node alone: the request goes and the followers row comes there, with the
// approver's count; the requester's side (the followings row, their count,
// their record of the request) and the follow's event come through the
// relay, once however often its half is applied. A half that finds the
// requester blocking the approver on arrival is refused there, and the
// approver's side is undone.
func TestShardedMySQLRelayApprovesFollowRequestsOnOneNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	at := relationStore(t, s, 8) // users 1-8, user n on node n mod 4
	// Protected, so that the requests wait for approval when they arrive.
	on := true
	for _, id := range []int64{2, 6} {
		if _, err := s.UpdateProfile(ctx, id, models.ProfileChange{IsProtected: &on}, at); err != nil {
			t.Fatal(err)
		}
	}
	if changed, err := s.RequestFollow(ctx, 1, 2, 401, at); err != nil || !changed {
		t.Fatalf("request 1 -> 2: %v, %v", changed, err)
	}
	applyRelays(t, s)
	_, before := eventsSince(t, s, 0)
	if changed, err := s.ApproveFollowRequest(ctx, 2, 1, 402, at); err != nil || !changed {
		t.Fatalf("approve 1 -> 2: %v, %v", changed, err)
	}
	if found, err := s.FollowersAmong(ctx, 2, []int64{1}); err != nil || !found[1] {
		t.Errorf("the approver's followers before the relay ran: %v, %v; want the requester", found, err)
	}
	if n, err := s.FollowRequestCount(ctx, 2); err != nil || n != 0 {
		t.Errorf("the approver's requests before the relay ran: %d, %v; want none", n, err)
	}
	if countOn(t, nodes[1], "followings") != 0 || countOn(t, nodes[2], "relay_changes") != 1 {
		t.Fatal("the approval did not commit on the approver's node alone, with the requester's half")
	}
	halves := pendingRelays(t, s)
	applyRelays(t, s)
	if events, _ := eventsSince(t, s, before); len(events) != 1 || events[0].Kind != models.EventFollowed {
		t.Errorf("the approval's events: %v, want one %s, written with the requester's side", events, models.EventFollowed)
	}
	applyAgain(t, s, halves)
	checkBothSides(t, s)
	if ok, err := s.Follows(ctx, 1, 2); err != nil || !ok {
		t.Errorf("1 follows 2 after the relay: %v, %v", ok, err)
	}
	if got := counts(t, s, 1); got != [2]int{0, 1} {
		t.Errorf("the requester's counts after the relay: %v, want one followee", got)
	}
	if asked, err := s.RequestedAmong(ctx, 1, []int64{2}); err != nil || asked[2] {
		t.Errorf("the requester's record of the request after the relay: %v, %v; want it gone", asked, err)
	}

	// The requester blocks the approver before the approval's half
	// arrives: the block's half takes the followers row away, and the
	// approval's half is refused on arrival (each once).
	if changed, err := s.RequestFollow(ctx, 3, 6, 403, at); err != nil || !changed {
		t.Fatalf("request 3 -> 6: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if changed, err := s.ApproveFollowRequest(ctx, 6, 3, 404, at); err != nil || !changed {
		t.Fatalf("approve 3 -> 6: %v, %v", changed, err)
	}
	if changed, err := s.Block(ctx, 3, 6, 405, at); err != nil || !changed {
		t.Fatalf("block 3 -> 6: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["3>6"] != 0 {
		t.Error("an approval whose requester blocked the approver meanwhile survived the relay")
	}
	if found, err := s.FollowersAmong(ctx, 6, []int64{3}); err != nil || found[3] {
		t.Errorf("the approver's followers after the relay: %v, %v; want the requester gone", found, err)
	}
}

// A bulk write of follows (CreateFollows: the seed's) commits on each
// follower's node alone: the followings rows with the followers' counts,
// and the followers rows of followees on that node; the followers rows of
// followees on other nodes, with their counts and the follows' events,
// come through the relay, one half for each node, once however often it is
// applied. A follow the followee's node refuses (the followee blocks the
// follower) is undone on the follower's node, alone. Many follows for one
// node go in several halves, each within a TEXT value.
func TestShardedMySQLRelayBulkFollowsCommitOnTheFollowersNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	at := relationStore(t, s, 128) // users 1-128, user n on node n mod 4
	if _, err := s.Block(ctx, 7, 3, 500, at); err != nil {
		t.Fatal(err)
	}
	applyRelays(t, s)
	_, before := eventsSince(t, s, 0)
	follows := []NewFollow{
		{FollowerID: 1, FolloweeID: 2, ID: 501, At: at}, // node 1 -> node 2
		{FollowerID: 1, FolloweeID: 5, ID: 502, At: at}, // node 1 -> node 1
		{FollowerID: 1, FolloweeID: 6, ID: 503, At: at}, // node 1 -> node 2
		{FollowerID: 3, FolloweeID: 2, ID: 504, At: at}, // node 3 -> node 2
		{FollowerID: 3, FolloweeID: 7, ID: 505, At: at}, // node 3 -> node 3, refused: 7 blocks 3
		{FollowerID: 3, FolloweeID: 8, ID: 506, At: at}, // node 3 -> node 0
		{FollowerID: 1, FolloweeID: 2, ID: 507, At: at}, // twice
	}
	made, err := s.CreateFollows(ctx, follows, EventsPending)
	if err != nil || made != 6 {
		t.Fatalf("CreateFollows made %d, %v; want 6", made, err)
	}
	if countOn(t, nodes[2], "followers") != 0 || countOn(t, nodes[0], "followers") != 0 || countOn(t, nodes[1], "followers") != 1 {
		t.Fatal("the follows of followees on other nodes did not wait for the relay")
	}
	if n := len(pendingRelays(t, s)); n != 3 {
		t.Fatalf("%d halves pending, want 3: node 1's for node 2, node 3's for nodes 2 and 0", n)
	}
	if got := counts(t, s, 1); got != [2]int{0, 3} {
		t.Errorf("the follower's counts before the relay ran: %v, want 3 followees", got)
	}
	halves := pendingRelays(t, s)
	applyRelays(t, s)
	events, _ := eventsSince(t, s, before)
	var followed []string
	for _, ev := range events {
		if ev.Kind == models.EventFollowed {
			followed = append(followed, ev.Payload)
		}
	}
	if len(followed) != 5 {
		t.Errorf("the follows' events after the relay: %v, want the 5 made", followed)
	}
	applyAgain(t, s, halves)
	got := checkBothSides(t, s)
	for _, key := range []string{"1>2", "1>5", "1>6", "3>2", "3>8"} {
		if got[key] == 0 {
			t.Errorf("follow %s missing after the relay (all: %v)", key, got)
		}
	}
	if got["3>7"] != 0 {
		t.Error("a follow of a user who blocks the follower survived the relay")
	}
	if c := counts(t, s, 2); c != [2]int{2, 0} {
		t.Errorf("user 2's counts after the relay: %v, want 2 followers", c)
	}

	// 300 follows from node 1 for node 2 (30 followers, 10 followees):
	// about 100 KB of ops, over a TEXT value's 64 KiB.
	var many []NewFollow
	for follower := int64(9); follower <= 125; follower += 4 {
		for followee := int64(10); followee <= 46; followee += 4 {
			many = append(many, NewFollow{FollowerID: follower, FolloweeID: followee, ID: 1000 + int64(len(many)), At: at})
		}
	}
	if made, err := s.CreateFollows(ctx, many, EventsPending); err != nil || made != len(many) {
		t.Fatalf("CreateFollows of %d made %d, %v", len(many), made, err)
	}
	if n := len(pendingRelays(t, s)); n != (len(many)+bulkHalfOps-1)/bulkHalfOps {
		t.Errorf("%d halves pending for %d follows, want %d follows a half at most", n, len(many), bulkHalfOps)
	}
	applyRelays(t, s)
	if c := counts(t, s, 10); c != [2]int{30, 0} {
		t.Errorf("user 10's counts after the relay: %v, want 30 followers", c)
	}
	checkBothSides(t, s)
}

// A follow request between two nodes commits on the requester's node
// alone (their record of it), the request itself reaching the asked
// user's node through the relay, once however often its half is applied;
// a rejection commits on the asked user's node, a withdrawal on the
// requester's, the other side relayed. A rejection still on its way when
// the requester withdraws and asks again takes away the record of the
// rejected request alone. A request that finds a block on arrival is
// refused, and one whose target is not protected any more is approved
// there: the follow, with its event, on both nodes.
func TestShardedMySQLRelayRequestsFollowOnOneNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	at := relationStore(t, s, 8) // users 1-8, user n on node n mod 4
	on, off := true, false
	for _, id := range []int64{2, 4, 6} {
		if _, err := s.UpdateProfile(ctx, id, models.ProfileChange{IsProtected: &on}, at); err != nil {
			t.Fatal(err)
		}
	}
	asked := func(requester, target int64) bool {
		t.Helper()
		found, err := s.RequestedAmong(ctx, requester, []int64{target})
		if err != nil {
			t.Fatal(err)
		}
		return found[target]
	}
	waiting := func(target int64) int {
		t.Helper()
		n, err := s.FollowRequestCount(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	relayTwice := func() {
		t.Helper()
		halves := pendingRelays(t, s)
		applyRelays(t, s)
		applyAgain(t, s, halves)
		checkBothSides(t, s)
	}

	// A request: the requester's record at once, the request by the relay.
	if changed, err := s.RequestFollow(ctx, 1, 2, 401, at); err != nil || !changed {
		t.Fatalf("request 1 -> 2: %v, %v", changed, err)
	}
	if !asked(1, 2) || waiting(2) != 0 {
		t.Errorf("before the relay ran: asked %v, %d waiting; want the requester's record alone", asked(1, 2), waiting(2))
	}
	if countOn(t, nodes[2], "follow_requests") != 0 || countOn(t, nodes[1], "relay_changes") != 1 {
		t.Fatal("the request did not commit on the requester's node alone, with the asked user's half")
	}
	relayTwice()
	if waiting(2) != 1 {
		t.Errorf("after the relay user 2 has %d requests waiting, want 1", waiting(2))
	}
	// FollowOrRequest of a protected user is the same request.
	if outcome, err := s.FollowOrRequest(ctx, 8, 2, 402, at); err != nil || outcome != Requested {
		t.Fatalf("FollowOrRequest 8 -> 2: %v, %v; want Requested", outcome, err)
	}
	if waiting(2) != 1 || countOn(t, nodes[0], "relay_changes") != 1 {
		t.Error("FollowOrRequest of a protected user on another node did not commit on the requester's node alone")
	}
	relayTwice()

	// A rejection: the request goes at once, the record by the relay.
	if changed, err := s.DropFollowRequest(ctx, 2, 2, 1); err != nil || !changed {
		t.Fatalf("reject 1 -> 2: %v, %v", changed, err)
	}
	if waiting(2) != 1 || !asked(1, 2) {
		t.Errorf("before the relay ran: asked %v, %d waiting; want the requester's record alone", asked(1, 2), waiting(2))
	}
	if countOn(t, nodes[1], "follow_requests_sent") != 1 || countOn(t, nodes[2], "relay_changes") != 1 {
		t.Fatal("the rejection did not commit on the asked user's node alone, with the requester's half")
	}
	relayTwice()
	if asked(1, 2) {
		t.Error("the requester's record of a rejected request survived the relay")
	}

	// A withdrawal: the record goes at once, the request by the relay.
	if changed, err := s.RequestFollow(ctx, 3, 6, 403, at); err != nil || !changed {
		t.Fatalf("request 3 -> 6: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if changed, err := s.DropFollowRequest(ctx, 3, 6, 3); err != nil || !changed {
		t.Fatalf("withdraw 3 -> 6: %v, %v", changed, err)
	}
	if asked(3, 6) || waiting(6) != 1 {
		t.Errorf("before the relay ran: asked %v, %d waiting; want the request alone", asked(3, 6), waiting(6))
	}
	relayTwice()
	if waiting(6) != 0 {
		t.Errorf("after the relay user 6 has %d requests waiting, want none", waiting(6))
	}

	// Rejected, then withdrawn and asked again before the rejection
	// arrived: the new request stays on both nodes.
	if _, err := s.RequestFollow(ctx, 5, 2, 404, at); err != nil {
		t.Fatal(err)
	}
	applyRelays(t, s)
	if changed, err := s.DropFollowRequest(ctx, 2, 2, 5); err != nil || !changed {
		t.Fatalf("reject 5 -> 2: %v, %v", changed, err)
	}
	if changed, err := s.DropFollowRequest(ctx, 5, 2, 5); err != nil || !changed {
		t.Fatalf("withdraw 5 -> 2: %v, %v", changed, err)
	}
	if changed, err := s.RequestFollow(ctx, 5, 2, 405, at); err != nil || !changed {
		t.Fatalf("request 5 -> 2 again: %v, %v", changed, err)
	}
	relayTwice()
	if !asked(5, 2) || waiting(2) != 2 { // 8's, and 5's made again
		t.Errorf("the request made again: asked %v, %d waiting; want it on both nodes", asked(5, 2), waiting(2))
	}

	// Refused on arrival: the target blocked the requester meanwhile.
	if _, err := s.RequestFollow(ctx, 7, 4, 406, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block(ctx, 4, 7, 407, at); err != nil {
		t.Fatal(err)
	}
	relayTwice()
	if asked(7, 4) || waiting(4) != 0 {
		t.Errorf("a request across a block: asked %v, %d waiting; want none", asked(7, 4), waiting(4))
	}
	if _, err := s.RequestFollow(ctx, 7, 4, 408, at); !errors.Is(err, ErrBlocked) {
		t.Errorf("a request once the block arrived: %v, want ErrBlocked", err)
	}

	// Approved on arrival: the target turned protection off meanwhile.
	if _, err := s.RequestFollow(ctx, 1, 6, 409, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateProfile(ctx, 6, models.ProfileChange{IsProtected: &off}, at); err != nil {
		t.Fatal(err)
	}
	_, before := eventsSince(t, s, 0)
	relayTwice()
	if ok, err := s.Follows(ctx, 1, 6); err != nil || !ok || asked(1, 6) || waiting(6) != 0 {
		t.Errorf("a request to a user no longer protected: follows %v (%v), asked %v, %d waiting; want the follow alone", ok, err, asked(1, 6), waiting(6))
	}
	if events, _ := eventsSince(t, s, before); len(events) != 1 || events[0].Kind != models.EventFollowed {
		t.Errorf("the approval on arrival's events: %v, want one %s", events, models.EventFollowed)
	}
	if got := counts(t, s, 6); got != [2]int{1, 0} {
		t.Errorf("user 6's counts after the relay: %v, want one follower", got)
	}
}

// A bulk write of posts and reposts (CreatePosts: the seed's) commits on
// each author's node alone: the posts with their authors' counts, and the
// reposts_by_original rows of originals on that node; those of originals
// on other nodes, with the originals' repost counts and the reposts'
// events, come through the relay, one half for each node, once however
// often it is applied. A repost of an original given in the same call
// waits for it; one of a deleted original writes nothing. Many reposts
// for one node go in several halves, each within a TEXT value.
func TestShardedMySQLRelayBulkPostsCommitOnTheAuthorsNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	at := relationStore(t, s, 128) // users 1-128, user n on node n mod 4
	nextID := int64(1000)
	post := func(author int64, original *int64) *models.Post {
		nextID++
		return &models.Post{ID: nextID*MaxShards + author%MaxShards, AuthorID: author, Body: "bulk", RepostOfID: original, CreatedAt: at}
	}
	p1, p2, p3 := post(2, nil), post(3, nil), post(4, nil) // nodes 2, 3, 0
	_, before := eventsSince(t, s, 0)
	batch := []*models.Post{
		p1, p2, p3,
		post(1, &p1.ID), // node 1 -> node 2
		post(5, &p2.ID), // node 1 -> node 3
		post(6, &p1.ID), // node 2 -> node 2
		post(7, &p3.ID), // node 3 -> node 0
	}
	if err := s.CreatePosts(ctx, batch, EventsPending); err != nil {
		t.Fatal(err)
	}
	if countOn(t, nodes[2], "reposts_by_original") != 1 || countOn(t, nodes[3], "reposts_by_original") != 0 || countOn(t, nodes[0], "reposts_by_original") != 0 {
		t.Fatal("the reposts of originals on other nodes did not wait for the relay")
	}
	if n := len(pendingRelays(t, s)); n != 3 {
		t.Fatalf("%d halves pending, want 3: node 1's for nodes 2 and 3, node 3's for node 0", n)
	}
	if got := countOn(t, nodes[1], "posts"); got != 2 {
		t.Errorf("node 1 holds %d posts before the relay ran, want its authors' 2", got)
	}
	if u, err := s.UserByID(ctx, 1); err != nil || u.PostCount != 1 {
		t.Errorf("the reposter's post count before the relay ran: %+v, %v; want 1", u, err)
	}
	halves := pendingRelays(t, s)
	applyRelays(t, s)
	events, _ := eventsSince(t, s, before)
	if len(events) != len(batch) {
		t.Errorf("%d events after the relay, want one for each of the %d posts: %v", len(events), len(batch), events)
	}
	applyAgain(t, s, halves)
	checkBothSides(t, s)
	if got, err := s.PostsByIDs(ctx, []int64{p1.ID}); err != nil || len(got) != 1 || got[0].RepostCount != 2 {
		t.Errorf("the original after its two reposts: %+v, %v; want a repost count of 2", got, err)
	}

	// A repost of a deleted original: nothing written on any node.
	if _, err := s.DeletePost(ctx, p3.ID, 4, at); err != nil {
		t.Fatal(err)
	}
	posts := countOn(t, nodes[1], "posts")
	if err := s.CreatePosts(ctx, []*models.Post{post(1, &p2.ID), post(9, &p3.ID)}, EventsPending); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a repost of a deleted post: %v, want ErrNotFound", err)
	}
	if countOn(t, nodes[1], "posts") != posts {
		t.Error("a bulk write refused for a deleted original wrote posts")
	}
	applyRelays(t, s)

	// 300 reposts from node 1 of node 2's originals (30 reposters, 10
	// originals): about 100 KB of ops, over a TEXT value's 64 KiB.
	var originals []*models.Post
	for range 10 {
		originals = append(originals, post(10, nil))
	}
	if err := s.CreatePosts(ctx, originals, EventsApplied); err != nil {
		t.Fatal(err)
	}
	var many []*models.Post
	for reposter := int64(9); reposter <= 125; reposter += 4 {
		for _, o := range originals {
			many = append(many, post(reposter, &o.ID))
		}
	}
	if err := s.CreatePosts(ctx, many, EventsApplied); err != nil {
		t.Fatal(err)
	}
	if n := len(pendingRelays(t, s)); n != (len(many)+bulkHalfOps-1)/bulkHalfOps {
		t.Errorf("%d halves pending for %d reposts, want %d reposts a half at most", n, len(many), bulkHalfOps)
	}
	applyRelays(t, s)
	checkBothSides(t, s)
	if got, err := s.PostsByIDs(ctx, []int64{originals[0].ID}); err != nil || len(got) != 1 || got[0].RepostCount != 30 {
		t.Errorf("an original after 30 reposts: %+v, %v; want a repost count of 30", got, err)
	}
}

// A follower's removal between two nodes ends the follow the follower
// made before it, even one the followee's node had not seen: the
// follower unfollowed and followed again, and only the first follow's
// half had arrived when the followee removed them. The removal's half
// ends the second follow on the follower's node, and a word back takes
// its followers row away once it arrives.
func TestShardedMySQLRelayRemovalEndsAFollowItsNodeHadNotSeen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 8) // users 1-8, user n on node n mod 4
	if changed, err := s.Follow(ctx, 1, 2, 101, at); err != nil || !changed {
		t.Fatalf("follow: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if changed, err := s.Unfollow(ctx, 1, 2, 102, at); err != nil || !changed {
		t.Fatalf("unfollow: %v, %v", changed, err)
	}
	if changed, err := s.Follow(ctx, 1, 2, 103, at); err != nil || !changed {
		t.Fatalf("follow again: %v, %v", changed, err)
	}
	// User 2's node still holds the first follow: its end and the second
	// follow are on their way.
	if found, err := s.FollowersAmong(ctx, 2, []int64{1}); err != nil || !found[1] {
		t.Fatalf("the followee's node before the relay: %v, %v; want the first follow", found, err)
	}
	if changed, err := s.RemoveFollower(ctx, 2, 1, 104, at); err != nil || !changed {
		t.Fatalf("the removal: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["1>2"] != 0 {
		t.Errorf("the follow made before the removal survived it: follow %d", follows["1>2"])
	}
	// A follow made after the removal stays, whenever its half arrives.
	if changed, err := s.Follow(ctx, 1, 2, 105, at); err != nil || !changed {
		t.Fatalf("follow after the removal: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["1>2"] != 105 {
		t.Errorf("the follow made after the removal: %d, want 105", follows["1>2"])
	}
	// A removal whose id is below the follow it ends (the instances'
	// clocks differ) ends it on both nodes all the same.
	if changed, err := s.RemoveFollower(ctx, 2, 1, 100, at); err != nil || !changed {
		t.Fatalf("a removal with an older id: %v, %v", changed, err)
	}
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["1>2"] != 0 {
		t.Errorf("a removal with an older id left follow %d", follows["1>2"])
	}
}

// A follow and the approval of a request of the same two, made at once on
// their two nodes, each write their own side: both nodes end with the
// approval's id, and an unfollow ends the follow on both. An unfollow made
// while the approval was on its way to the follower's node ends the
// approved follow too, on both nodes, once it arrives; an approval made
// while an unfollow was on its way to the approver's node outlives it.
func TestShardedMySQLRelayFollowAndApprovalAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 8) // users 1-8, user n on node n mod 4
	on := true
	if _, err := s.UpdateProfile(ctx, 2, models.ProfileChange{IsProtected: &on}, at); err != nil {
		t.Fatal(err)
	}
	request := func(id int64) {
		t.Helper()
		if changed, err := s.RequestFollow(ctx, 1, 2, id, at); err != nil || !changed {
			t.Fatalf("request 1 -> 2: %v, %v", changed, err)
		}
		applyRelays(t, s)
	}
	write := func(what string, changed bool, err error) {
		t.Helper()
		if err != nil || !changed {
			t.Fatalf("%s: changed %v, %v", what, changed, err)
		}
	}
	for _, c := range []struct {
		name             string
		approval, follow int64
	}{{"the approval first", 102, 103}, {"the follow first", 113, 112}} {
		request(c.approval - 2)
		changed, err := s.ApproveFollowRequest(ctx, 2, 1, c.approval, at)
		write(c.name+": approve", changed, err)
		changed, err = s.Follow(ctx, 1, 2, c.follow, at)
		write(c.name+": follow before the approval arrived", changed, err)
		applyRelays(t, s)
		if follows := checkBothSides(t, s); follows["1>2"] != c.approval {
			t.Errorf("%s: follow %d, want the approval's id on both nodes", c.name, follows["1>2"])
		}
		if got := counts(t, s, 1); got != [2]int{0, 1} {
			t.Errorf("%s: the follower's counts %v, want one followee", c.name, got)
		}
		changed, err = s.Unfollow(ctx, 1, 2, c.follow+1, at)
		write(c.name+": unfollow", changed, err)
		applyRelays(t, s)
		if follows := checkBothSides(t, s); follows["1>2"] != 0 {
			t.Errorf("%s: the unfollow left follow %d", c.name, follows["1>2"])
		}
	}

	// The follower follows and unfollows while the approval is on its
	// way: the unfollow ends the approved follow as well.
	request(120)
	changed, err := s.ApproveFollowRequest(ctx, 2, 1, 121, at)
	write("approve", changed, err)
	changed, err = s.Follow(ctx, 1, 2, 122, at)
	write("follow before the approval arrived", changed, err)
	changed, err = s.Unfollow(ctx, 1, 2, 123, at)
	write("unfollow before the approval arrived", changed, err)
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["1>2"] != 0 {
		t.Errorf("the approval on its way during the unfollow left follow %d", follows["1>2"])
	}

	// The follower asks, follows and unfollows; the followee approves
	// the request before the unfollow's half arrives, over the row of
	// the ended follow: the approved follow stays, on both nodes.
	request(129)
	changed, err = s.Follow(ctx, 1, 2, 130, at)
	write("follow", changed, err)
	applyRelays(t, s)
	changed, err = s.Unfollow(ctx, 1, 2, 131, at)
	write("unfollow", changed, err)
	changed, err = s.ApproveFollowRequest(ctx, 2, 1, 133, at)
	write("approve before the unfollow arrived", changed, err)
	applyRelays(t, s)
	if follows := checkBothSides(t, s); follows["1>2"] != 133 {
		t.Errorf("an approval made while an unfollow was on its way: follow %d, want 133", follows["1>2"])
	}
}
