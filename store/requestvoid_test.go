package store

import (
	"context"
	"testing"

	"feedservice/models"
)

// A block drops the follow requests between its two users, on both nodes,
// including a request still on its way from the requester's node: one that
// arrives after the block was lifted again must not come back, and neither
// side may keep a request the other lacks. Each case is a requester on
// node 1 and a protected user on node 2; the relay runs only after the
// writes, so every half arrives late.
func TestShardedMySQLRelayRequestVoidedByABlockBeforeItArrived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 24) // users 1-24, user n on node n mod 4
	on := true
	for _, id := range []int64{2, 6, 10, 14, 18, 22} {
		if _, err := s.UpdateProfile(ctx, id, models.ProfileChange{IsProtected: &on}, at); err != nil {
			t.Fatal(err)
		}
	}
	// must(what)(write) wants the write to change something.
	must := func(what string) func(bool, error) {
		return func(changed bool, err error) {
			t.Helper()
			if err != nil || !changed {
				t.Fatalf("%s: changed %v, %v", what, changed, err)
			}
		}
	}
	for _, c := range []struct {
		name              string
		requester, target int64
		writes            func(requester, target int64)
		want              bool // the request is waiting at the end, on both sides
	}{{
		// The flake of the model run: the asked user blocks and unblocks
		// the requester while the request is on its way.
		"the asked user blocks and unblocks", 1, 2, func(a, u int64) {
			must("request")(s.RequestFollow(ctx, a, u, 101, at))
			must("block")(s.Block(ctx, u, a, 102, at))
			must("unblock")(s.Unblock(ctx, u, a, at))
		}, false,
	}, {
		// The same, the request not protected any more when it arrives:
		// not approved on arrival either.
		"the asked user blocks, unblocks and turns protection off", 5, 6, func(a, u int64) {
			off := false
			must("request")(s.RequestFollow(ctx, a, u, 103, at))
			must("block")(s.Block(ctx, u, a, 104, at))
			must("unblock")(s.Unblock(ctx, u, a, at))
			if _, err := s.UpdateProfile(ctx, u, models.ProfileChange{IsProtected: &off}, at); err != nil {
				t.Fatal(err)
			}
		}, false,
	}, {
		// The requester blocks and unblocks: their own request travels
		// ahead of their block's half, which drops it.
		"the requester blocks and unblocks", 9, 10, func(a, u int64) {
			must("request")(s.RequestFollow(ctx, a, u, 105, at))
			must("block")(s.Block(ctx, a, u, 106, at))
			must("unblock")(s.Unblock(ctx, a, u, at))
		}, false,
	}, {
		// A request made after the block (by its id) whose node had not
		// heard of the block yet: after the unblock it stands, on both
		// sides, as a follow made so does.
		"a request made after the block", 13, 14, func(a, u int64) {
			must("block")(s.Block(ctx, u, a, 107, at))
			must("request")(s.RequestFollow(ctx, a, u, 108, at))
			must("unblock")(s.Unblock(ctx, u, a, at))
		}, true,
	}, {
		// A request that arrived before the block, with a larger id than
		// the block's (the instances' clocks differ): dropped on both
		// sides.
		"a request with a larger id that arrived before the block", 17, 18, func(a, u int64) {
			must("request")(s.RequestFollow(ctx, a, u, 110, at))
			applyRelays(t, s)
			must("block")(s.Block(ctx, u, a, 109, at))
			must("unblock")(s.Unblock(ctx, u, a, at))
		}, false,
	}, {
		// A second block raises the floor the first set.
		"two blocks", 21, 22, func(a, u int64) {
			must("block")(s.Block(ctx, u, a, 111, at))
			must("unblock")(s.Unblock(ctx, u, a, at))
			applyRelays(t, s)
			must("request")(s.RequestFollow(ctx, a, u, 112, at))
			must("block again")(s.Block(ctx, u, a, 113, at))
			must("unblock again")(s.Unblock(ctx, u, a, at))
		}, false,
	}} {
		c.writes(c.requester, c.target)
		applyRelays(t, s)
		n, err := s.FollowRequestCount(ctx, c.target)
		if err != nil {
			t.Fatal(err)
		}
		asked, err := s.RequestedAmong(ctx, c.requester, []int64{c.target})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1}[c.want]; n != want || asked[c.target] != c.want {
			t.Errorf("%s: %d requests waiting for %d, the requester's record %v; want %d and %v",
				c.name, n, c.target, asked[c.target], want, c.want)
		}
		if follows, err := s.Follows(ctx, c.requester, c.target); err != nil || follows {
			t.Errorf("%s: %d follows %d: %v, %v", c.name, c.requester, c.target, follows, err)
		}
	}
	checkBothSides(t, s)
}
