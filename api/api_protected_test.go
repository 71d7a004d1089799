package api

import (
	"slices"
	"testing"
	"time"
)

// Black-box tests of protected accounts: the follow that becomes a
// request, the requests' approval, refusal and withdrawal, the switch
// itself, and a protected account's posts on every read path.

// protUser is a user as the tests of protected accounts read them.
type protUser struct {
	ID                       string
	IsProtected              bool
	ViewerHasRequestedFollow bool
	ViewerIsFollowing        bool
	FollowerCount            int
	PostCount                int
	Timeline                 struct {
		TotalCount int
		Edges      []struct{ Node struct{ ID string } }
	}
}

const protUserFields = `id isProtected viewerHasRequestedFollow viewerIsFollowing followerCount postCount
	timeline(first: 10) { totalCount edges { node { id } } }`

// protRead reads user username as c sees them.
func protRead(t *testing.T, c *client, username string) protUser {
	t.Helper()
	var out struct{ User *protUser }
	c.mustDo(t, `query($u: String!) { user(username: $u) { `+protUserFields+` } }`, map[string]any{"u": username}, &out)
	if out.User == nil {
		t.Fatalf("user %q not found", username)
	}
	return *out.User
}

// protSwitch turns c's protection on or off and returns c as now stored.
func protSwitch(t *testing.T, c *client, on bool) protUser {
	t.Helper()
	var out struct{ UpdateProfile protUser }
	c.mustDo(t, `mutation($on: Boolean) { updateProfile(input: {isProtected: $on}) { `+protUserFields+` } }`, map[string]any{"on": on}, &out)
	if out.UpdateProfile.IsProtected != on {
		t.Fatalf("updateProfile(isProtected: %v) answered %+v", on, out.UpdateProfile)
	}
	return out.UpdateProfile
}

// protChange runs follow, unfollow, approveFollowRequest or
// rejectFollowRequest (op) on target as c; it returns the payload's user.
func protChange(t *testing.T, c *client, op string, target *client) protUser {
	t.Helper()
	var out struct{ R struct{ User protUser } }
	c.mustDo(t, `mutation($id: ID!) { r: `+op+`(userId: $id) { user { `+protUserFields+` } viewer { id } } }`, map[string]any{"id": target.ID}, &out)
	return out.R.User
}

// protRequests are the ids of who waits for c's approval, most recent first.
func protRequests(t *testing.T, c *client) []string {
	t.Helper()
	var out struct {
		FollowRequests struct {
			TotalCount int
			Edges      []struct{ Node struct{ ID string } }
		}
	}
	c.mustDo(t, `{ followRequests(first: 10) { totalCount edges { node { id } } } }`, nil, &out)
	var ids []string
	for _, e := range out.FollowRequests.Edges {
		ids = append(ids, e.Node.ID)
	}
	if out.FollowRequests.TotalCount != len(ids) {
		t.Fatalf("followRequests of %s: totalCount %d for %v", c.Name, out.FollowRequests.TotalCount, ids)
	}
	return ids
}

// protFeedPosts are the post ids of c's feed's first page.
func protFeedPosts(t *testing.T, c *client) []string {
	t.Helper()
	var out struct {
		Feed struct {
			UnreadCount int
			Edges       []struct {
				Node struct{ Post struct{ ID string } }
			}
		}
	}
	c.mustDo(t, `{ feed(first: 20) { unreadCount edges { node { post { id } } } } }`, nil, &out)
	ids := []string{}
	for _, e := range out.Feed.Edges {
		ids = append(ids, e.Node.Post.ID)
	}
	if out.Feed.UnreadCount != len(ids) {
		t.Fatalf("feed of %s: unreadCount %d for %v (nothing was marked read)", c.Name, out.Feed.UnreadCount, ids)
	}
	return ids
}

