package api

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
)

// Black-box tests of block and mute (issue 25): the four mutations, the
// viewer's two lists, the two flags on User, and what they do to follows,
// timelines and the home feed in every feed mode.

// bmUser is a user as the block and mute tests read it.
type bmUser struct {
	relUser
	ViewerHasBlocked bool
	ViewerHasMuted   bool
}

const bmUserFields = relUserFields + ` viewerHasBlocked viewerHasMuted`

// bmDoc is the document of op (block, unblock, mute or unmute) on $id.
func bmDoc(op string) string {
	if op == "block" || op == "unblock" {
		return `mutation($id: ID!) { r: ` + op + `(userId: $id) { user { id } viewer { id } } }`
	}
	return `mutation($id: ID!) { r: ` + op + `(userId: $id) { user { id } } }`
}

// bmBlock runs block or unblock (op) on target as c and returns the
// payload's user and viewer.
func bmBlock(t *testing.T, c *client, op string, target *client) (user, viewer bmUser) {
	t.Helper()
	var out struct{ R struct{ User, Viewer bmUser } }
	c.mustDo(t, `mutation($id: ID!) { r: `+op+`(userId: $id) { user { `+bmUserFields+` } viewer { `+bmUserFields+` } } }`,
		map[string]any{"id": target.ID}, &out)
	if out.R.User.ID != target.ID || out.R.Viewer.ID != c.ID {
		t.Fatalf("%s(%s) by %s: payload user %q viewer %q, want %q and %q", op, target.Name, c.Name, out.R.User.ID, out.R.Viewer.ID, target.ID, c.ID)
	}
	return out.R.User, out.R.Viewer
}

// bmMute runs mute or unmute (op) on target as c and returns the payload's
// user.
func bmMute(t *testing.T, c *client, op string, target *client) bmUser {
	t.Helper()
	var out struct{ R struct{ User bmUser } }
	c.mustDo(t, `mutation($id: ID!) { r: `+op+`(userId: $id) { user { `+bmUserFields+` } } }`, map[string]any{"id": target.ID}, &out)
	if out.R.User.ID != target.ID {
		t.Fatalf("%s(%s) by %s: payload user %q, want %q", op, target.Name, c.Name, out.R.User.ID, target.ID)
	}
	return out.R.User
}

// bmGetUser reads user username as c sees them (c may be signed out).
func bmGetUser(t *testing.T, c *client, username string) bmUser {
	t.Helper()
	var out struct{ User *bmUser }
	c.mustDo(t, `query($u: String!) { user(username: $u) { `+bmUserFields+` } }`, map[string]any{"u": username}, &out)
	if out.User == nil {
		t.Fatalf("user %q not found", username)
	}
	return *out.User
}

// bmHas checks viewerHasBlocked and viewerHasMuted.
func bmHas(t *testing.T, what string, u bmUser, blocked, muted bool) {
	t.Helper()
	if u.ViewerHasBlocked != blocked || u.ViewerHasMuted != muted {
		t.Fatalf("%s (%s): viewerHasBlocked %v viewerHasMuted %v, want %v and %v", what, u.Username, u.ViewerHasBlocked, u.ViewerHasMuted, blocked, muted)
	}
}

// bmTimeline reads the first page of username's timeline as c.
func bmTimeline(t *testing.T, c *client, username string) relConnection {
	t.Helper()
	return relPage(t, c, "timeline", username, relArgs{First: relInt(20)})
}

func TestBlockMuteMutationErrors(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
		post := feedCreatePost(t, bob, "a post, not a user")
		for _, op := range []string{"block", "unblock", "mute", "unmute"} {
			t.Run(op, func(t *testing.T) {
				ann.mustFail(t, "BAD_USER_INPUT", bmDoc(op), map[string]any{"id": ann.ID})
				s.anon().mustFail(t, "UNAUTHENTICATED", bmDoc(op), map[string]any{"id": bob.ID})
				ann.mustFail(t, "NOT_FOUND", bmDoc(op), map[string]any{"id": errsUnknownUserID})
				ann.mustFail(t, "BAD_USER_INPUT", bmDoc(op), map[string]any{"id": post.ID})
				ann.mustFail(t, "BAD_USER_INPUT", bmDoc(op), map[string]any{"id": "not an id"})
			})
		}
		// None of the refused ones left a trace.
		for _, field := range []string{"blockedUsers", "mutedUsers"} {
			bmCheckList(t, ann, field, nil)
		}
		relCounts(t, "ann after the refusals", bmGetUser(t, ann, "ann").relUser, 0, 0)
		for _, field := range []string{"blockedUsers", "mutedUsers"} {
			s.anon().mustFail(t, "UNAUTHENTICATED", bmListQuery(field), map[string]any{"first": 5})
		}
	})
}

