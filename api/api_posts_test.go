package api

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Black-box tests of createPost, repost, deletePost, User.timeline, and of
// global ids. The connection helpers (relPage, relCollectForward, ...) are in
// api_relations_test.go.

// postNode is a post as these tests read it.
type postNode struct {
	Typename    string `json:"__typename"`
	ID          string
	Body        string
	CreatedAt   time.Time
	RepostCount int
	RepostOf    *struct {
		ID   string
		Body string
	}
	Author struct{ ID string }
}

const postFields = `__typename id body createdAt repostCount repostOf { id body } author { id }`

// postCreate publishes body as c.
func postCreate(t *testing.T, c *client, body string) postNode {
	t.Helper()
	var out struct{ CreatePost struct{ Post postNode } }
	c.mustDo(t, `mutation($b: String!) { createPost(input: {body: $b}) { post { `+postFields+` } } }`, map[string]any{"b": body}, &out)
	return out.CreatePost.Post
}

// postRepost reposts id as c.
func postRepost(t *testing.T, c *client, id string) postNode {
	t.Helper()
	var out struct{ Repost struct{ Post postNode } }
	c.mustDo(t, `mutation($id: ID!) { repost(postId: $id) { post { `+postFields+` } } }`, map[string]any{"id": id}, &out)
	return out.Repost.Post
}

const postRepostDoc = `mutation($id: ID!) { repost(postId: $id) { post { id } } }`
const postDeleteDoc = `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`

// postDelete deletes id as c and checks the payload.
func postDelete(t *testing.T, c *client, id string) {
	t.Helper()
	var out struct {
		DeletePost struct{ DeletedPostID string }
	}
	c.mustDo(t, postDeleteDoc, map[string]any{"id": id}, &out)
	if out.DeletePost.DeletedPostID != id {
		t.Fatalf("deletePost(%s): deletedPostId %q", id, out.DeletePost.DeletedPostID)
	}
}

// postGet reads node(id) as a post; nil when node is null.
func postGet(t *testing.T, c *client, id string) *postNode {
	t.Helper()
	var out struct{ Node *postNode }
	c.mustDo(t, `query($id: ID!) { node(id: $id) { __typename id ... on Post { `+postFields+` } } }`, map[string]any{"id": id}, &out)
	if out.Node != nil && (out.Node.ID != id || out.Node.Typename != "Post") {
		t.Fatalf("node(%s) is %s %s", id, out.Node.Typename, out.Node.ID)
	}
	return out.Node
}

// postMustGet reads a post that must exist.
func postMustGet(t *testing.T, c *client, id string) postNode {
	t.Helper()
	p := postGet(t, c, id)
	if p == nil {
		t.Fatalf("node(%s) is null", id)
	}
	return *p
}

// postRepostCount checks the repostCount of post id.
func postRepostCount(t *testing.T, c *client, what, id string, want int) {
	t.Helper()
	if got := postMustGet(t, c, id).RepostCount; got != want {
		t.Fatalf("%s: repostCount %d, want %d", what, got, want)
	}
}

// postRepostOf is the id of the post p reposts, or "" when repostOf is null.
func postRepostOf(p postNode) string {
	if p.RepostOf == nil {
		return ""
	}
	return p.RepostOf.ID
}

// postTimeline checks user username's whole timeline and postCount against
// want (newest first), and returns the timeline's edges.
func postTimeline(t *testing.T, c *client, username string, want []string) []relEdge {
	t.Helper()
	edges, total := relCollectForward(t, c, "timeline", username, 100)
	relSameList(t, "timeline of "+username, relIDs(edges), want)
	u := relGetUser(t, c, username)
	if u.PostCount != len(want) || total != len(want) {
		t.Fatalf("%s: postCount %d, timeline totalCount %d, want %d", username, u.PostCount, total, len(want))
	}
	return edges
}

// postNewestFirst lists the ids of posts, newest (last made) first.
func postNewestFirst(ps ...postNode) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[len(ps)-1-i] = p.ID
	}
	return ids
}

