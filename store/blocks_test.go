package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"feedservice/models"
)

// relationStore is a migrated store with users 1..n, and the time the
// test's changes are made at.
func relationStore(t *testing.T, s *Store, n int) time.Time {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	users := make([]*models.User, n)
	for i := range users {
		users[i] = &models.User{ID: int64(i + 1), Username: fmt.Sprintf("user%d", i+1), CreatedAt: at, LastActiveAt: at}
	}
	if err := s.CreateUsers(ctx, users); err != nil {
		t.Fatal(err)
	}
	return at
}

// eventsSince returns the outbox events after id after, oldest first, and
// the id of the newest of all.
func eventsSince(t *testing.T, s *Store, after int64) ([]models.OutboxEvent, int64) {
	t.Helper()
	var events []models.OutboxEvent
	if err := s.db.Where("id > ?", after).Order("id").Find(&events).Error; err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		return nil, after
	}
	return events, events[len(events)-1].ID
}

// eventText is an event as "kind payload", for comparing.
func eventText(events []models.OutboxEvent) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Kind + " " + ev.Payload
	}
	return out
}

func payloadText(t *testing.T, kind string, payload any) string {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return kind + " " + string(b)
}

// counts is a user's follower and following counts as stored.
func counts(t *testing.T, s *Store, id int64) [2]int {
	t.Helper()
	u, err := s.UserByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return [2]int{u.FollowerCount, u.FollowingCount}
}

func mustFollow(t *testing.T, s *Store, follower, followee, seq int64, at time.Time) {
	t.Helper()
	if changed, err := s.Follow(context.Background(), follower, followee, seq, at); err != nil || !changed {
		t.Fatalf("follow %d -> %d: %v, %v", follower, followee, changed, err)
	}
}