// TestBlockMuteBlockEndsFollows: a block ends the follows both ways, its
// payload's counts show it, a follow either way is FORBIDDEN while either
// blocks the other, unblock restores no follow, and each one's timeline is
// empty (not an error) for the other until then. block and unblock are
// idempotent.
func TestBlockMuteBlockEndsFollows(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat")
		relChange(t, ann, "follow", bob)
		relChange(t, bob, "follow", ann)
		relChange(t, cat, "follow", ann)
		relChange(t, cat, "follow", bob)
		annPost, bobPost := feedCreatePost(t, ann, "ann's"), feedCreatePost(t, bob, "bob's")

		for i := range 2 {
			user, viewer := bmBlock(t, ann, "block", bob)
			what := fmt.Sprintf("block #%d", i+1)
			relCounts(t, what+": payload user", user.relUser, 1, 0)
			relCounts(t, what+": payload viewer", viewer.relUser, 1, 0)
			relFlags(t, what+": payload user, seen by ann", user.relUser, false, false)
			bmHas(t, what+": payload user, seen by ann", user, true, false)
			bmHas(t, what+": payload viewer, seen by ann", viewer, false, false)
		}
		relCheckWholeList(t, cat, "followers", "bob", []string{cat.ID})
		relCheckWholeList(t, cat, "followers", "ann", []string{cat.ID})
		bmHas(t, "ann seen by bob", bmGetUser(t, bob, "ann"), false, false)
		bmHas(t, "bob seen signed out", bmGetUser(t, s.anon(), "bob"), false, false)

		followDoc := `mutation($id: ID!) { follow(userId: $id) { user { id } } }`
		forbidden := func(what string) {
			t.Helper()
			ann.mustFail(t, "FORBIDDEN", followDoc, map[string]any{"id": bob.ID})
			bob.mustFail(t, "FORBIDDEN", followDoc, map[string]any{"id": ann.ID})
			relCounts(t, what+": ann", relGetUser(t, cat, "ann"), 1, 0)
			relCounts(t, what+": bob", relGetUser(t, cat, "bob"), 1, 0)
		}
		forbidden("after ann's block")

		// Each one's timeline is an empty connection for the other; others
		// and the signed-out still read it.
		emptyFor := func(what string, c *client, username string) {
			t.Helper()
			p := bmTimeline(t, c, username)
			if len(p.Edges) != 0 || p.TotalCount != 0 || p.PageInfo.HasNextPage || p.PageInfo.HasPreviousPage {
				t.Fatalf("%s: %s's timeline read by %s: %d edges, totalCount %d, pageInfo %+v, want an empty connection",
					what, username, c.Name, len(p.Edges), p.TotalCount, p.PageInfo)
			}
		}
		holds := func(what string, c *client, username, postID string) {
			t.Helper()
			if got := relIDs(bmTimeline(t, c, username).Edges); !slices.Equal(got, []string{postID}) {
				t.Fatalf("%s: %s's timeline read by %s: %v, want [%s]", what, username, c.Name, got, postID)
			}
		}
		emptyFor("blocked", ann, "bob")
		emptyFor("blocked", bob, "ann")
		holds("blocked", cat, "bob", bobPost.ID)
		holds("blocked", s.anon(), "ann", annPost.ID)
		holds("blocked", ann, "ann", annPost.ID)

		// bob blocks ann too; ann's unblock then leaves the follows refused.
		bmBlock(t, bob, "block", ann)
		for i := range 2 {
			user, viewer := bmBlock(t, ann, "unblock", bob)
			what := fmt.Sprintf("unblock #%d", i+1)
			relCounts(t, what+": payload user", user.relUser, 1, 0)
			relCounts(t, what+": payload viewer", viewer.relUser, 1, 0)
			relFlags(t, what+": payload user, seen by ann", user.relUser, false, false)
			bmHas(t, what+": payload user, seen by ann", user, false, false)
		}
		forbidden("while bob still blocks ann")
		emptyFor("bob still blocks ann", ann, "bob")
		emptyFor("bob still blocks ann", bob, "ann")

		// Once neither blocks: no follow came back, timelines are back, and
		// a follow either way works.
		bmBlock(t, bob, "unblock", ann)
		relFlags(t, "bob seen by ann after both unblocks", relGetUser(t, ann, "bob"), false, false)
		relCounts(t, "ann after both unblocks", relGetUser(t, cat, "ann"), 1, 0)
		holds("unblocked", ann, "bob", bobPost.ID)
		holds("unblocked", bob, "ann", annPost.ID)
		user, viewer := relChange(t, ann, "follow", bob)
		relCounts(t, "follow after unblock: payload user", user, 2, 0)
		relCounts(t, "follow after unblock: payload viewer", viewer, 1, 1)
		relChange(t, bob, "follow", ann)
		relFlags(t, "bob seen by ann after following again", relGetUser(t, ann, "bob"), true, true)
	})
}