func TestPostsCreateAndRepost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob, carol := s.signUp(t, "alice"), s.signUp(t, "bob"), s.signUp(t, "carol")

		p := postCreate(t, alice, "  \t hello world \n ")
		if p.Body != "hello world" || p.Author.ID != alice.ID || p.RepostOf != nil || p.RepostCount != 0 || p.CreatedAt.IsZero() {
			t.Fatalf("createPost gave %+v", p)
		}
		if got := postMustGet(t, s.anon(), p.ID); got.Body != "hello world" {
			t.Fatalf("stored body %q", got.Body)
		}
		alice.mustFail(t, "BAD_USER_INPUT", `mutation { createPost(input: {body: " \n\t "}) { post { id } } }`, nil)
		s.anon().mustFail(t, "UNAUTHENTICATED", `mutation { createPost(input: {body: "hi"}) { post { id } } }`, nil)

		// bob reposts p: an empty post pointing at p.
		r := postRepost(t, bob, p.ID)
		if r.Body != "" || r.Author.ID != bob.ID || postRepostOf(r) != p.ID || r.RepostOf.Body != "hello world" || r.ID == p.ID {
			t.Fatalf("repost gave %+v", r)
		}
		postRepostCount(t, s.anon(), "after one repost", p.ID, 1)

		// Reposting again, or reposting one's own repost, returns the same repost.
		if again := postRepost(t, bob, p.ID); again.ID != r.ID {
			t.Fatalf("second repost made %s, want the existing %s", again.ID, r.ID)
		}
		if again := postRepost(t, bob, r.ID); again.ID != r.ID {
			t.Fatalf("reposting one's own repost made %s, want the existing %s", again.ID, r.ID)
		}
		postRepostCount(t, s.anon(), "after reposting twice", p.ID, 1)
		postTimeline(t, s.anon(), "bob", []string{r.ID})

		// A repost of a repost points at the original.
		c := postRepost(t, carol, r.ID)
		if postRepostOf(c) != p.ID || c.Body != "" || c.Author.ID != carol.ID {
			t.Fatalf("repost of a repost gave %+v, want repostOf %s", c, p.ID)
		}
		if again := postRepost(t, carol, p.ID); again.ID != c.ID {
			t.Fatalf("carol reposting the original after its repost made %s, want %s", again.ID, c.ID)
		}
		postRepostCount(t, s.anon(), "after carol's repost", p.ID, 2)
		if got := postMustGet(t, s.anon(), r.ID); postRepostOf(got) != p.ID || got.RepostCount != 0 {
			t.Fatalf("bob's repost read back as %+v", got)
		}
		postTimeline(t, s.anon(), "carol", []string{c.ID})
		postTimeline(t, s.anon(), "alice", []string{p.ID})

		// A user id is no post id.
		bob.mustFail(t, "BAD_USER_INPUT", postRepostDoc, map[string]any{"id": alice.ID})
		s.anon().mustFail(t, "UNAUTHENTICATED", postRepostDoc, map[string]any{"id": p.ID})
	})
}

// Ten reposts of one post by one user at once, some through another repost
// of it, make exactly one repost.
func TestPostsConcurrentRepost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob, dave := s.signUp(t, "alice"), s.signUp(t, "bob"), s.signUp(t, "dave")
		p := postCreate(t, alice, "original")
		r := postRepost(t, bob, p.ID)

		start := make(chan struct{})
		var wg sync.WaitGroup
		ids := make([]string, 10)
		errs := make([]error, 10)
		for i := range ids {
			target := p.ID
			if i%2 == 1 {
				target = r.ID
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var out struct {
					Repost struct{ Post struct{ ID string } }
				}
				errs[i] = relSend(dave, postRepostDoc, map[string]any{"id": target}, &out)
				ids[i] = out.Repost.Post.ID
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("repost %d failed: %v", i, err)
			}
		}
		for i, id := range ids {
			if id == "" || id != ids[0] {
				t.Fatalf("concurrent reposts returned different posts: %v (index %d)", ids, i)
			}
		}
		postRepostCount(t, s.anon(), "after ten concurrent reposts by one user", p.ID, 2)
		postTimeline(t, s.anon(), "dave", []string{ids[0]})
		if got := postMustGet(t, s.anon(), ids[0]); postRepostOf(got) != p.ID {
			t.Fatalf("dave's repost points at %q, want %s", postRepostOf(got), p.ID)
		}
	})
}