// A block ends the follows between the two users both ways, each with its
// counts, its list's length and the event an unfollow (by the blocker) or
// a removal of the follower (by the blocker) writes, then a blocked event;
// it leaves the other follows of both alone. Blocking again changes
// nothing; a block where there was one follow, or none, ends just that.
func TestBlockEndsTheFollowsBothWays(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 6)
		mustFollow(t, s, 1, 2, 101, at)
		mustFollow(t, s, 2, 1, 102, at)
		mustFollow(t, s, 1, 3, 103, at)
		mustFollow(t, s, 4, 2, 104, at)
		mustFollow(t, s, 5, 6, 105, at)
		// The offset index of user 2's followers, built now, must follow the block.
		if _, total, err := s.RelationsAt(ctx, FollowersList, 2, 0, 10); err != nil || total != 2 {
			t.Fatalf("user 2's followers before the block: %d (%v), want 2", total, err)
		}
		_, last := eventsSince(t, s, 0)

		changed, err := s.Block(ctx, 1, 2, 201, at)
		if err != nil || !changed {
			t.Fatalf("block: %v, %v; want a change", changed, err)
		}
		for _, pair := range [][2]int64{{1, 2}, {2, 1}} {
			if follows, err := s.Follows(ctx, pair[0], pair[1]); err != nil || follows {
				t.Errorf("after the block %d follows %d: %v (%v)", pair[0], pair[1], follows, err)
			}
		}
		if follows, _ := s.Follows(ctx, 1, 3); !follows {
			t.Error("the block ended 1's follow of 3")
		}
		if follows, _ := s.Follows(ctx, 4, 2); !follows {
			t.Error("the block ended 4's follow of 2")
		}
		// {followers, following}
		for id, want := range map[int64][2]int{1: {0, 1}, 2: {1, 0}, 3: {1, 0}, 4: {0, 1}} {
			if got := counts(t, s, id); got != want {
				t.Errorf("user %d after the block has counts %v, want %v", id, got, want)
			}
		}
		if _, total, err := s.RelationsAt(ctx, FollowersList, 2, 0, 10); err != nil || total != 1 {
			t.Errorf("user 2's followers after the block: %d (%v), want 1", total, err)
		}
		if rows, err := s.FollowingPage(ctx, 1, Older, math.MaxInt64, 10); err != nil || len(rows) != 1 || rows[0].UserID != 3 {
			t.Errorf("user 1 follows %+v (%v) after the block, want 3 alone", rows, err)
		}
		events, last := eventsSince(t, s, last)
		want := []string{
			payloadText(t, models.EventUnfollowed, models.FollowEventPayload{FollowerID: 1, FolloweeID: 2}),
			payloadText(t, models.EventFollowerRemoved, models.FollowEventPayload{FollowerID: 2, FolloweeID: 1}),
			payloadText(t, models.EventBlocked, models.BlockEventPayload{BlockerID: 1, BlockedID: 2}),
		}
		if got := eventText(events); !slices.Equal(got, want) {
			t.Errorf("the block's events:\n%q\nwant\n%q", got, want)
		}

		changed, err = s.Block(ctx, 1, 2, 202, at)
		if err != nil || changed {
			t.Errorf("the block again: %v, %v; want no change", changed, err)
		}
		if events, _ := eventsSince(t, s, last); len(events) != 0 {
			t.Errorf("the block again wrote %q", eventText(events))
		}
		if got := counts(t, s, 1); got != [2]int{0, 1} {
			t.Errorf("user 1 after the block again has counts %v", got)
		}

		// The blocked user blocks back: there is no follow left to end.
		if changed, err := s.Block(ctx, 2, 1, 203, at); err != nil || !changed {
			t.Fatalf("block back: %v, %v", changed, err)
		}
		events, last = eventsSince(t, s, last)
		want = []string{payloadText(t, models.EventBlocked, models.BlockEventPayload{BlockerID: 2, BlockedID: 1})}
		if got := eventText(events); !slices.Equal(got, want) {
			t.Errorf("the block back's events %q, want %q", got, want)
		}

		// One follow, the blocked user's of the blocker.
		if changed, err := s.Block(ctx, 6, 5, 204, at); err != nil || !changed {
			t.Fatalf("block of a follower: %v, %v", changed, err)
		}
		events, _ = eventsSince(t, s, last)
		want = []string{
			payloadText(t, models.EventFollowerRemoved, models.FollowEventPayload{FollowerID: 5, FolloweeID: 6}),
			payloadText(t, models.EventBlocked, models.BlockEventPayload{BlockerID: 6, BlockedID: 5}),
		}
		if got := eventText(events); !slices.Equal(got, want) {
			t.Errorf("the block of a follower wrote %q, want %q", got, want)
		}
		if c5, c6 := counts(t, s, 5), counts(t, s, 6); c5 != [2]int{0, 0} || c6 != [2]int{0, 0} {
			t.Errorf("after the block of a follower the counts are %v and %v, want none", c5, c6)
		}
	})
}

