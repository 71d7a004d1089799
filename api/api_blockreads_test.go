package api

import (
	"encoding/json"
	"testing"
)

// Black-box tests of what a block hides beyond the feed, home and the two
// timelines: node and nodes, the reposted original of a third user's
// repost, and repost itself. A block hides both ways; a mute does not
// reach these reads.

// brPost is a post as node and nodes answer it: null for one the viewer
// may not read.
type brPost struct {
	ID       string
	Body     string
	Author   struct{ ID string }
	RepostOf *struct {
		ID     string
		Body   string
		Author struct{ ID string }
	}
}

const brPostFields = `... on Post { id body author { id } repostOf { id body author { id } } }`

// brNodes reads ids through nodes, and each through node too, as c, and
// checks that the two agree.
func brNodes(t *testing.T, c *client, ids ...string) []*brPost {
	t.Helper()
	var many struct{ Nodes []*brPost }
	c.mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { `+brPostFields+` } }`, map[string]any{"ids": ids}, &many)
	if len(many.Nodes) != len(ids) {
		t.Fatalf("nodes as %s: %d answers for %d ids", c.Name, len(many.Nodes), len(ids))
	}
	for i, id := range ids {
		var one struct{ Node *brPost }
		c.mustDo(t, `query($id: ID!) { node(id: $id) { `+brPostFields+` } }`, map[string]any{"id": id}, &one)
		a, _ := json.Marshal(one.Node)
		b, _ := json.Marshal(many.Nodes[i])
		if string(a) != string(b) {
			t.Fatalf("as %s, node(%s) = %s but nodes gives %s", c.Name, id, a, b)
		}
	}
	return many.Nodes
}

// brTimelineRepostOf reads username's timeline as c and returns, for each
// post in it, its repostOf's id ("" for null).
func brTimelineRepostOf(t *testing.T, c *client, username string) map[string]string {
	t.Helper()
	var out struct {
		User struct {
			Timeline struct {
				TotalCount int
				Edges      []struct{ Node brPost }
			}
		}
	}
	c.mustDo(t, `query($u: String!) { user(username: $u) { timeline(first: 20) { totalCount edges { node { `+brPostFields+` } } } } }`,
		map[string]any{"u": username}, &out)
	got := map[string]string{}
	for _, e := range out.User.Timeline.Edges {
		got[e.Node.ID] = ""
		if e.Node.RepostOf != nil {
			got[e.Node.ID] = e.Node.RepostOf.ID
		}
	}
	if len(got) != out.User.Timeline.TotalCount {
		t.Fatalf("%s's timeline read by %s: %d posts, totalCount %d", username, c.Name, len(got), out.User.Timeline.TotalCount)
	}
	return got
}

// TestBlockHidesNodesAndReposts: for a signed-in viewer on either side of
// a block, node and nodes answer null for the other's posts and reposts,
// a third user's repost of the other's post shows with repostOf null (in
// that user's timeline and through node), and repost of such a post is
// NOT_FOUND, as for a post that does not exist. Others, the signed-out,
// and a muting viewer read everything; unblock brings it back.
func TestBlockHidesNodesAndReposts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat")
		annPost, bobPost := feedCreatePost(t, ann, "ann's"), feedCreatePost(t, bob, "bob's")
		catPost := feedCreatePost(t, cat, "cat's")
		catRepost := feedRepost(t, cat, annPost.ID)
		bobRepost := feedRepost(t, bob, catPost.ID)
		ids := []string{annPost.ID, catRepost.ID, bobPost.ID, bobRepost.ID, catPost.ID}

		// readsAll: c sees every post, and cat's repost with ann's original.
		readsAll := func(what string, c *client) {
			t.Helper()
			for i, p := range brNodes(t, c, ids...) {
				if p == nil || p.ID != ids[i] {
					t.Fatalf("%s: node %s read by %s: %+v, want the post", what, ids[i], c.Name, p)
				}
			}
			if got := brTimelineRepostOf(t, c, "cat")[catRepost.ID]; got != annPost.ID {
				t.Fatalf("%s: cat's repost in cat's timeline read by %s: repostOf %q, want %s", what, c.Name, got, annPost.ID)
			}
		}
		readsAll("before the block", bob)

		bmBlock(t, ann, "block", bob)
		// hidden: c sees none of other's posts or reposts, and cat's repost
		// of other's post (or of a post by c) with repostOf null.
		hidden := func(what string, c *client, theirs []string, catsRepostOf string) {
			t.Helper()
			got := brNodes(t, c, ids...)
			for i, id := range ids {
				isTheirs := id == theirs[0] || id == theirs[1]
				if isTheirs != (got[i] == nil) {
					t.Fatalf("%s: node %s read by %s: %+v; want null: %v", what, id, c.Name, got[i], isTheirs)
				}
			}
			repost := got[1]
			if (catsRepostOf == "") != (repost.RepostOf == nil) {
				t.Fatalf("%s: cat's repost read by %s through node: repostOf %+v, want %q", what, c.Name, repost.RepostOf, catsRepostOf)
			}
			if got := brTimelineRepostOf(t, c, "cat"); got[catRepost.ID] != catsRepostOf || len(got) != 2 {
				t.Fatalf("%s: cat's timeline read by %s: %v, want cat's repost with repostOf %q and cat's post", what, c.Name, got, catsRepostOf)
			}
		}
		hidden("blocked", bob, []string{annPost.ID, annPost.ID}, "")
		hidden("blocker", ann, []string{bobPost.ID, bobRepost.ID}, annPost.ID)
		readsAll("a third user", cat)
		readsAll("signed out", s.anon())

		// Reposting the other's post, directly or through a third user's
		// repost, is as for a post that does not exist.
		feedRepostFails(t, bob, annPost.ID)
		feedRepostFails(t, bob, catRepost.ID)
		feedRepostFails(t, ann, bobPost.ID)

		bmBlock(t, ann, "unblock", bob)
		readsAll("after unblock", bob)
		feedRepost(t, bob, annPost.ID)

		// A mute hides nothing here.
		bmMute(t, bob, "mute", ann)
		readsAll("muting", bob)
	})
}