func TestPostsDelete(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob, carol := s.signUp(t, "alice"), s.signUp(t, "bob"), s.signUp(t, "carol")
		p1, p2, p3 := postCreate(t, alice, "one"), postCreate(t, alice, "two"), postCreate(t, alice, "three")
		r2 := postRepost(t, bob, p2.ID)
		r1 := postRepost(t, bob, p1.ID)
		c1 := postRepost(t, carol, p1.ID)
		postTimeline(t, s.anon(), "alice", postNewestFirst(p1, p2, p3))
		postRepostCount(t, s.anon(), "p1 reposted by bob and carol", p1.ID, 2)

		// Only the author may delete.
		bob.mustFail(t, "FORBIDDEN", postDeleteDoc, map[string]any{"id": p2.ID})
		carol.mustFail(t, "FORBIDDEN", postDeleteDoc, map[string]any{"id": r2.ID})
		alice.mustFail(t, "FORBIDDEN", postDeleteDoc, map[string]any{"id": r2.ID})
		s.anon().mustFail(t, "UNAUTHENTICATED", postDeleteDoc, map[string]any{"id": p2.ID})
		postMustGet(t, s.anon(), p2.ID)
		postTimeline(t, s.anon(), "alice", postNewestFirst(p1, p2, p3))
		postTimeline(t, s.anon(), "bob", postNewestFirst(r2, r1))

		// alice deletes p2: it leaves her timeline and her count, node() is
		// null, and bob's repost of it stays, pointing at nothing.
		postDelete(t, alice, p2.ID)
		postTimeline(t, s.anon(), "alice", postNewestFirst(p1, p3))
		if got := postGet(t, s.anon(), p2.ID); got != nil {
			t.Fatalf("node of a deleted post: %+v", got)
		}
		if got := postMustGet(t, s.anon(), r2.ID); got.RepostOf != nil {
			t.Fatalf("repost of a deleted post has repostOf %+v", got.RepostOf)
		}
		edges := postTimeline(t, s.anon(), "bob", postNewestFirst(r2, r1))
		if edges[1].Node.RepostOf != nil || edges[0].Node.RepostOf == nil || edges[0].Node.RepostOf.ID != p1.ID {
			t.Fatalf("bob's timeline: repostOf %+v and %+v, want %s and null", edges[0].Node.RepostOf, edges[1].Node.RepostOf, p1.ID)
		}

		// Deleting again succeeds and changes nothing.
		postDelete(t, alice, p2.ID)
		postTimeline(t, s.anon(), "alice", postNewestFirst(p1, p3))

		// A deleted post cannot be reposted, directly or through a repost.
		carol.mustFail(t, "NOT_FOUND", postRepostDoc, map[string]any{"id": p2.ID})
		carol.mustFail(t, "NOT_FOUND", postRepostDoc, map[string]any{"id": r2.ID})
		postTimeline(t, s.anon(), "carol", []string{c1.ID})

		// Deleting a repost takes it off the original's count, once.
		postDelete(t, bob, r1.ID)
		postRepostCount(t, s.anon(), "after bob deleted his repost", p1.ID, 1)
		postDelete(t, bob, r1.ID)
		postRepostCount(t, s.anon(), "after bob deleted his repost twice", p1.ID, 1)
		postTimeline(t, s.anon(), "bob", []string{r2.ID})
		if got := postGet(t, s.anon(), r1.ID); got != nil {
			t.Fatalf("node of a deleted repost: %+v", got)
		}

		// bob may repost p1 again; it counts again.
		again := postRepost(t, bob, p1.ID)
		if postRepostOf(again) != p1.ID {
			t.Fatalf("reposting after deleting the repost gave %+v", again)
		}
		postRepostCount(t, s.anon(), "after bob reposted again", p1.ID, 2)
		postTimeline(t, s.anon(), "bob", postNewestFirst(r2, again))

		// Deleting a repost of a deleted post works too.
		postDelete(t, bob, r2.ID)
		postTimeline(t, s.anon(), "bob", []string{again.ID})
	})
}