// While either of two users blocks the other, a follow either way is
// refused and changes nothing; an unblock restores no follow, and a
// follow is allowed again once neither blocks the other.
func TestFollowIsRefusedWhileEitherBlocks(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 2)
		mustFollow(t, s, 1, 2, 101, at)
		if _, err := s.Block(ctx, 1, 2, 201, at); err != nil {
			t.Fatal(err)
		}
		_, last := eventsSince(t, s, 0)
		refused := func(stage string) {
			t.Helper()
			for _, pair := range [][2]int64{{1, 2}, {2, 1}} {
				changed, err := s.Follow(ctx, pair[0], pair[1], 300, at)
				if !errors.Is(err, ErrBlocked) || changed {
					t.Errorf("%s: follow %d -> %d: %v, %v; want ErrBlocked", stage, pair[0], pair[1], changed, err)
				}
			}
			if c1, c2 := counts(t, s, 1), counts(t, s, 2); c1 != [2]int{0, 0} || c2 != [2]int{0, 0} {
				t.Errorf("%s: counts %v and %v after refused follows, want none", stage, c1, c2)
			}
			if events, _ := eventsSince(t, s, last); len(events) != 0 {
				t.Errorf("%s: the refused follows wrote %q", stage, eventText(events))
			}
		}
		refused("1 blocks 2")

		if _, err := s.Block(ctx, 2, 1, 202, at); err != nil {
			t.Fatal(err)
		}
		changed, err := s.Unblock(ctx, 1, 2, at)
		if err != nil || !changed {
			t.Fatalf("unblock: %v, %v; want a change", changed, err)
		}
		events, last := eventsSince(t, s, 0)
		events = events[len(events)-1:]
		want := []string{payloadText(t, models.EventUnblocked, models.BlockEventPayload{BlockerID: 1, BlockedID: 2})}
		if got := eventText(events); !slices.Equal(got, want) {
			t.Errorf("the unblock's event %q, want %q", got, want)
		}
		if follows, _ := s.Follows(ctx, 1, 2); follows {
			t.Error("the unblock restored the follow")
		}
		refused("2 still blocks 1")

		if changed, err := s.Unblock(ctx, 1, 2, at); err != nil || changed {
			t.Errorf("unblock again: %v, %v; want no change", changed, err)
		}
		if changed, err := s.Unblock(ctx, 2, 1, at); err != nil || !changed {
			t.Fatalf("the second unblock: %v, %v", changed, err)
		}
		mustFollow(t, s, 1, 2, 301, at)
		mustFollow(t, s, 2, 1, 302, at)
		if c1 := counts(t, s, 1); c1 != [2]int{1, 1} {
			t.Errorf("user 1's counts after following again: %v, want {1 1}", c1)
		}
	})
}

// A block, a mute or a follow naming a user who does not exist is
// ErrNotFound and writes nothing; an unblock or unmute of one changes
// nothing, as an unfollow.
func TestBlockAndMuteOfAnUnknownUser(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 1)
		const unknown = 99
		for _, pair := range [][2]int64{{1, unknown}, {unknown, 1}} {
			if changed, err := s.Block(ctx, pair[0], pair[1], 201, at); !errors.Is(err, ErrNotFound) || changed {
				t.Errorf("block %v: %v, %v; want ErrNotFound", pair, changed, err)
			}
			if changed, err := s.Mute(ctx, pair[0], pair[1], 202, at); !errors.Is(err, ErrNotFound) || changed {
				t.Errorf("mute %v: %v, %v; want ErrNotFound", pair, changed, err)
			}
			if changed, err := s.Follow(ctx, pair[0], pair[1], 203, at); !errors.Is(err, ErrNotFound) || changed {
				t.Errorf("follow %v: %v, %v; want ErrNotFound", pair, changed, err)
			}
			if changed, err := s.Unblock(ctx, pair[0], pair[1], at); err != nil || changed {
				t.Errorf("unblock %v: %v, %v; want no change", pair, changed, err)
			}
			if changed, err := s.Unmute(ctx, pair[0], pair[1], at); err != nil || changed {
				t.Errorf("unmute %v: %v, %v; want no change", pair, changed, err)
			}
		}
		var blocks, mutes int64
		s.db.Model(&models.Block{}).Count(&blocks)
		s.db.Model(&models.Mute{}).Count(&mutes)
		if events, _ := eventsSince(t, s, 0); blocks != 0 || mutes != 0 || len(events) != 0 {
			t.Errorf("refused changes left %d blocks, %d mutes and events %q", blocks, mutes, eventText(events))
		}
	})
}

