package jumps

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// testLists are jumps over a store and a Redis prefix of the test's own,
// with a threshold of threshold followers.
type testLists struct {
	*Lists
	t   *testing.T
	ids *ids.IDGenerator
}

func newTestLists(t *testing.T, threshold int) *testLists {
	t.Helper()
	d := depstest.New(t, config.Config{JumpCacheFollowers: threshold})
	return &testLists{Lists: New(d), t: t, ids: d.IDs}
}

// user signs up a user named name.
func (tl *testLists) user(name string) int64 {
	tl.t.Helper()
	u := &models.User{ID: tl.ids.Next(), Username: name, DisplayName: name, PasswordHash: "x", CreatedAt: time.Now()}
	if err := tl.d.Store.CreateUser(context.Background(), u); err != nil {
		tl.t.Fatal(err)
	}
	return u.ID
}

// follow commits follower's follow of followee and settles the lists, as
// a mutation does after its commit.
func (tl *testLists) follow(follower, followee int64) {
	tl.t.Helper()
	ctx := context.Background()
	if _, err := tl.d.Store.Follow(ctx, follower, followee, tl.ids.Next(), time.Now()); err != nil {
		tl.t.Fatal(err)
	}
	if err := tl.SettleRelationLists(ctx, follower, followee); err != nil {
		tl.t.Fatal(err)
	}
}

// unfollow is follow's undoing.
func (tl *testLists) unfollow(follower, followee int64) {
	tl.t.Helper()
	ctx := context.Background()
	if _, err := tl.d.Store.Unfollow(ctx, follower, followee, 0, time.Now()); err != nil {
		tl.t.Fatal(err)
	}
	if err := tl.SettleRelationLists(ctx, follower, followee); err != nil {
		tl.t.Fatal(err)
	}
}

// jumpTo is user's followers page of size at offset, with user's row as a
// request reads it.
func (tl *testLists) jumpTo(user int64, offset, size int) []int64 {
	tl.t.Helper()
	ctx := context.Background()
	u, err := tl.d.Store.UserByID(ctx, user)
	if err != nil {
		tl.t.Fatal(err)
	}
	conn, err := tl.FollowersAt(ctx, u, paging.JumpArgs{Offset: offset, First: &size})
	if err != nil {
		tl.t.Fatalf("jump to %d: %v", offset, err)
	}
	var out []int64
	for _, e := range conn.Edges {
		out = append(out, e.UserID)
	}
	return out
}

// builds is how many copies of lists were built.
func (tl *testLists) builds() float64 {
	var m dto.Metric
	if err := tl.d.Metrics.RelationListBuilds.Write(&m); err != nil {
		tl.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A list that grows to the threshold gets its copy in Redis on the next
// jump (and loses its MySQL offset index), keeps it through follows
// without a rebuild, loses it when an unfollow takes it under the
// threshold, and is built again when it comes back; every jump on the way
// answers what MySQL answers.
func TestJumpThresholdCrossing(t *testing.T) {
	tl := newTestLists(t, 6)
	ctx := context.Background()
	star := tl.user("star")
	var fans []int64
	for i := range 5 {
		fan := tl.user(fmt.Sprintf("fan%d", i))
		tl.follow(fan, star)
		fans = append(fans, fan)
	}
	copyKey := tl.d.Keys.RelationList(store.FollowersList, star)
	exists := func() bool {
		n, err := tl.d.Redis.Exists(ctx, copyKey).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	agree := func(stage string, wantCopy bool) {
		t.Helper()
		for _, offset := range []int{0, 2, 5} {
			got := tl.jumpTo(star, offset, 3)
			rows, _, err := tl.d.Store.RelationsAt(ctx, store.FollowersList, star, offset, 3)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for _, r := range rows {
				want = append(want, r.UserID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: offset %d: got %v, MySQL %v", stage, offset, got, want)
			}
		}
		if exists() != wantCopy {
			t.Fatalf("%s: copy in Redis %v, want %v", stage, exists(), wantCopy)
		}
	}
	agree("under the threshold", false)
	tl.follow(tl.user("sixth"), star)
	tl.jumpTo(star, 0, 3)
	if !exists() {
		t.Fatal("no copy after a jump at the threshold")
	}
	if has, err := tl.d.Store.HasMarks(ctx, store.FollowersList, star); err != nil || has {
		t.Fatalf("offset index kept beside the copy: %v %v", has, err)
	}
	builds := tl.builds()
	tl.follow(tl.user("seventh"), star)
	agree("over the threshold", true)
	if got := tl.builds(); got != builds {
		t.Fatalf("a follow rebuilt the copy: %v builds, want %v", got, builds)
	}
	tl.unfollow(fans[0], star)
	tl.unfollow(fans[1], star)
	if exists() {
		t.Fatal("copy kept under the threshold")
	}
	agree("back under the threshold", false)
	tl.follow(fans[0], star)
	tl.follow(fans[1], star)
	tl.jumpTo(star, 0, 3)
	agree("over it again", true)
}