// The timeline is a Relay connection of the user's posts and reposts, newest
// first, exact both ways whatever the page size; totalCount is postCount.
func TestTimelinePaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		s.signUp(t, "quiet")
		var theirs []postNode
		for i := 0; i < 3; i++ {
			theirs = append(theirs, postCreate(t, bob, fmt.Sprintf("bob %d", i)))
		}
		var mine []postNode
		repostOf := map[string]string{}
		for i := 0; i < 12; i++ {
			mine = append(mine, postCreate(t, alice, fmt.Sprintf("alice %d", i)))
			if i%4 == 1 {
				r := postRepost(t, alice, theirs[i/4].ID)
				repostOf[r.ID] = theirs[i/4].ID
				mine = append(mine, r)
			}
		}
		want := postNewestFirst(mine...)
		relCheckWholeList(t, s.anon(), "timeline", "alice", want)
		relCheckWholeList(t, bob, "timeline", "alice", want)
		for _, size := range []int{4, 5, 7} {
			edges, _ := relCollectForward(t, alice, "timeline", "alice", size)
			relSameList(t, fmt.Sprintf("alice's timeline by %d", size), relIDs(edges), want)
			edges, _ = relCollectBackward(t, alice, "timeline", "alice", size)
			relSameList(t, fmt.Sprintf("alice's timeline backward by %d", size), relIDs(edges), want)
		}
		edges := postTimeline(t, s.anon(), "alice", want)
		for i, e := range edges {
			if want := repostOf[e.Node.ID]; want != "" {
				if e.Node.Body != "" || e.Node.RepostOf == nil || e.Node.RepostOf.ID != want {
					t.Fatalf("timeline entry %d: body %q repostOf %+v, want a repost of %s", i, e.Node.Body, e.Node.RepostOf, want)
				}
			} else if e.Node.RepostOf != nil || e.Node.Body == "" {
				t.Fatalf("timeline entry %d: body %q repostOf %+v, want a post", i, e.Node.Body, e.Node.RepostOf)
			}
			if i > 0 && e.Node.CreatedAt.After(*edges[i-1].Node.CreatedAt) {
				t.Fatalf("timeline entry %d is newer than entry %d", i, i-1)
			}
		}

		// first: 0 and last: 0.
		p := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(0)})
		if len(p.Edges) != 0 || p.TotalCount != len(want) || !p.PageInfo.HasNextPage || p.PageInfo.HasPreviousPage {
			t.Fatalf("first: 0 gave %d edges, totalCount %d, hasNextPage %v, hasPreviousPage %v", len(p.Edges), p.TotalCount, p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage)
		}
		p = relPage(t, s.anon(), "timeline", "alice", relArgs{Last: relInt(0)})
		if len(p.Edges) != 0 || p.TotalCount != len(want) || p.PageInfo.HasNextPage || !p.PageInfo.HasPreviousPage {
			t.Fatalf("last: 0 gave %d edges, totalCount %d, hasNextPage %v, hasPreviousPage %v", len(p.Edges), p.TotalCount, p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage)
		}

		// The page after the newest entry has that entry before it; the page
		// before the oldest entry has that entry after it.
		p = relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(2), After: &edges[0].Cursor})
		relSameList(t, "page after the newest entry", relIDs(p.Edges), want[1:3])
		if !p.PageInfo.HasPreviousPage {
			t.Errorf("first: 2 after the newest entry's cursor: hasPreviousPage false, want true")
		}
		p = relPage(t, s.anon(), "timeline", "alice", relArgs{Last: relInt(2), Before: &edges[len(edges)-1].Cursor})
		relSameList(t, "page before the oldest entry", relIDs(p.Edges), want[len(want)-3:len(want)-1])
		if !p.PageInfo.HasNextPage {
			t.Errorf("last: 2 before the oldest entry's cursor: hasNextPage false, want true")
		}

		// The default page is the newest entries, and a middle page knows both sides.
		p = relPage(t, s.anon(), "timeline", "alice", relArgs{})
		relSameList(t, "default page", relIDs(p.Edges), want)
		mid := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(5), After: &edges[4].Cursor})
		relSameList(t, "forward middle page", relIDs(mid.Edges), want[5:10])
		if !mid.PageInfo.HasNextPage || !mid.PageInfo.HasPreviousPage {
			t.Fatalf("forward middle page: hasNextPage %v hasPreviousPage %v", mid.PageInfo.HasNextPage, mid.PageInfo.HasPreviousPage)
		}
		back := relPage(t, s.anon(), "timeline", "alice", relArgs{Last: relInt(5), Before: &edges[10].Cursor})
		relSameList(t, "backward middle page", relIDs(back.Edges), want[5:10])
		if !back.PageInfo.HasNextPage || !back.PageInfo.HasPreviousPage {
			t.Fatalf("backward middle page: hasNextPage %v hasPreviousPage %v", back.PageInfo.HasNextPage, back.PageInfo.HasPreviousPage)
		}
		// Between two cursors.
		between := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(100), After: &edges[2].Cursor, Before: &edges[6].Cursor})
		relSameList(t, "page between two cursors", relIDs(between.Edges), want[3:6])

		// An empty timeline.
		relCheckWholeList(t, s.anon(), "timeline", "quiet", nil)
		postTimeline(t, s.anon(), "quiet", nil)
	})
}