// A mute keeps the follow and every count, and is idempotent both ways,
// with one event per change; a follow of a muted user is allowed.
func TestMuteKeepsFollowsAndCounts(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 2)
		mustFollow(t, s, 1, 2, 101, at)
		_, last := eventsSince(t, s, 0)
		if changed, err := s.Mute(ctx, 1, 2, 201, at); err != nil || !changed {
			t.Fatalf("mute: %v, %v; want a change", changed, err)
		}
		if changed, err := s.Mute(ctx, 1, 2, 202, at); err != nil || changed {
			t.Errorf("mute again: %v, %v; want no change", changed, err)
		}
		if follows, _ := s.Follows(ctx, 1, 2); !follows {
			t.Error("the mute ended the follow")
		}
		mustFollow(t, s, 2, 1, 102, at)
		if c1, c2 := counts(t, s, 1), counts(t, s, 2); c1 != [2]int{1, 1} || c2 != [2]int{1, 1} {
			t.Errorf("counts with the mute: %v and %v, want {1 1} each", c1, c2)
		}
		if muted, err := s.MutedAmong(ctx, 1, []int64{2}); err != nil || !muted[2] {
			t.Errorf("MutedAmong after the mute: %v (%v)", muted, err)
		}
		if changed, err := s.Unmute(ctx, 1, 2, at); err != nil || !changed {
			t.Fatalf("unmute: %v, %v; want a change", changed, err)
		}
		if changed, err := s.Unmute(ctx, 1, 2, at); err != nil || changed {
			t.Errorf("unmute again: %v, %v; want no change", changed, err)
		}
		if muted, err := s.MutedAmong(ctx, 1, []int64{2}); err != nil || muted[2] {
			t.Errorf("MutedAmong after the unmute: %v (%v)", muted, err)
		}
		events, _ := eventsSince(t, s, last)
		mute := models.MuteEventPayload{MuterID: 1, MutedID: 2}
		want := []string{
			payloadText(t, models.EventMuted, mute),
			payloadText(t, models.EventFollowed, models.FollowEventPayload{FollowerID: 2, FolloweeID: 1}),
			payloadText(t, models.EventUnmuted, mute),
		}
		if got := eventText(events); !slices.Equal(got, want) {
			t.Errorf("events:\n%q\nwant\n%q", got, want)
		}
	})
}

// The blocked and muted lists run newest first by the edge's id (not by
// the order the rows were written), one page after another both ways,
// with each edge's time, and hold only their owner's edges.
func TestBlockedAndMutedPages(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 10)
		for _, list := range []struct {
			name  string
			add   func(owner, other, id int64, at time.Time) (bool, error)
			page  func(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error)
			count func(ctx context.Context, userID int64) (int, error)
		}{
			{"blocked", func(o, x, id int64, at time.Time) (bool, error) { return s.Block(ctx, o, x, id, at) }, s.BlockedPage, s.BlockedCount},
			{"muted", func(o, x, id int64, at time.Time) (bool, error) { return s.Mute(ctx, o, x, id, at) }, s.MutedPage, s.MutedCount},
		} {
			// User 1's edge to user k has id 100+k and time at+k seconds,
			// written in an order unlike the ids'.
			for _, other := range []int64{5, 2, 8, 3, 7, 4, 6} {
				if _, err := list.add(1, other, 100+other, at.Add(time.Duration(other)*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := list.add(9, 2, 150, at); err != nil { // another owner's edge
				t.Fatal(err)
			}
			walk := func(dir Direction, bound int64) [][]int64 {
				var pages [][]int64
				for {
					rows, err := list.page(ctx, 1, dir, bound, 3)
					if err != nil {
						t.Fatal(err)
					}
					if len(rows) == 0 {
						return pages
					}
					var page []int64
					for _, r := range rows {
						if r.ID != 100+r.UserID || !r.FollowedAt.Equal(at.Add(time.Duration(r.UserID)*time.Second)) {
							t.Errorf("%s: row %+v has the wrong id or time", list.name, r)
						}
						page = append(page, r.UserID)
					}
					pages = append(pages, page)
					bound = rows[len(rows)-1].ID
				}
			}
			older := walk(Older, math.MaxInt64)
			if want := [][]int64{{8, 7, 6}, {5, 4, 3}, {2}}; fmt.Sprint(older) != fmt.Sprint(want) {
				t.Errorf("%s: older pages %v, want %v", list.name, older, want)
			}
			newer := walk(Newer, 0)
			if want := [][]int64{{2, 3, 4}, {5, 6, 7}, {8}}; fmt.Sprint(newer) != fmt.Sprint(want) {
				t.Errorf("%s: newer pages %v, want %v", list.name, newer, want)
			}
			if mid := walk(Older, 106); fmt.Sprint(mid) != fmt.Sprint([][]int64{{5, 4, 3}, {2}}) {
				t.Errorf("%s: older pages from the id of 6: %v", list.name, mid)
			}
			if n, err := list.count(ctx, 1); err != nil || n != 7 {
				t.Errorf("%s: count %d (%v), want 7", list.name, n, err)
			}
			if rows, err := list.page(ctx, 2, Older, math.MaxInt64, 10); err != nil || len(rows) != 0 {
				t.Errorf("%s: user 2's list %+v (%v), want none", list.name, rows, err)
			}
		}
	})
}