// TestBlockMuteMuteKeepsFollows: a mute changes no follow and no count, and
// does not stop a follow; mute and unmute are idempotent.
func TestBlockMuteMuteKeepsFollows(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
		relChange(t, ann, "follow", bob)
		for i := range 2 {
			user := bmMute(t, ann, "mute", bob)
			what := fmt.Sprintf("mute #%d", i+1)
			relCounts(t, what+": payload user", user.relUser, 1, 0)
			relFlags(t, what+": payload user, seen by ann", user.relUser, true, false)
			bmHas(t, what+": payload user, seen by ann", user, false, true)
		}
		bmHas(t, "ann seen by bob", bmGetUser(t, bob, "ann"), false, false)
		relChange(t, bob, "follow", ann) // a muted user may follow
		relChange(t, ann, "unfollow", bob)
		relChange(t, ann, "follow", bob) // and be followed
		for i := range 2 {
			user := bmMute(t, ann, "unmute", bob)
			what := fmt.Sprintf("unmute #%d", i+1)
			relCounts(t, what+": payload user", user.relUser, 1, 1)
			relFlags(t, what+": payload user, seen by ann", user.relUser, true, true)
			bmHas(t, what+": payload user, seen by ann", user, false, false)
		}
	})
}

// bmEdge is an edge of a RelatedUserConnection.
type bmEdge struct {
	Cursor string
	Since  time.Time
	Node   struct {
		ID               string
		Username         string
		ViewerHasBlocked bool
		ViewerHasMuted   bool
	}
}

type bmConnection struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage     bool
		HasPreviousPage bool
		StartCursor     *string
		EndCursor       *string
	}
	Edges []bmEdge
}

// bmListQuery is the query of one page of the viewer's field, blockedUsers
// or mutedUsers.
func bmListQuery(field string) string {
	return `query($first: Int, $after: String, $last: Int, $before: String) {
  conn: ` + field + `(first: $first, after: $after, last: $last, before: $before) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor since node { id username viewerHasBlocked viewerHasMuted } }
  }
}`
}

// bmPage reads one page of c's field and checks that startCursor and
// endCursor are its first and last edges' (null on an empty page) and that
// its cursors are distinct.
func bmPage(t *testing.T, c *client, field string, a relArgs) bmConnection {
	t.Helper()
	var out struct{ Conn bmConnection }
	c.mustDo(t, bmListQuery(field), map[string]any{"first": a.First, "after": a.After, "last": a.Last, "before": a.Before}, &out)
	p := out.Conn
	where := fmt.Sprintf("%s of %s %+v", field, c.Name, relShowArgs(a))
	if len(p.Edges) == 0 {
		if p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil {
			t.Fatalf("%s: empty page with startCursor %v endCursor %v", where, p.PageInfo.StartCursor, p.PageInfo.EndCursor)
		}
		return p
	}
	first, last := p.Edges[0].Cursor, p.Edges[len(p.Edges)-1].Cursor
	if feedStr(p.PageInfo.StartCursor) != first || feedStr(p.PageInfo.EndCursor) != last {
		t.Fatalf("%s: startCursor %s endCursor %s, want the edges' %q and %q", where, feedStr(p.PageInfo.StartCursor), feedStr(p.PageInfo.EndCursor), first, last)
	}
	seen := map[string]bool{}
	for _, e := range p.Edges {
		if e.Cursor == "" || seen[e.Cursor] {
			t.Fatalf("%s: empty or repeated cursor %q", where, e.Cursor)
		}
		seen[e.Cursor] = true
	}
	return p
}