// A cursor whose post was deleted stays valid: paging resumes from its
// place, both ways, without repeats or skips.
func TestTimelineCursorOfDeletedPost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		var ps []postNode
		for i := 0; i < 10; i++ {
			ps = append(ps, postCreate(t, alice, fmt.Sprintf("post %d", i)))
		}
		want := postNewestFirst(ps...) // post 9 .. post 0

		first := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(4)})
		relSameList(t, "first page", relIDs(first.Edges), want[:4])
		postDelete(t, alice, ps[6].ID) // the last entry of the first page
		rest := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(3), After: first.PageInfo.EndCursor})
		relSameList(t, "page after the cursor of a deleted post", relIDs(rest.Edges), want[4:7])
		if !rest.PageInfo.HasNextPage || !rest.PageInfo.HasPreviousPage || rest.TotalCount != 9 {
			t.Fatalf("page after a deleted post's cursor: hasNextPage %v hasPreviousPage %v totalCount %d", rest.PageInfo.HasNextPage, rest.PageInfo.HasPreviousPage, rest.TotalCount)
		}
		postDelete(t, alice, ps[3].ID) // the last entry of that page
		tail := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(3), After: rest.PageInfo.EndCursor})
		relSameList(t, "last page", relIDs(tail.Edges), want[7:])
		if tail.PageInfo.HasNextPage || !tail.PageInfo.HasPreviousPage {
			t.Fatalf("last page: hasNextPage %v hasPreviousPage %v", tail.PageInfo.HasNextPage, tail.PageInfo.HasPreviousPage)
		}

		// Backward from the cursor of a deleted post.
		up := relPage(t, s.anon(), "timeline", "alice", relArgs{Last: relInt(100), Before: rest.PageInfo.EndCursor})
		relSameList(t, "backward page before a deleted post's cursor", relIDs(up.Edges), []string{ps[9].ID, ps[8].ID, ps[7].ID, ps[5].ID, ps[4].ID})
		if !up.PageInfo.HasNextPage || up.PageInfo.HasPreviousPage {
			t.Fatalf("backward page before a deleted post's cursor: hasNextPage %v hasPreviousPage %v", up.PageInfo.HasNextPage, up.PageInfo.HasPreviousPage)
		}
		// The cursor of the oldest post, deleted: nothing beyond it.
		oldest := tail.Edges[len(tail.Edges)-1].Cursor
		postDelete(t, alice, ps[0].ID)
		none := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(10), After: &oldest})
		if len(none.Edges) != 0 || none.PageInfo.HasNextPage || !none.PageInfo.HasPreviousPage {
			t.Fatalf("after the oldest (deleted) post: %d edges, hasNextPage %v hasPreviousPage %v", len(none.Edges), none.PageInfo.HasNextPage, none.PageInfo.HasPreviousPage)
		}
		relCheckWholeList(t, s.anon(), "timeline", "alice", []string{ps[9].ID, ps[8].ID, ps[7].ID, ps[5].ID, ps[4].ID, ps[2].ID, ps[1].ID})
	})
}