// The batch checks answer each direction of each relation, and the
// reader's whole set holds just the reader's edges.
func TestBlockAndMuteChecks(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 8)
		for _, b := range [][2]int64{{1, 2}, {3, 1}, {2, 3}, {1, 6}} {
			if _, err := s.Block(ctx, b[0], b[1], 200+b[1], at); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range [][2]int64{{1, 4}, {5, 1}, {4, 5}, {1, 7}} {
			if _, err := s.Mute(ctx, m[0], m[1], 300+m[1], at); err != nil {
				t.Fatal(err)
			}
		}
		ids := []int64{2, 3, 4, 5, 7, 8, 99}
		for _, c := range []struct {
			name  string
			check func(context.Context, int64, []int64) (map[int64]bool, error)
			want  []int64
		}{
			{"BlockedAmong", s.BlockedAmong, []int64{2}},
			{"BlockingAmong", s.BlockingAmong, []int64{3}},
			{"BlockedEitherWayAmong", s.BlockedEitherWayAmong, []int64{2, 3}},
			{"MutedAmong", s.MutedAmong, []int64{4, 7}},
			{"MutingAmong", s.MutingAmong, []int64{5}},
		} {
			found, err := c.check(ctx, 1, ids)
			if err != nil {
				t.Fatal(err)
			}
			if got := yes(found); !slices.Equal(got, c.want) {
				t.Errorf("%s(1, %v) = %v, want %v", c.name, ids, got, c.want)
			}
			if none, err := c.check(ctx, 1, nil); err != nil || len(none) != 0 {
				t.Errorf("%s of no ids: %v (%v)", c.name, none, err)
			}
		}
		// User 1 follows 4 (muted) and 8; blocks ended 1's other follows.
		for _, f := range []int64{4, 8, 3} {
			if _, err := s.Follow(ctx, 1, f, 400+f, at); err != nil && !errors.Is(err, ErrBlocked) {
				t.Fatal(err)
			}
		}
		followees, hidden, err := s.FeedView(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(followees)
		slices.Sort(hidden)
		if fmt.Sprint(followees, hidden) != fmt.Sprint([]int64{4, 8}, []int64{2, 3, 4, 6, 7}) {
			t.Errorf("FeedView(1) = %v %v, want [4 8] [2 3 4 6 7]", followees, hidden)
		}
		if followees, hidden, err = s.FeedView(ctx, 8); err != nil || len(followees)+len(hidden) != 0 {
			t.Errorf("FeedView(8) = %v %v (%v), want none", followees, hidden, err)
		}
		for _, c := range []struct {
			a, b         int64
			hides, block bool
		}{
			{1, 2, true, true}, {2, 1, true, true}, // 1 blocks 2: each hides the other
			{1, 3, true, true}, {3, 1, true, true}, // 3 blocks 1
			{1, 4, true, false}, {4, 1, false, false}, // 1 mutes 4: one way only
			{5, 1, true, false}, {1, 5, false, false},
			{1, 8, false, false},
		} {
			if got, err := s.Hides(ctx, c.a, c.b); err != nil || got != c.hides {
				t.Errorf("Hides(%d, %d) = %v (%v), want %v", c.a, c.b, got, err, c.hides)
			}
			if got, err := s.BlockedEitherWay(ctx, c.a, c.b); err != nil || got != c.block {
				t.Errorf("BlockedEitherWay(%d, %d) = %v (%v), want %v", c.a, c.b, got, err, c.block)
			}
		}
	})
}

