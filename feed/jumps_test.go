package feed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
)

// jumpThresholds run a test through each path of a jump: MySQL's offset
// index (a threshold no test list reaches) and the copy in Redis (any
// list of one entry or more).
var jumpThresholds = map[string]int{"mysql": 1000, "redis": 1}

// onEachJumpPath runs test once per path of a jump (jumpThresholds), as a
// subtest named after the path, on an engine of its own whose threshold
// takes that path, with a star whom followers users followed in turn.
func onEachJumpPath(t *testing.T, followers int, test func(t *testing.T, te *testEngine, star int64, fans []int64)) {
	for name, threshold := range jumpThresholds {
		t.Run(name, func(t *testing.T) {
			te := newTestEngine(t, func(c *config.Config) { c.JumpCacheFollowers = threshold })
			star, fans := te.starWithFollowers(followers)
			test(t, te, star, fans)
		})
	}
}

// followersOf is the whole followers list by the cursor pages, newest first.
func (te *testEngine) followersOf(user int64) []int64 {
	te.t.Helper()
	u := te.fresh(user)
	conn, err := te.Followers(context.Background(), u, paging.PageArgs{First: ptr(config.MaxPageSize)})
	if err != nil {
		te.t.Fatal(err)
	}
	return edgeUsers(conn)
}

// fresh reads user's row as a request would.
func (te *testEngine) fresh(user int64) *models.User {
	te.t.Helper()
	users, err := te.Users(context.Background(), []int64{user})
	if err != nil || users[0] == nil {
		te.t.Fatalf("user %d: %v", user, err)
	}
	return users[0]
}

// jumpTo is the followers page of size at offset.
func (te *testEngine) jumpTo(user int64, offset, size int) *models.UserConnection {
	te.t.Helper()
	conn, err := te.FollowersAt(context.Background(), te.fresh(user), paging.JumpArgs{Offset: offset, First: &size})
	if err != nil {
		te.t.Fatalf("jump to %d: %v", offset, err)
	}
	return conn
}

func edgeUsers(conn *models.UserConnection) []int64 {
	var ids []int64
	for _, e := range conn.Edges {
		ids = append(ids, e.UserID)
	}
	return ids
}

// starWithFollowers signs up a star and n followers who follow in turn.
func (te *testEngine) starWithFollowers(n int) (int64, []int64) {
	star := te.user("star")
	var fans []int64
	for i := range n {
		fan := te.user(fmt.Sprintf("fan%d", i))
		te.follow(fan, star)
		fans = append(fans, fan)
	}
	return star, fans
}

// A jump answers the slice of the cursor pages' list at its offset, with
// the page info a client numbers pages by, on each path: page 1, a middle
// page, the last (short) page, a page just past the end and one far past
// it; and the endCursor of a jump steps on to the next page by cursor.
func TestJumpPages(t *testing.T) {
	t.Parallel()
	onEachJumpPath(t, 12, func(t *testing.T, te *testEngine, star int64, _ []int64) {
		all := te.followersOf(star)
		for _, c := range []struct{ offset, size, from, to int }{
			{0, 5, 0, 5}, {5, 5, 5, 10}, {10, 5, 10, 12}, {12, 5, 12, 12}, {1000, 5, 12, 12}, {3, 0, 3, 3},
		} {
			conn := te.jumpTo(star, c.offset, c.size)
			if got := edgeUsers(conn); !slices.Equal(got, all[c.from:c.to]) {
				t.Fatalf("offset %d size %d: got %v, want %v", c.offset, c.size, got, all[c.from:c.to])
			}
			if conn.TotalCount != 12 || conn.PageInfo.HasPreviousPage != (c.offset > 0) || conn.PageInfo.HasNextPage != (c.to < 12) {
				t.Fatalf("offset %d size %d: total %d, page info %+v", c.offset, c.size, conn.TotalCount, conn.PageInfo)
			}
		}
		page2 := te.jumpTo(star, 5, 5)
		next, err := te.Followers(context.Background(), te.fresh(star), paging.PageArgs{First: ptr(5), After: page2.PageInfo.EndCursor})
		if err != nil {
			t.Fatal(err)
		}
		if got := edgeUsers(next); !slices.Equal(got, all[10:12]) {
			t.Fatalf("after a jump's endCursor: got %v, want %v", got, all[10:12])
		}
	})
}

// The limits of a jump, each at its edge: first up to MaxPageSize, offset
// from 0 to MaxListOffset, and offset only beside first.
func TestJumpLimits(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	star, _ := te.starWithFollowers(1)
	u := te.fresh(star)
	ok := []paging.JumpArgs{{Offset: 0, First: ptr(config.MaxPageSize)}, {Offset: config.MaxListOffset}}
	bad := []paging.JumpArgs{{Offset: 0, First: ptr(config.MaxPageSize + 1)}, {Offset: config.MaxListOffset + 1}, {Offset: -1}, {Offset: 0, First: ptr(-1)}}
	for _, a := range ok {
		if _, err := te.FollowersAt(context.Background(), u, a); err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
	}
	for _, a := range bad {
		_, err := te.FollowingAt(context.Background(), u, a)
		var fe *apperr.Error
		if !errors.As(err, &fe) || fe.Code != apperr.CodeBadUserInput {
			t.Fatalf("%+v: got %v, want BAD_USER_INPUT", a, err)
		}
	}
	cursor := "x"
	for _, a := range []paging.PageArgs{{After: &cursor}, {Before: &cursor}, {Last: ptr(1)}} {
		_, err := a.JumpArgs(ptr(0))
		var fe *apperr.Error
		if !errors.As(err, &fe) || fe.Code != apperr.CodeBadUserInput {
			t.Fatalf("offset with %+v: got %v, want BAD_USER_INPUT", a, err)
		}
	}
	if j, err := (paging.PageArgs{First: ptr(3)}).JumpArgs(nil); j != nil || err != nil {
		t.Fatalf("no offset: got %+v, %v; want a cursor page", j, err)
	}
}

// A follow or unfollow between two jumps moves the later positions by one,
// on each path, at once for the instance that served it: a new follower
// takes position 0 and pushes page 2 down by one; an unfollow on page 1
// pulls page 2 up by one.
func TestJumpListChangesBetweenJumps(t *testing.T) {
	t.Parallel()
	onEachJumpPath(t, 10, func(t *testing.T, te *testEngine, star int64, fans []int64) {
		before := te.followersOf(star)
		if got := edgeUsers(te.jumpTo(star, 4, 4)); !slices.Equal(got, before[4:8]) {
			t.Fatalf("page 2: got %v, want %v", got, before[4:8])
		}
		late := te.user("late")
		te.follow(late, star)
		if got := edgeUsers(te.jumpTo(star, 4, 4)); !slices.Equal(got, before[3:7]) {
			t.Fatalf("page 2 after a follow: got %v, want %v", got, before[3:7])
		}
		te.unfollow(fans[len(fans)-1], star) // the newest of before, now at position 1
		te.unfollow(before[2], star)
		want := slices.Concat([]int64{late}, before[1:2], before[3:])
		if got := edgeUsers(te.jumpTo(star, 4, 4)); !slices.Equal(got, want[4:8]) {
			t.Fatalf("page 2 after two unfollows: got %v, want %v", got, want[4:8])
		}
		te.settle() // the stream events settle the same lists again
		if got := edgeUsers(te.jumpTo(star, 0, 20)); !slices.Equal(got, want) || !slices.Equal(te.followersOf(star), want) {
			t.Fatalf("whole list after the events: got %v, want %v", got, want)
		}
	})
}

func ptr[T any](v T) *T { return &v }