// bmCollect pages c's field from one end (the top with first: size when
// forward, else the bottom with last: size) following the cursors until
// the other end, checking each page as relCollectForward does, and returns
// the edges in list order (most recent first) and the totalCount.
func bmCollect(t *testing.T, c *client, field string, size int, forward bool) ([]bmEdge, int) {
	t.Helper()
	var all []bmEdge
	var cursor *string
	total := -1
	guard := pageGuard{t: t, what: fmt.Sprintf("%s of %s, forward %v by %d", field, c.Name, forward, size)}
	for i := 0; ; i++ {
		a := relArgs{First: &size, After: cursor}
		if !forward {
			a = relArgs{Last: &size, Before: cursor}
		}
		p := bmPage(t, c, field, a)
		where := fmt.Sprintf("%s of %s, page %d %+v", field, c.Name, i, relShowArgs(a))
		if len(p.Edges) > size {
			t.Fatalf("%s: %d edges", where, len(p.Edges))
		}
		if i > 0 && len(p.Edges) == 0 {
			t.Fatalf("%s: empty page although the previous page said there was more", where)
		}
		if total >= 0 && p.TotalCount != total {
			t.Fatalf("%s: totalCount %d, was %d", where, p.TotalCount, total)
		}
		total = p.TotalCount
		more, behind, next := p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.EndCursor
		if forward {
			all = append(all, p.Edges...)
		} else {
			more, behind, next = p.PageInfo.HasPreviousPage, p.PageInfo.HasNextPage, p.PageInfo.StartCursor
			all = append(slices.Clone(p.Edges), all...)
		}
		if behind != (cursor != nil) {
			t.Errorf("%s: the flag of the side it came from is %v, want %v (pageInfo %+v)", where, behind, cursor != nil, p.PageInfo)
		}
		if !more {
			return all, total
		}
		if len(p.Edges) < size {
			t.Fatalf("%s: short page (%d edges) that says there is more", where, len(p.Edges))
		}
		guard.follow(next, total)
		cursor = next
	}
}

// bmCheckList pages c's field (blockedUsers or mutedUsers) both ways with
// several page sizes and checks that each covers exactly want (global ids,
// most recent first), with totalCount equal to len(want), a since that
// never increases down the list, and the node's flag of the list set.
func bmCheckList(t *testing.T, c *client, field string, want []string) {
	t.Helper()
	for _, size := range []int{1, 2, 3, len(want), 100} {
		if size == 0 {
			continue
		}
		for _, forward := range []bool{true, false} {
			edges, total := bmCollect(t, c, field, size, forward)
			what := fmt.Sprintf("%s of %s, forward %v by %d", field, c.Name, forward, size)
			ids := make([]string, len(edges))
			for i, e := range edges {
				ids[i] = e.Node.ID
				if e.Since.IsZero() || i > 0 && e.Since.After(edges[i-1].Since) {
					t.Fatalf("%s: since of edge %d is %v, after edge %d's %v (or zero)", what, i, e.Since, i-1, edges[max(i-1, 0)].Since)
				}
				if flag := map[string]bool{"blockedUsers": e.Node.ViewerHasBlocked, "mutedUsers": e.Node.ViewerHasMuted}[field]; !flag {
					t.Fatalf("%s: %s is listed, but its flag says no", what, e.Node.Username)
				}
			}
			relSameList(t, what, ids, want)
			if total != len(want) {
				t.Fatalf("%s: totalCount %d, want %d", what, total, len(want))
			}
		}
	}
}