// New posts made while a client pages forward (towards older) neither repeat
// nor push entries off the pages; paging backward from the first page's
// start finds exactly them.
func TestTimelineNewPostsWhilePaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		theirs := postCreate(t, bob, "bob's")
		var ps []postNode
		for i := 0; i < 9; i++ {
			ps = append(ps, postCreate(t, alice, fmt.Sprintf("post %d", i)))
		}
		want := postNewestFirst(ps...)

		var got []string
		var fresh []postNode
		var after *string
		var top string
		guard := pageGuard{t: t, what: "alice's timeline forward by 3 while posts arrive"}
		for page := 0; ; page++ {
			p := relPage(t, s.anon(), "timeline", "alice", relArgs{First: relInt(3), After: after})
			if page == 0 {
				top = *p.PageInfo.StartCursor
			}
			if p.PageInfo.HasPreviousPage != (page > 0) {
				t.Fatalf("page %d: hasPreviousPage %v", page, p.PageInfo.HasPreviousPage)
			}
			got = append(got, relIDs(p.Edges)...)
			if !p.PageInfo.HasNextPage {
				break
			}
			guard.follow(p.PageInfo.EndCursor, len(want))
			after = p.PageInfo.EndCursor
			// Between pages: a new post and a repost.
			fresh = append(fresh, postCreate(t, alice, fmt.Sprintf("new %d", page)))
			if page == 0 {
				fresh = append(fresh, postRepost(t, alice, theirs.ID))
			}
		}
		relSameList(t, "forward pages while posts arrive", got, want)

		newer := relPage(t, s.anon(), "timeline", "alice", relArgs{Last: relInt(100), Before: &top})
		relSameList(t, "entries newer than the first page", relIDs(newer.Edges), postNewestFirst(fresh...))
		if !newer.PageInfo.HasNextPage || newer.PageInfo.HasPreviousPage {
			t.Fatalf("newer entries: hasNextPage %v hasPreviousPage %v", newer.PageInfo.HasNextPage, newer.PageInfo.HasPreviousPage)
		}
		postTimeline(t, s.anon(), "alice", append(postNewestFirst(fresh...), want...))
	})
}

// Global ids are opaque strings that node() and nodes() resolve to the same
// user or post.
func TestIDsRoundTrip(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		if alice.ID == "" || bob.ID == "" || alice.ID == bob.ID {
			t.Fatalf("user ids %q and %q", alice.ID, bob.ID)
		}
		var ps []postNode
		for i := 0; i < 5; i++ {
			ps = append(ps, postCreate(t, alice, fmt.Sprintf("post %d", i)))
		}
		r := postRepost(t, bob, ps[2].ID)
		ps = append(ps, r)

		ids := []string{alice.ID, bob.ID}
		seen := map[string]bool{alice.ID: true, bob.ID: true}
		createdAtReported := false
		for i, p := range ps {
			if p.ID == "" || seen[p.ID] {
				t.Fatalf("post %d has an empty or repeated id %q", i, p.ID)
			}
			seen[p.ID] = true
			ids = append(ids, p.ID)
			got := postMustGet(t, s.anon(), p.ID)
			if got.Body != p.Body || got.Author.ID != p.Author.ID || postRepostOf(got) != postRepostOf(p) {
				t.Fatalf("node(%s) = %+v, want %+v", p.ID, got, p)
			}
			if !got.CreatedAt.Equal(p.CreatedAt) && !createdAtReported {
				createdAtReported = true
				t.Errorf("post %d: createdAt %v in the mutation's answer, but node() reads %v", i, p.CreatedAt, got.CreatedAt)
			}
			if i > 0 && p.CreatedAt.Before(ps[i-1].CreatedAt) {
				t.Fatalf("post %d was created before post %d", i, i-1)
			}
		}
		// Later posts sort first on the timeline: ids sort by creation.
		postTimeline(t, s.anon(), "alice", postNewestFirst(ps[:5]...))

		for _, u := range []*client{alice, bob} {
			var out struct {
				Node *struct {
					Typename string `json:"__typename"`
					ID       string
					Username string
				}
			}
			s.anon().mustDo(t, `query($id: ID!) { node(id: $id) { __typename id ... on User { username } } }`, map[string]any{"id": u.ID}, &out)
			if out.Node == nil || out.Node.Typename != "User" || out.Node.ID != u.ID || out.Node.Username != u.Name {
				t.Fatalf("node(%s) = %+v, want user %s", u.ID, out.Node, u.Name)
			}
		}

		// nodes() resolves them all, in order.
		var out struct {
			Nodes []*struct {
				Typename string `json:"__typename"`
				ID       string
			}
		}
		s.anon().mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, map[string]any{"ids": ids}, &out)
		if len(out.Nodes) != len(ids) {
			t.Fatalf("nodes gave %d, want %d", len(out.Nodes), len(ids))
		}
		for i, n := range out.Nodes {
			wantType := "Post"
			if i < 2 {
				wantType = "User"
			}
			if n == nil || n.ID != ids[i] || n.Typename != wantType {
				t.Fatalf("nodes[%d] = %+v, want %s %s", i, n, wantType, ids[i])
			}
		}

		// The ids the payloads and lists hand out are the same strings.
		var viewer struct{ Viewer struct{ ID string } }
		alice.mustDo(t, `{ viewer { id } }`, nil, &viewer)
		if viewer.Viewer.ID != alice.ID {
			t.Fatalf("viewer id %q, signUp gave %q", viewer.Viewer.ID, alice.ID)
		}
		user, _ := relChange(t, bob, "follow", alice)
		if user.ID != alice.ID {
			t.Fatalf("follow payload id %q, signUp gave %q", user.ID, alice.ID)
		}
		relCheckWholeList(t, s.anon(), "followers", "alice", []string{bob.ID})
	})
}

