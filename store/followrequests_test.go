package store

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"feedservice/models"
)

// TestFollowRequestsKeepTheirRules: a request waits without a follow or
// a count; asking twice, or while following, changes nothing; approval
// makes the follow with its counts and event and removes the request;
// reject and withdraw drop it; a block drops the requests both ways and
// refuses new ones.
func TestFollowRequestsKeepTheirRules(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 4)
		for i, asker := range []int64{2, 3, 4} {
			asked, err := s.RequestFollow(ctx, asker, 1, int64(100+i), at)
			if err != nil || !asked {
				t.Fatalf("%d asks 1: %v, %v", asker, asked, err)
			}
		}
		if asked, err := s.RequestFollow(ctx, 2, 1, 110, at); err != nil || asked {
			t.Errorf("asking twice: %v, %v; want no change", asked, err)
		}
		if _, err := s.RequestFollow(ctx, 2, 99, 111, at); !errors.Is(err, ErrNotFound) {
			t.Errorf("asking an unknown user: %v, want ErrNotFound", err)
		}
		page, err := s.FollowRequestsPage(ctx, 1, Older, math.MaxInt64, 10)
		if err != nil || len(page) != 3 || page[0].UserID != 4 || page[2].UserID != 2 {
			t.Errorf("requests, most recent first: %+v, %v", page, err)
		}
		if n, err := s.FollowRequestCount(ctx, 1); err != nil || n != 3 {
			t.Errorf("count: %d, %v", n, err)
		}
		if got, err := s.RequestedAmong(ctx, 2, []int64{1, 3}); err != nil || !got[1] || got[3] {
			t.Errorf("RequestedAmong(2): %v, %v; want 1 alone", got, err)
		}
		if u, _ := s.UserByID(ctx, 1); u.FollowerCount != 0 {
			t.Errorf("a waiting request moved the follower count: %d", u.FollowerCount)
		}

		_, last := eventsSince(t, s, 0)
		if ok, err := s.ApproveFollowRequest(ctx, 1, 2, 200, at); err != nil || !ok {
			t.Fatalf("approve 2: %v, %v", ok, err)
		}
		events, _ := eventsSince(t, s, last)
		if want := []string{payloadText(t, models.EventFollowed, models.FollowEventPayload{FollowerID: 2, FolloweeID: 1})}; !slices.Equal(eventText(events), want) {
			t.Errorf("approval's events: %v, want %v", eventText(events), want)
		}
		if follows, err := s.Follows(ctx, 2, 1); err != nil || !follows {
			t.Errorf("after approval 2 follows 1: %v, %v", follows, err)
		}
		if u, _ := s.UserByID(ctx, 1); u.FollowerCount != 1 {
			t.Errorf("after approval the follower count is %d, want 1", u.FollowerCount)
		}
		if ok, err := s.ApproveFollowRequest(ctx, 1, 2, 201, at); err != nil || ok {
			t.Errorf("approving again: %v, %v; want no change", ok, err)
		}
		if asked, err := s.RequestFollow(ctx, 2, 1, 112, at); err != nil || asked {
			t.Errorf("asking while following: %v, %v; want no change", asked, err)
		}
		if ok, err := s.DropFollowRequest(ctx, 1, 1, 3); err != nil || !ok {
			t.Errorf("reject 3: %v, %v", ok, err)
		}
		if ok, err := s.DropFollowRequest(ctx, 1, 1, 3); err != nil || ok {
			t.Errorf("reject 3 again: %v, %v; want no change", ok, err)
		}
		if _, err := s.Block(ctx, 1, 4, 300, at); err != nil {
			t.Fatal(err)
		}
		if ids, err := s.FollowRequesterIDs(ctx, 1); err != nil || len(ids) != 0 {
			t.Errorf("after the block the requests are %v, %v; want none", ids, err)
		}
		if _, err := s.RequestFollow(ctx, 4, 1, 113, at); !errors.Is(err, ErrBlocked) {
			t.Errorf("asking while blocked: %v, want ErrBlocked", err)
		}
	})
}

// TestFollowOrRequestReadsProtection: a follow of a protected user is a
// request (no follow, no count), of a public one a follow; the flag is
// stored by UpdateProfile and read back by UserByID.
func TestFollowOrRequestReadsProtection(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 3)
		on := true
		if u, err := s.UpdateProfile(ctx, 1, models.ProfileChange{IsProtected: &on}, at); err != nil || !u.IsProtected {
			t.Fatalf("protect 1: %+v, %v", u, err)
		}
		if got, err := s.FollowOrRequest(ctx, 2, 1, 100, at); err != nil || got != Requested {
			t.Errorf("2 follows protected 1: %v, %v; want Requested", got, err)
		}
		if got, err := s.FollowOrRequest(ctx, 2, 1, 101, at); err != nil || got != Unchanged {
			t.Errorf("2 follows protected 1 again: %v, %v; want Unchanged", got, err)
		}
		if follows, _ := s.Follows(ctx, 2, 1); follows {
			t.Error("a request made a follow")
		}
		if u, _ := s.UserByID(ctx, 1); u.FollowerCount != 0 {
			t.Errorf("a request moved the follower count to %d", u.FollowerCount)
		}
		if got, err := s.FollowOrRequest(ctx, 1, 3, 102, at); err != nil || got != Followed {
			t.Errorf("1 follows public 3: %v, %v; want Followed", got, err)
		}
		if got, err := s.FollowOrRequest(ctx, 2, 99, 103, at); !errors.Is(err, ErrNotFound) || got != Unchanged {
			t.Errorf("following an unknown user: %v, %v; want ErrNotFound", got, err)
		}
	})
}