// TestBlockMuteListsPaging: blockedUsers and mutedUsers are Relay
// connections of the viewer's own, most recent first, exact whichever way
// and by whatever page size they are read; a repeated block or mute keeps
// its place, an undone one leaves, a new one goes on top; viewerHasBlocked
// and viewerHasMuted say the same of every user, batched.
func TestBlockMuteListsPaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		viewer, other := s.signUp(t, "viewer"), s.signUp(t, "other")
		users := relSignUpMany(t, s, "usr", 7)
		for _, u := range users {
			bmBlock(t, viewer, "block", u)
		}
		var muted []*client // usr6 first
		for i := len(users) - 1; i >= 0; i-- {
			bmMute(t, viewer, "mute", users[i])
			muted = append(muted, users[i])
		}
		bmCheckList(t, viewer, "blockedUsers", relNewestFirst(users))
		bmCheckList(t, viewer, "mutedUsers", relNewestFirst(muted))
		bmCheckList(t, other, "blockedUsers", nil)
		bmCheckList(t, other, "mutedUsers", nil)
		bmCheckList(t, users[0], "blockedUsers", nil)

		// Again: nothing moves.
		bmBlock(t, viewer, "block", users[3])
		bmMute(t, viewer, "mute", users[3])
		bmCheckList(t, viewer, "blockedUsers", relNewestFirst(users))
		bmCheckList(t, viewer, "mutedUsers", relNewestFirst(muted))

		// A page, then its last user unblocked: the rest follows its cursor.
		top := bmPage(t, viewer, "blockedUsers", relArgs{First: relInt(3)})
		bmBlock(t, viewer, "unblock", users[4]) // the third most recent
		rest := bmPage(t, viewer, "blockedUsers", relArgs{First: relInt(100), After: top.PageInfo.EndCursor})
		if got := len(rest.Edges); got != 4 || rest.TotalCount != 6 || rest.Edges[0].Node.ID != users[3].ID || !rest.PageInfo.HasPreviousPage {
			t.Fatalf("the page after the cursor of an unblocked user: %d edges from %v, totalCount %d, pageInfo %+v", got, rest.Edges, rest.TotalCount, rest.PageInfo)
		}
		// A block after the unblock goes on top.
		bmBlock(t, viewer, "block", users[4])
		bmBlock(t, viewer, "unblock", users[0])
		bmMute(t, viewer, "unmute", users[6])
		bmCheckList(t, viewer, "blockedUsers", []string{users[4].ID, users[6].ID, users[5].ID, users[3].ID, users[2].ID, users[1].ID})
		bmCheckList(t, viewer, "mutedUsers", relNewestFirst(muted[1:]))

		// The middle, both ways; a cursor of one list is refused by the other.
		all := []string{users[4].ID, users[6].ID, users[5].ID, users[3].ID, users[2].ID, users[1].ID}
		p := bmPage(t, viewer, "blockedUsers", relArgs{First: relInt(2)})
		mid := bmPage(t, viewer, "blockedUsers", relArgs{First: relInt(2), After: p.PageInfo.EndCursor})
		back := bmPage(t, viewer, "blockedUsers", relArgs{Last: relInt(1), Before: mid.PageInfo.EndCursor})
		if len(mid.Edges) != 2 || mid.Edges[0].Node.ID != all[2] || len(back.Edges) != 1 || back.Edges[0].Node.ID != all[2] ||
			!back.PageInfo.HasNextPage || !back.PageInfo.HasPreviousPage {
			t.Fatalf("middle pages: forward %v, backward %v (pageInfo %+v)", mid.Edges, back.Edges, back.PageInfo)
		}
		viewer.mustFail(t, "BAD_USER_INPUT", bmListQuery("mutedUsers"), map[string]any{"first": 2, "after": *p.PageInfo.EndCursor})
		viewer.mustFail(t, "BAD_USER_INPUT", bmListQuery("blockedUsers"), map[string]any{"first": 2, "last": 2})

		// The flags, for many users in one operation (one batch each), as
		// the viewer, as another user and signed out.
		flags := func(c *client) map[string][2]bool {
			t.Helper()
			var out struct{ Nodes []*bmUser }
			ids := []string{viewer.ID, other.ID}
			for _, u := range users {
				ids = append(ids, u.ID)
			}
			c.mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { ... on User { `+bmUserFields+` } } }`, map[string]any{"ids": ids}, &out)
			got := map[string][2]bool{}
			for _, u := range out.Nodes {
				got[u.Username] = [2]bool{u.ViewerHasBlocked, u.ViewerHasMuted}
			}
			return got
		}
		viewers := map[string][2]bool{users[0].Name: {false, true}, users[6].Name: {true, false}}
		for _, u := range users[1:6] {
			viewers[u.Name] = [2]bool{true, true}
		}
		for c, want := range map[*client]map[string][2]bool{viewer: viewers, other: {}, s.anon(): {}} {
			got := flags(c)
			for _, u := range append([]*client{viewer, other}, users...) {
				if got[u.Name] != want[u.Name] {
					t.Errorf("%s seen by %s: [viewerHasBlocked viewerHasMuted] = %v, want %v", u.Name, c.Name, got[u.Name], want[u.Name])
				}
			}
		}
	})
}

// TestBlockMuteCountAgainstMutationRate: block, unblock, mute and unmute
// each spend from the viewer's MUTATION_RATE budget; a refused one changes
// nothing.
func TestBlockMuteCountAgainstMutationRate(t *testing.T) {
	t.Parallel()
	const n = 4
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MutationRate = ratelimit.Rate{Count: n, Period: time.Hour} })
	ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
	for _, op := range []string{"mute", "unmute", "block", "unblock"} {
		if r, _ := limitsDo(t, s, ann.Token, nil, bmDoc(op), map[string]any{"id": bob.ID}, nil); len(r.Errors) > 0 {
			t.Fatalf("%s, mutation %d of %d: %+v", op, n, n, r.Errors)
		}
	}
	for _, op := range []string{"block", "mute"} {
		r, res := limitsDo(t, s, ann.Token, nil, bmDoc(op), map[string]any{"id": bob.ID}, nil)
		limitsRateLimited(t, r, res, op+" past the budget")
	}
	bmHas(t, "bob seen by ann after the refused block and mute", bmGetUser(t, ann, "bob"), false, false)
	// Signed out, each spends the address's budget before it is refused.
	for _, op := range []string{"block", "unblock", "mute", "unmute"} {
		if r, _ := limitsDo(t, s, "", nil, bmDoc(op), map[string]any{"id": bob.ID}, nil); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("signed-out %s: %+v", op, r.Errors)
		}
	}
	r, res := limitsDo(t, s, "", nil, bmDoc("block"), map[string]any{"id": bob.ID}, nil)
	limitsRateLimited(t, r, res, "signed-out block past the budget")
}

// The feed world's block and mute, recorded in the reference model.

func (w *feedWorld) block(a, b *client) {
	w.t.Helper()
	a.mustDo(w.t, bmDoc("block"), map[string]any{"id": b.ID}, nil)
	w.m.Block(a.ID, b.ID)
}

func (w *feedWorld) unblock(a, b *client) {
	w.t.Helper()
	a.mustDo(w.t, bmDoc("unblock"), map[string]any{"id": b.ID}, nil)
	w.m.Unblock(a.ID, b.ID)
}

func (w *feedWorld) mute(a, b *client) {
	w.t.Helper()
	a.mustDo(w.t, bmDoc("mute"), map[string]any{"id": b.ID}, nil)
	w.m.Mute(a.ID, b.ID)
}

func (w *feedWorld) unmute(a, b *client) {
	w.t.Helper()
	a.mustDo(w.t, bmDoc("unmute"), map[string]any{"id": b.ID}, nil)
	w.m.Unmute(a.ID, b.ID)
}

// checkUnread compares c's unreadCount with the model's.
func (w *feedWorld) checkUnread(c *client, what string) {
	w.t.Helper()
	if got, want := feedUnread(w.t, c), w.m.Unread(c.ID); got != want {
		w.t.Fatalf("%s: unreadCount of %s = %d, want %d", what, c.Name, got, want)
	}
}

// bmWithout fails if any of entries is one of posts.
func bmWithout(t *testing.T, what string, entries []feedEntry, posts ...string) {
	t.Helper()
	for _, e := range entries {
		if slices.Contains(posts, e.PostID) {
			t.Fatalf("%s: the feed still holds %s", what, e.PostID)
		}
	}
}

// bmEntry is the entry of post in entries.
func bmEntry(t *testing.T, entries []feedEntry, post string) feedEntry {
	t.Helper()
	i := slices.IndexFunc(entries, func(e feedEntry) bool { return e.PostID == post })
	if i < 0 {
		t.Fatalf("the feed lacks %s", post)
	}
	return entries[i]
}

// bmFeedModes runs fn in every feed mode on every backend, with an inbox of
// bmInboxCap entries (so that part of each feed lies below the inbox
// window) and celebrities at two followers (so that, in hybrid mode, the
// muted or blocked user's posts are merged at read time).
// bmBlockResetInterval is BLOCK_RESET_INTERVAL in the feed tests: short,
// so that a deferred reset comes within the test.
const bmBlockResetInterval = 200 * time.Millisecond

func bmFeedModes(t *testing.T, fn func(t *testing.T, s *testServer)) {
	feedForEachMode(t, []feedconfig.Mode{feedconfig.ModePull, feedconfig.ModePush, feedconfig.ModeHybrid}, func(c *settings.Settings) {
		c.InboxCap = bmInboxCap
		c.CelebrityFollowers = 2
		c.BlockResetInterval = bmBlockResetInterval
	}, fn)
}

const bmInboxCap = 3

// TestBlockMuteFeedMute: once ann mutes bob, bob's post, bob's repost and
// cat's repost of bob's post leave ann's feed and unread count, and bob
// leaves the reposters of the entries that stay; new arrivals through him
// stay out. After unmute every entry is back with its own cursor, the new
// ones in their places. In every mode.
func TestBlockMuteFeedMute(t *testing.T) {
	t.Parallel()
	bmFeedModes(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		ann, bob, cat, dan, xen := w.signUp("ann"), w.signUp("bob"), w.signUp("cat"), w.signUp("dan"), w.signUp("xen")
		w.follow(ann, bob)
		w.follow(ann, cat)
		w.follow(ann, dan)
		w.follow(cat, bob) // bob's second follower: a celebrity in hybrid mode
		d1 := w.post(dan, "d1")
		b1 := w.post(bob, "b1")
		x1 := w.post(xen, "x1")
		w.repost(bob, x1.ID) // in ann's feed through bob only
		w.repost(cat, b1.ID)
		x2 := w.post(xen, "x2")
		catX2 := w.repost(cat, x2.ID)
		w.repost(bob, x2.ID) // reposters [bob cat]
		b2 := w.post(bob, "b2")
		d2 := w.post(dan, "d2")
		w.repost(bob, d1.ID) // reposters [bob]
		before := w.check(ann, 2)
		w.checkUnread(ann, "before the mute")
		if len(before) != 6 {
			t.Fatalf("ann's feed before the mute holds %d entries, want 6", len(before))
		}

		w.mute(ann, bob)
		after := feedExpect(t, ann, d2.ID, x2.ID, d1.ID)
		feedCheckEntry(t, after[1], xen, catX2.CreatedAt, cat)
		feedCheckEntry(t, after[2], dan, d1.CreatedAt)
		w.check(ann, 1)
		w.check(ann, 4)
		w.checkUnread(ann, "after the mute")
		// bob's feed and cat's are their own.
		w.check(cat, 3)

		// What arrives through bob while muted stays out.
		b3 := w.post(bob, "b3")
		w.repost(cat, b3.ID)
		x3 := w.post(xen, "x3")
		w.repost(bob, x3.ID)
		d3 := w.post(dan, "d3")
		bmWithout(t, "after arrivals through bob", w.check(ann, 2), b1.ID, b2.ID, b3.ID, x1.ID, x3.ID)
		w.checkUnread(ann, "after arrivals through bob")
		feedExpect(t, ann, d3.ID, d2.ID, x2.ID, d1.ID)

		w.unmute(ann, bob)
		back := w.check(ann, 2)
		w.check(ann, 5)
		w.checkUnread(ann, "after the unmute")
		// The entries of before, each with its cursor, under the new ones.
		if len(back) != len(before)+3 {
			t.Fatalf("ann's feed after the unmute holds %d entries, want %d", len(back), len(before)+3)
		}
		for i, e := range back[3:] {
			if e.PostID != before[i].PostID || e.Cursor != before[i].Cursor || !slices.Equal(e.Reposters, before[i].Reposters) {
				t.Fatalf("entry %d after the unmute: %s cursor %q reposters %v, was %s cursor %q reposters %v",
					i, w.m.Name(e.PostID), e.Cursor, e.Reposters, w.m.Name(before[i].PostID), before[i].Cursor, before[i].Reposters)
			}
		}
	})
}

// TestBlockMuteFeedBlock: once ann blocks bob, neither sees the other's
// posts, reposts or a third user's reposts of them, old or new; after
// unblock, with no follow back, the third user's reposts of bob's posts
// are back in ann's feed. In every mode.
func TestBlockMuteFeedBlock(t *testing.T) {
	t.Parallel()
	bmFeedModes(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		ann, bob, cat, dan := w.signUp("ann"), w.signUp("bob"), w.signUp("cat"), w.signUp("dan")
		w.follow(ann, bob)
		w.follow(bob, ann)
		w.follow(ann, cat)
		w.follow(bob, cat)
		w.follow(dan, bob) // bob's second follower: a celebrity in hybrid mode
		w.follow(dan, ann) // and ann's
		a1 := w.post(ann, "a1")
		b1 := w.post(bob, "b1")
		c1 := w.post(cat, "c1")
		w.repost(cat, a1.ID)
		w.repost(cat, b1.ID)
		w.repost(bob, c1.ID) // c1's reposters for ann: [bob]
		w.check(ann, 2)
		w.check(bob, 2)

		w.block(ann, bob)
		annFeed := w.check(ann, 1)
		bobFeed := w.check(bob, 1)
		bmWithout(t, "ann's feed after the block", annFeed, b1.ID)
		bmWithout(t, "bob's feed after the block", bobFeed, a1.ID)
		feedCheckEntry(t, bmEntry(t, annFeed, c1.ID), cat, c1.CreatedAt) // bob left its reposters
		w.check(dan, 2)                                                  // a third user's feed keeps both

		// New posts and third users' reposts of them stay out too.
		a2 := w.post(ann, "a2")
		b2 := w.post(bob, "b2")
		w.repost(cat, a2.ID)
		w.repost(cat, b2.ID)
		c2 := w.post(cat, "c2")
		w.repost(bob, c2.ID)
		w.repost(ann, c2.ID)
		bmWithout(t, "ann's feed after new posts", w.check(ann, 2), b1.ID, b2.ID)
		bmWithout(t, "bob's feed after new posts", w.check(bob, 2), a1.ID, a2.ID)
		w.checkUnread(ann, "ann after the block")
		w.checkUnread(bob, "bob after the block")

		// unblock follows nobody again; cat's reposts of bob's posts are back.
		w.unblock(ann, bob)
		if w.m.IsFollowing(ann.ID, bob.ID) || w.m.IsFollowing(bob.ID, ann.ID) {
			t.Fatal("the model restored a follow on unblock")
		}
		annFeed = w.check(ann, 2)
		for _, p := range []string{b1.ID, b2.ID} {
			feedCheckEntry(t, bmEntry(t, annFeed, p), bob, time.Time{}, cat)
		}
		// bob's state was reset by the block: the unblock's reset waits
		// for BLOCK_RESET_INTERVAL, and until then bob still hides ann.
		want := len(w.m.Feed(bob.ID))
		deadline := time.Now().Add(testenv.Scale(5 * time.Second))
		for len(feedAll(t, bob, 3, want)) != want {
			if time.Now().After(deadline) {
				t.Fatalf("bob's feed after the unblock: not back within %s", testenv.Scale(5*time.Second))
			}
			time.Sleep(bmBlockResetInterval / 4)
		}
		w.check(bob, 3)
		w.checkUnread(ann, "ann after the unblock")
	})
}