// Many posts made at once by several users get distinct ids, each resolves
// through node(), and each user's posts sort by creation on their timeline.
func TestIDsUniqueUnderLoad(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		const users, writers, each = 4, 4, 10
		cs := relSignUpMany(t, s, "writer", users)
		type result struct {
			ids []string // in creation order
			err error
		}
		results := make([][]result, users)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for u, c := range cs {
			results[u] = make([]result, writers)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res := &results[u][w]
					for i := 0; i < each; i++ {
						var out struct {
							CreatePost struct{ Post struct{ ID string } }
						}
						if res.err = relSend(c, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`,
							map[string]any{"b": fmt.Sprintf("w%d p%d", w, i)}, &out); res.err != nil {
							return
						}
						res.ids = append(res.ids, out.CreatePost.Post.ID)
					}
				}()
			}
		}
		close(start)
		wg.Wait()

		seen := map[string]bool{}
		var all []string
		for u, rs := range results {
			for w, r := range rs {
				if r.err != nil {
					t.Fatalf("writer %d of user %d: %v", w, u, r.err)
				}
				for _, id := range r.ids {
					if id == "" || seen[id] {
						t.Fatalf("empty or repeated post id %q", id)
					}
					seen[id] = true
					all = append(all, id)
				}
			}
		}
		if len(all) != users*writers*each {
			t.Fatalf("%d posts, want %d", len(all), users*writers*each)
		}

		for u, c := range cs {
			edges, total := relCollectForward(t, s.anon(), "timeline", c.Name, 7)
			if total != writers*each || len(edges) != writers*each {
				t.Fatalf("%s: totalCount %d, %d entries, want %d", c.Name, total, len(edges), writers*each)
			}
			place := map[string]int{}
			for i, e := range edges {
				place[e.Node.ID] = i
			}
			// One writer's posts were made one after another: the timeline
			// shows them newest first.
			for w, r := range results[u] {
				for i, id := range r.ids {
					at, ok := place[id]
					if !ok {
						t.Fatalf("%s: post %s of writer %d missing from the timeline", c.Name, id, w)
					}
					if i > 0 && at > place[r.ids[i-1]] {
						t.Fatalf("%s: writer %d's post %d is listed after its post %d", c.Name, w, i, i-1)
					}
				}
			}
		}

		// nodes() resolves every id, 100 at a time.
		for len(all) > 0 {
			n := min(len(all), 100)
			batch := all[:n]
			all = all[n:]
			var out struct{ Nodes []*struct{ ID string } }
			s.anon().mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": batch}, &out)
			for i, node := range out.Nodes {
				if node == nil || node.ID != batch[i] {
					t.Fatalf("nodes[%d] = %+v, want %s", i, node, batch[i])
				}
			}
			if len(out.Nodes) != len(batch) {
				t.Fatalf("nodes gave %d, want %d", len(out.Nodes), len(batch))
			}
		}
	})
}