// TestFollowRequestsThroughTheAPI: a follow of a protected account is a
// request (no follow, no count, viewerHasRequestedFollow true), listed in
// followRequests, which approval turns into the follow with its count
// and the follower's feed; reject drops it, unfollow withdraws it, a
// block drops it; turning protection off approves the rest, and turning
// it on keeps the followers. Bad input is the client's.
func TestFollowRequestsThroughTheAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat, dan, eve := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat"), s.signUp(t, "dan"), s.signUp(t, "eve")
		relChange(t, bob, "follow", ann)
		if got := protSwitch(t, ann, true); got.FollowerCount != 1 {
			t.Fatalf("protected: %+v, want bob kept as follower", got)
		}
		a1 := feedCreatePost(t, ann, "for my followers")

		got := protChange(t, cat, "follow", ann)
		if !got.IsProtected || !got.ViewerHasRequestedFollow || got.ViewerIsFollowing || got.FollowerCount != 1 {
			t.Fatalf("follow of a protected account answered %+v; want a request, no follow, followerCount 1", got)
		}
		if got := protRead(t, cat, "ann"); !got.ViewerHasRequestedFollow || got.ViewerIsFollowing {
			t.Fatalf("ann as cat reads her: %+v", got)
		}
		if got := protRead(t, s.anon(), "ann"); got.ViewerHasRequestedFollow || !got.IsProtected {
			t.Fatalf("ann signed out: %+v", got)
		}
		protChange(t, dan, "follow", ann)
		if got := protRequests(t, ann); !slices.Equal(got, []string{dan.ID, cat.ID}) {
			t.Fatalf("followRequests: %v, want dan then cat", got)
		}
		s.anon().mustFail(t, "UNAUTHENTICATED", `{ followRequests(first: 5) { totalCount } }`, nil)
		s.settle(t)
		if got := protFeedPosts(t, cat); len(got) != 0 {
			t.Fatalf("cat's feed while waiting: %v", got)
		}

		got = protChange(t, ann, "approveFollowRequest", cat)
		if got.ID != cat.ID {
			t.Fatalf("approveFollowRequest's user: %+v, want cat", got)
		}
		if got := protRead(t, cat, "ann"); !got.ViewerIsFollowing || got.ViewerHasRequestedFollow || got.FollowerCount != 2 || len(got.Timeline.Edges) != 1 {
			t.Fatalf("ann as cat reads her after approval: %+v", got)
		}
		s.settle(t)
		if got := protFeedPosts(t, cat); !slices.Equal(got, []string{a1.ID}) {
			t.Fatalf("cat's feed after approval: %v, want [%s]", got, a1.ID)
		}
		ann.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { approveFollowRequest(userId: $id) { user { id } } }`, map[string]any{"id": eve.ID})
		ann.mustFail(t, "BAD_USER_INPUT", `mutation($id: ID!) { approveFollowRequest(userId: $id) { user { id } } }`, map[string]any{"id": "nonsense"})
		s.anon().mustFail(t, "UNAUTHENTICATED", `mutation($id: ID!) { rejectFollowRequest(userId: $id) { user { id } } }`, map[string]any{"id": dan.ID})

		protChange(t, ann, "rejectFollowRequest", dan)
		if got := protRead(t, dan, "ann"); got.ViewerHasRequestedFollow || got.ViewerIsFollowing {
			t.Fatalf("ann as dan reads her after the refusal: %+v", got)
		}
		protChange(t, eve, "follow", ann)
		protChange(t, eve, "unfollow", ann)
		if got := protRequests(t, ann); len(got) != 0 {
			t.Fatalf("followRequests after a refusal and a withdrawal: %v", got)
		}
		protChange(t, eve, "follow", ann)
		ann.mustDo(t, `mutation($id: ID!) { block(userId: $id) { user { id } } }`, map[string]any{"id": eve.ID}, nil)
		if got := protRequests(t, ann); len(got) != 0 {
			t.Fatalf("followRequests after blocking eve: %v", got)
		}

		protChange(t, dan, "follow", ann)
		if got := protSwitch(t, ann, false); got.FollowerCount != 3 {
			t.Fatalf("protection off: %+v, want dan approved (3 followers)", got)
		}
		if got := protRequests(t, ann); len(got) != 0 {
			t.Fatalf("followRequests after protection off: %v", got)
		}
		if got := protRead(t, dan, "ann"); !got.ViewerIsFollowing {
			t.Fatalf("dan after protection off: %+v, want a follower", got)
		}
	})
}

// TestProtectedPostsThroughTheAPI: a protected account's posts are for
// the author and approved followers only: to a stranger and to the
// signed out the timeline is empty (its totalCount public), node and
// nodes are null, an earlier repost's repostOf is null and the feed
// leaves it out; a follower's repost is FORBIDDEN, a stranger's
// NOT_FOUND, the author's own allowed.
func TestProtectedPostsThroughTheAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat")
		relChange(t, bob, "follow", ann)
		relChange(t, cat, "follow", bob)
		a1 := feedCreatePost(t, ann, "said in public")
		b1 := feedRepost(t, bob, a1.ID)
		s.settle(t)
		if got := protFeedPosts(t, cat); !slices.Equal(got, []string{a1.ID}) {
			t.Fatalf("cat's feed with ann public: %v", got)
		}
		protSwitch(t, ann, true)

		for _, c := range []*client{cat, s.anon()} {
			if got := protRead(t, c, "ann"); len(got.Timeline.Edges) != 0 || got.Timeline.TotalCount != 1 || got.PostCount != 1 {
				t.Fatalf("ann's timeline as %q: %+v; want no edges, totalCount 1", c.Name, got)
			}
			var out struct {
				Node  *struct{ ID string }
				Nodes []*struct{ ID string }
				Rp    *struct{ RepostOf *struct{ ID string } }
			}
			c.mustDo(t, `query($a: ID!, $b: ID!) { node(id: $a) { id } nodes(ids: [$a, $b]) { id } rp: node(id: $b) { ... on Post { repostOf { id } } } }`,
				map[string]any{"a": a1.ID, "b": b1.ID}, &out)
			if out.Node != nil || len(out.Nodes) != 2 || out.Nodes[0] != nil || out.Nodes[1] == nil || out.Rp == nil || out.Rp.RepostOf != nil {
				t.Fatalf("as %q: node %+v, nodes %+v, the repost %+v; want a1 null and the repost's repostOf null", c.Name, out.Node, out.Nodes, out.Rp)
			}
		}
		if got := protFeedPosts(t, cat); len(got) != 0 {
			t.Fatalf("cat's feed with ann protected: %v, want bob's earlier repost of her post gone", got)
		}
		for _, c := range []*client{ann, bob} {
			if got := protRead(t, c, "ann"); len(got.Timeline.Edges) != 1 {
				t.Fatalf("ann's timeline as %s: %+v", c.Name, got)
			}
			var out struct{ Node *struct{ ID string } }
			c.mustDo(t, `query($a: ID!) { node(id: $a) { id } }`, map[string]any{"a": a1.ID}, &out)
			if out.Node == nil {
				t.Fatalf("node of ann's post as %s is null", c.Name)
			}
		}
		repost := `mutation($id: ID!) { repost(postId: $id) { post { id } } }`
		bob.mustFail(t, "FORBIDDEN", repost, map[string]any{"id": a1.ID})
		cat.mustFail(t, "NOT_FOUND", repost, map[string]any{"id": a1.ID})
		cat.mustFail(t, "NOT_FOUND", repost, map[string]any{"id": b1.ID})
		feedRepost(t, ann, a1.ID)

		protSwitch(t, ann, false)
		if got := protFeedPosts(t, cat); !slices.Equal(got, []string{a1.ID}) {
			t.Fatalf("cat's feed with ann public again: %v", got)
		}
	})
}

// TestApprovalLightsTheRedDot: an approval moves the new follower's live
// unread count, as a follow does.
func TestApprovalLightsTheRedDot(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	ann, cat := s.signUp(t, "ann"), s.signUp(t, "cat")
	protSwitch(t, ann, true)
	feedCreatePost(t, ann, "one")
	feedCreatePost(t, ann, "two")
	protChange(t, cat, "follow", ann)
	conn := liveConnect(t, s, liveTransportWS, cat.Token)
	count := conn.subscribe(liveUnreadSub)
	if n := conn.firstCount(count, 2*time.Second, "at once"); n != 0 {
		t.Fatalf("first unreadCount %d, want 0", n)
	}
	protChange(t, ann, "approveFollowRequest", cat)
	conn.expectCount(count, 2, 2*time.Second, "after the approval")
}