// A block racing follows of the same two users never leaves a follow
// beside the block, nor a count that disagrees with the rows: each
// follow either ran first and was ended by the block, or saw the block
// and was refused.
func TestBlockRacingFollows(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 2)
		const rounds = 30
		seq := int64(1000)
		for round := range rounds {
			var errs [3]error
			done := make(chan struct{})
			seq += 3
			for i, change := range []func() error{
				func() error { _, err := s.Follow(ctx, 1, 2, seq, at); return err },
				func() error { _, err := s.Follow(ctx, 2, 1, seq+1, at); return err },
				func() error { _, err := s.Block(ctx, 1, 2, seq+2, at); return err },
			} {
				go func() {
					defer func() { done <- struct{}{} }()
					errs[i] = change()
				}()
			}
			for range errs {
				<-done
			}
			for i, err := range errs {
				if err != nil && !errors.Is(err, ErrBlocked) {
					t.Fatalf("round %d: change %d: %v", round, i, err)
				}
			}
			var rows int64
			s.db.Model(&models.Following{}).Count(&rows)
			c1, c2 := counts(t, s, 1), counts(t, s, 2)
			if rows != 0 || c1 != [2]int{0, 0} || c2 != [2]int{0, 0} {
				t.Fatalf("round %d: %d follows and counts %v, %v beside the block", round, rows, c1, c2)
			}
			if _, err := s.Unblock(ctx, 1, 2, at); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A new post goes to the followers of its author whose feeds do not hide
// the author: not to those who mute the author, block them or are blocked
// by them, nor to those who do not follow. The author's own mutes hide
// nothing from their readers.
func TestPostReadersAmong(t *testing.T) {
	onEachDatabase(t, postReadersAmong)
}

// The same on the sharded layout, whose three statements read the
// author's node.
func TestShardedMySQLPostReadersAmong(t *testing.T) {
	t.Parallel()
	s, _ := openSharded(t)
	postReadersAmong(t, s)
}

func postReadersAmong(t *testing.T, s *Store) {
	ctx := context.Background()
	at := relationStore(t, s, 9)
	for f := int64(2); f <= 8; f++ {
		if _, err := s.Follow(ctx, f, 1, 100+f, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range [][2]int64{{1, 2}, {3, 1}} {
		if _, err := s.Block(ctx, b[0], b[1], 200+b[1], at); err != nil {
			t.Fatal(err)
		}
	}
	// The blocks ended the follows of 2 and 3, and refuse them again
	// (once they reached both nodes).
	applyRelays(t, s)
	for _, f := range []int64{2, 3} {
		if _, err := s.Follow(ctx, f, 1, 300+f, at); !errors.Is(err, ErrBlocked) {
			t.Fatalf("follow %d -> 1 across a block: %v", f, err)
		}
	}
	for _, m := range [][2]int64{{5, 1}, {1, 4}, {6, 7}} {
		if _, err := s.Mute(ctx, m[0], m[1], 400+m[1], at); err != nil {
			t.Fatal(err)
		}
	}
	applyRelays(t, s)
	ids := []int64{2, 3, 4, 5, 6, 7, 8, 9, 99}
	found, err := s.PostReadersAmong(ctx, 1, ids)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := yes(found), []int64{4, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("PostReadersAmong(1, %v) = %v, want %v", ids, got, want)
	}
	if none, err := s.PostReadersAmong(ctx, 1, nil); err != nil || len(none) != 0 {
		t.Errorf("PostReadersAmong of no readers: %v (%v)", none, err)
	}
}

// yes lists the ids a batch check answered true for, in order.
func yes(found map[int64]bool) []int64 {
	var ids []int64
	for id, ok := range found {
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
