package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// Black-box tests of follow, unfollow and removeFollower, and of the
// followers / following connections. The connection helpers here (relPage,
// relCollectForward, relCollectBackward) serve the timeline tests too.

// relUser is a user as the relation tests read it.
type relUser struct {
	ID                string
	Username          string
	FollowerCount     int
	FollowingCount    int
	PostCount         int
	ViewerIsFollowing bool
	FollowsViewer     bool
}

const relUserFields = `id username followerCount followingCount postCount viewerIsFollowing followsViewer`

// relChange runs follow, unfollow or removeFollower (op) on target as c and
// returns the payload's user and viewer.
func relChange(t *testing.T, c *client, op string, target *client) (user, viewer relUser) {
	t.Helper()
	var out struct {
		R struct{ User, Viewer relUser }
	}
	c.mustDo(t, `mutation($id: ID!) { r: `+op+`(userId: $id) { user { `+relUserFields+` } viewer { `+relUserFields+` } } }`,
		map[string]any{"id": target.ID}, &out)
	if out.R.User.ID != target.ID || out.R.Viewer.ID != c.ID {
		t.Fatalf("%s(%s) by %s: payload user %q viewer %q, want %q and %q", op, target.Name, c.Name, out.R.User.ID, out.R.Viewer.ID, target.ID, c.ID)
	}
	return out.R.User, out.R.Viewer
}

// relGetUser reads user username as c sees them (c may be signed out).
func relGetUser(t *testing.T, c *client, username string) relUser {
	t.Helper()
	var out struct{ User *relUser }
	c.mustDo(t, `query($u: String!) { user(username: $u) { `+relUserFields+` } }`, map[string]any{"u": username}, &out)
	if out.User == nil {
		t.Fatalf("user %q not found", username)
	}
	return *out.User
}

// relCounts checks a user's follower and following counts.
func relCounts(t *testing.T, what string, u relUser, followers, following int) {
	t.Helper()
	if u.FollowerCount != followers || u.FollowingCount != following {
		t.Fatalf("%s (%s): followerCount %d followingCount %d, want %d and %d", what, u.Username, u.FollowerCount, u.FollowingCount, followers, following)
	}
}

// relFlags checks viewerIsFollowing and followsViewer.
func relFlags(t *testing.T, what string, u relUser, viewerIsFollowing, followsViewer bool) {
	t.Helper()
	if u.ViewerIsFollowing != viewerIsFollowing || u.FollowsViewer != followsViewer {
		t.Fatalf("%s (%s): viewerIsFollowing %v followsViewer %v, want %v and %v", what, u.Username, u.ViewerIsFollowing, u.FollowsViewer, viewerIsFollowing, followsViewer)
	}
}

// relArgs are the Relay arguments of one page request.
type relArgs struct {
	First, Last   *int
	After, Before *string
}

func relInt(n int) *int { return &n }

// relEdge is an edge of a UserConnection or a PostConnection.
type relEdge struct {
	Cursor     string
	FollowedAt *time.Time
	Node       struct {
		ID        string
		Username  string
		Body      string
		CreatedAt *time.Time
		RepostOf  *struct{ ID string }
	}
}

type relConnection struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage     bool
		HasPreviousPage bool
		StartCursor     *string
		EndCursor       *string
	}
	Edges []relEdge
}

// relPageQuery is the query of one page of user(username).field, where field
// is followers, following or timeline.
func relPageQuery(field string) string {
	node := `node { id username } followedAt`
	if field == "timeline" {
		node = `node { id body createdAt repostOf { id } }`
	}
	return `query($u: String!, $first: Int, $after: String, $last: Int, $before: String) {
  user(username: $u) {
    conn: ` + field + `(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor ` + node + ` }
    }
  }
}`
}

// relPage reads one page of user(username).field as c.
func relPage(t *testing.T, c *client, field, username string, a relArgs) relConnection {
	t.Helper()
	var out struct {
		User *struct{ Conn relConnection }
	}
	c.mustDo(t, relPageQuery(field), map[string]any{"u": username, "first": a.First, "after": a.After, "last": a.Last, "before": a.Before}, &out)
	if out.User == nil {
		t.Fatalf("user %q not found", username)
	}
	p := out.User.Conn
	relCheckPageCursors(t, fmt.Sprintf("%s of %s %+v", field, username, relShowArgs(a)), p)
	return p
}

func relShowArgs(a relArgs) map[string]any {
	m := map[string]any{}
	if a.First != nil {
		m["first"] = *a.First
	}
	if a.Last != nil {
		m["last"] = *a.Last
	}
	if a.After != nil {
		m["after"] = *a.After
	}
	if a.Before != nil {
		m["before"] = *a.Before
	}
	return m
}

// relCheckPageCursors checks that startCursor and endCursor are the cursors of
// the first and last edges (null on an empty page), and that edges carry
// distinct non-empty cursors.
func relCheckPageCursors(t *testing.T, where string, p relConnection) {
	t.Helper()
	if len(p.Edges) == 0 {
		if p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil {
			t.Fatalf("%s: empty page with startCursor %v endCursor %v", where, p.PageInfo.StartCursor, p.PageInfo.EndCursor)
		}
		return
	}
	first, last := p.Edges[0].Cursor, p.Edges[len(p.Edges)-1].Cursor
	if p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != first || p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != last {
		t.Fatalf("%s: startCursor %v endCursor %v, want the edges' %q and %q", where, p.PageInfo.StartCursor, p.PageInfo.EndCursor, first, last)
	}
	seen := map[string]bool{}
	for _, e := range p.Edges {
		if e.Cursor == "" || seen[e.Cursor] {
			t.Fatalf("%s: empty or repeated cursor %q", where, e.Cursor)
		}
		seen[e.Cursor] = true
	}
}

// relCollectForward pages user(username).field from the top with first:
// size, following endCursor, until hasNextPage is false. It checks each page:
// at most size edges, hasPreviousPage false on the first page and true on
// the later ones, no empty page after hasNextPage was true, the same
// totalCount on every page. It returns all edges and the totalCount.
func relCollectForward(t *testing.T, c *client, field, username string, size int) ([]relEdge, int) {
	t.Helper()
	var all []relEdge
	var after *string
	total := -1
	guard := pageGuard{t: t, what: fmt.Sprintf("%s of %s, forward by %d", field, username, size)}
	for i := 0; ; i++ {
		p := relPage(t, c, field, username, relArgs{First: &size, After: after})
		where := fmt.Sprintf("%s of %s, forward page %d (first %d)", field, username, i, size)
		if len(p.Edges) > size {
			t.Fatalf("%s: %d edges", where, len(p.Edges))
		}
		// Not fatal, so that a wrong flag does not hide the rest of a test.
		if p.PageInfo.HasPreviousPage != (after != nil) {
			t.Errorf("%s: hasPreviousPage %v, want %v", where, p.PageInfo.HasPreviousPage, after != nil)
		}
		if i > 0 && len(p.Edges) == 0 {
			t.Fatalf("%s: empty page although the previous page said hasNextPage", where)
		}
		if total >= 0 && p.TotalCount != total {
			t.Fatalf("%s: totalCount %d, was %d", where, p.TotalCount, total)
		}
		total = p.TotalCount
		all = append(all, p.Edges...)
		if !p.PageInfo.HasNextPage {
			return all, total
		}
		if len(p.Edges) < size {
			t.Fatalf("%s: short page (%d edges) with hasNextPage true", where, len(p.Edges))
		}
		guard.follow(p.PageInfo.EndCursor, total)
		after = p.PageInfo.EndCursor
	}
}

// relCollectBackward pages user(username).field from the bottom with last:
// size, following startCursor, until hasPreviousPage is false, and returns
// the edges in list order (newest first). The checks mirror
// relCollectForward: hasNextPage false on the first (bottom) page and true
// on the later ones.
func relCollectBackward(t *testing.T, c *client, field, username string, size int) ([]relEdge, int) {
	t.Helper()
	var all []relEdge
	var before *string
	total := -1
	guard := pageGuard{t: t, what: fmt.Sprintf("%s of %s, backward by %d", field, username, size)}
	for i := 0; ; i++ {
		p := relPage(t, c, field, username, relArgs{Last: &size, Before: before})
		where := fmt.Sprintf("%s of %s, backward page %d (last %d)", field, username, i, size)
		if len(p.Edges) > size {
			t.Fatalf("%s: %d edges", where, len(p.Edges))
		}
		if p.PageInfo.HasNextPage != (before != nil) {
			t.Errorf("%s: hasNextPage %v, want %v", where, p.PageInfo.HasNextPage, before != nil)
		}
		if i > 0 && len(p.Edges) == 0 {
			t.Fatalf("%s: empty page although the previous page said hasPreviousPage", where)
		}
		if total >= 0 && p.TotalCount != total {
			t.Fatalf("%s: totalCount %d, was %d", where, p.TotalCount, total)
		}
		total = p.TotalCount
		all = append(slices.Clone(p.Edges), all...)
		if !p.PageInfo.HasPreviousPage {
			return all, total
		}
		if len(p.Edges) < size {
			t.Fatalf("%s: short page (%d edges) with hasPreviousPage true", where, len(p.Edges))
		}
		guard.follow(p.PageInfo.StartCursor, total)
		before = p.PageInfo.StartCursor
	}
}

// relIDs lists the node ids of edges.
func relIDs(edges []relEdge) []string {
	ids := make([]string, len(edges))
	for i, e := range edges {
		ids[i] = e.Node.ID
	}
	return ids
}

// relSameList checks that got is want, in order.
func relSameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %d %v\n want %d %v", what, len(got), got, len(want), want)
	}
}

// relNewestFirst lists the ids of clients, in reverse: the order of a list
// most recent first, when they were added in the order given.
func relNewestFirst(cs []*client) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[len(cs)-1-i] = c.ID
	}
	return ids
}

// relCheckWholeList pages user(username).field both ways with several page
// sizes and checks that each covers exactly want, in order, with totalCount
// equal to len(want).
func relCheckWholeList(t *testing.T, c *client, field, username string, want []string) {
	t.Helper()
	for _, size := range []int{1, 2, 3, len(want), 100} {
		if size == 0 {
			continue
		}
		for _, dir := range []string{"forward", "backward"} {
			collect := relCollectForward
			if dir == "backward" {
				collect = relCollectBackward
			}
			edges, total := collect(t, c, field, username, size)
			what := fmt.Sprintf("%s of %s, paged %s by %d", field, username, dir, size)
			relSameList(t, what, relIDs(edges), want)
			if total != len(want) {
				t.Fatalf("%s: totalCount %d, want %d", what, total, len(want))
			}
		}
	}
}

// relSend runs a document as c and decodes its data into out. Unlike
// client.do it never calls t, so goroutines may use it.
func relSend(c *client, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest(http.MethodPost, c.s.URL+"/query", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("status %d, not JSON: %s", res.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%s: errors %+v", c.Name, r.Errors)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// relSignUpMany signs up n users named prefix0, prefix1, ...
func relSignUpMany(t *testing.T, s *testServer, prefix string, n int) []*client {
	t.Helper()
	cs := make([]*client, n)
	for i := range cs {
		cs[i] = s.signUp(t, fmt.Sprintf("%s%d", prefix, i))
	}
	return cs
}

func TestRelationsFollowUnfollowRemoveFollower(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob, carol := s.signUp(t, "alice"), s.signUp(t, "bob"), s.signUp(t, "carol")

		// alice follows bob: both counts move, and the payload says so.
		user, viewer := relChange(t, alice, "follow", bob)
		relCounts(t, "follow: payload user", user, 1, 0)
		relCounts(t, "follow: payload viewer", viewer, 0, 1)
		relFlags(t, "follow: payload user, seen by alice", user, true, false)

		// Again: nothing changes.
		user, viewer = relChange(t, alice, "follow", bob)
		relCounts(t, "second follow: payload user", user, 1, 0)
		relCounts(t, "second follow: payload viewer", viewer, 0, 1)
		relCheckWholeList(t, carol, "followers", "bob", []string{alice.ID})
		relCheckWholeList(t, carol, "following", "alice", []string{bob.ID})
		relCheckWholeList(t, carol, "following", "bob", nil)

		// Following oneself is refused and changes nothing.
		alice.mustFail(t, "BAD_USER_INPUT", `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": alice.ID})
		relCounts(t, "after following oneself", relGetUser(t, alice, "alice"), 0, 1)
		relCheckWholeList(t, carol, "followers", "alice", nil)

		// Signed out, and with an id that is no user's.
		s.anon().mustFail(t, "UNAUTHENTICATED", `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": bob.ID})
		var post struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		carol.mustDo(t, `mutation { createPost(input: {body: "hi"}) { post { id } } }`, nil, &post)
		alice.mustFail(t, "BAD_USER_INPUT", `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": post.CreatePost.Post.ID})

		// bob follows alice back: each follows the other.
		user, viewer = relChange(t, bob, "follow", alice)
		relCounts(t, "follow back: payload user", user, 1, 1)
		relCounts(t, "follow back: payload viewer", viewer, 1, 1)
		relFlags(t, "follow back: payload user, seen by bob", user, true, true)
		relFlags(t, "follow back: payload viewer, seen by bob", viewer, false, false)

		// The flags are relative to the viewer, and false when signed out.
		relFlags(t, "bob seen by alice", relGetUser(t, alice, "bob"), true, true)
		relFlags(t, "alice seen by bob", relGetUser(t, bob, "alice"), true, true)
		relFlags(t, "bob seen by carol", relGetUser(t, carol, "bob"), false, false)
		relFlags(t, "bob signed out", relGetUser(t, s.anon(), "bob"), false, false)
		relFlags(t, "alice signed out", relGetUser(t, s.anon(), "alice"), false, false)
		relChange(t, carol, "follow", alice)
		relFlags(t, "carol seen by alice", relGetUser(t, alice, "carol"), false, true)
		relFlags(t, "alice seen by carol", relGetUser(t, carol, "alice"), true, false)

		// alice unfollows bob, twice.
		for i := 0; i < 2; i++ {
			user, viewer = relChange(t, alice, "unfollow", bob)
			relCounts(t, fmt.Sprintf("unfollow #%d: payload user", i+1), user, 0, 1)
			relCounts(t, fmt.Sprintf("unfollow #%d: payload viewer", i+1), viewer, 2, 0)
			relFlags(t, fmt.Sprintf("unfollow #%d: payload user, seen by alice", i+1), user, false, true)
			relCheckWholeList(t, carol, "followers", "bob", nil)
			relCheckWholeList(t, carol, "following", "alice", nil)
			relCheckWholeList(t, carol, "followers", "alice", []string{carol.ID, bob.ID})
		}
		relFlags(t, "bob seen by alice after unfollow", relGetUser(t, alice, "bob"), false, true)

		// alice follows carol too, so alice and carol follow each other.
		// alice removes follower bob, twice: bob no longer follows alice.
		relChange(t, alice, "follow", carol)
		for i := 0; i < 2; i++ {
			user, viewer = relChange(t, alice, "removeFollower", bob)
			relCounts(t, fmt.Sprintf("removeFollower #%d: payload user", i+1), user, 0, 0)
			relCounts(t, fmt.Sprintf("removeFollower #%d: payload viewer", i+1), viewer, 1, 1)
			relFlags(t, fmt.Sprintf("removeFollower #%d: payload user, seen by alice", i+1), user, false, false)
			relCheckWholeList(t, carol, "following", "bob", nil)
			relCheckWholeList(t, carol, "followers", "alice", []string{carol.ID})
		}
		relFlags(t, "alice seen by bob after removeFollower", relGetUser(t, bob, "alice"), false, false)

		// removeFollower(carol) ends carol -> alice only, not alice -> carol.
		user, viewer = relChange(t, alice, "removeFollower", carol)
		relCounts(t, "removeFollower carol: payload user", user, 1, 0)
		relCounts(t, "removeFollower carol: payload viewer", viewer, 0, 1)
		relFlags(t, "removeFollower carol: payload user, seen by alice", user, true, false)
		relCheckWholeList(t, bob, "followers", "carol", []string{alice.ID})
		relCheckWholeList(t, bob, "following", "alice", []string{carol.ID})
		relCheckWholeList(t, bob, "followers", "alice", nil)

		// Final counts as everyone reads them.
		relCounts(t, "alice at the end", relGetUser(t, s.anon(), "alice"), 0, 1)
		relCounts(t, "bob at the end", relGetUser(t, s.anon(), "bob"), 0, 0)
		relCounts(t, "carol at the end", relGetUser(t, s.anon(), "carol"), 1, 0)
	})
}

// Many users follow and unfollow one user at once, pairs follow each other at
// the same moment, and that user follows everyone back at the same time.
// Nothing fails, and every count ends equal to its list.
func TestRelationsConcurrentCountsExact(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		const n = 20
		target := s.signUp(t, "target")
		users := relSignUpMany(t, s, "fan", n)
		const rounds = 3
		followQ := `mutation($id: ID!) { follow(userId: $id) { user { id } } }`
		unfollowQ := `mutation($id: ID!) { unfollow(userId: $id) { user { id } } }`

		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 10*n*rounds)
		for i, u := range users {
			partner := users[i^1]
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				do := func(q string, other *client) {
					if err := relSend(u, q, map[string]any{"id": other.ID}, nil); err != nil {
						errs <- err
					}
				}
				// At the end: u follows partner, and follows target iff i is odd.
				for r := 0; r < rounds; r++ {
					do(followQ, target)
					do(followQ, partner)
					if r < rounds-1 || i%2 == 0 {
						do(unfollowQ, target)
					}
					if r < rounds-1 {
						do(unfollowQ, partner)
					}
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				// target follows u while u follows target.
				if err := relSend(target, followQ, map[string]any{"id": u.ID}, nil); err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent relation change failed: %v", err)
		}
		if t.Failed() {
			t.FailNow()
		}

		var odd []string
		for i, u := range users {
			if i%2 == 1 {
				odd = append(odd, u.ID)
			}
		}
		check := func(c *client, followers, following []string) {
			t.Helper()
			u := relGetUser(t, s.anon(), c.Name)
			gotFollowers, total := relCollectForward(t, s.anon(), "followers", c.Name, 100)
			if u.FollowerCount != len(gotFollowers) || total != len(gotFollowers) {
				t.Errorf("%s: followerCount %d, totalCount %d, but %d followers listed", c.Name, u.FollowerCount, total, len(gotFollowers))
			}
			gotFollowing, total := relCollectForward(t, s.anon(), "following", c.Name, 100)
			if u.FollowingCount != len(gotFollowing) || total != len(gotFollowing) {
				t.Errorf("%s: followingCount %d, totalCount %d, but %d followees listed", c.Name, u.FollowingCount, total, len(gotFollowing))
			}
			ids := func(edges []relEdge) []string { return slices.Sorted(slices.Values(relIDs(edges))) }
			if got, want := ids(gotFollowers), slices.Sorted(slices.Values(followers)); !slices.Equal(got, want) {
				t.Errorf("%s: followers %v, want %v", c.Name, got, want)
			}
			if got, want := ids(gotFollowing), slices.Sorted(slices.Values(following)); !slices.Equal(got, want) {
				t.Errorf("%s: following %v, want %v", c.Name, got, want)
			}
		}
		var all []string
		for _, u := range users {
			all = append(all, u.ID)
		}
		check(target, odd, all)
		for i, u := range users {
			following := []string{users[i^1].ID}
			if i%2 == 1 {
				following = append(following, target.ID)
			}
			check(u, []string{users[i^1].ID, target.ID}, following)
		}
	})
}

// Ten requests of one user following the same user at once count once.
func TestRelationsConcurrentSameFollow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := relSend(alice, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": bob.ID}, nil); err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent follow failed: %v", err)
		}
		relCounts(t, "bob", relGetUser(t, s.anon(), "bob"), 1, 0)
		relCounts(t, "alice", relGetUser(t, s.anon(), "alice"), 0, 1)
		relCheckWholeList(t, s.anon(), "followers", "bob", []string{alice.ID})

		// And ten unfollows at once count once.
		start = make(chan struct{})
		errs = make(chan error, 20)
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := relSend(alice, `mutation($id: ID!) { unfollow(userId: $id) { user { id } } }`, map[string]any{"id": bob.ID}, nil); err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent unfollow failed: %v", err)
		}
		relCounts(t, "bob after unfollows", relGetUser(t, s.anon(), "bob"), 0, 0)
		relCounts(t, "alice after unfollows", relGetUser(t, s.anon(), "alice"), 0, 0)
	})
}

// followers and following are Relay connections, most recent follow first,
// exact at both ends whichever way and by whatever page size they are read.
func TestRelationsConnectionsPaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		star := s.signUp(t, "star")
		fans := relSignUpMany(t, s, "fan", 7)
		for _, f := range fans {
			relChange(t, f, "follow", star)
		}
		// star follows the fans in another order: fan6 first.
		var followed []*client
		for i := len(fans) - 1; i >= 0; i-- {
			relChange(t, star, "follow", fans[i])
			followed = append(followed, fans[i])
		}
		u := relGetUser(t, s.anon(), "star")
		relCounts(t, "star", u, 7, 7)
		relCheckWholeList(t, s.anon(), "followers", "star", relNewestFirst(fans))
		relCheckWholeList(t, s.anon(), "following", "star", relNewestFirst(followed))
		relCheckWholeList(t, s.anon(), "followers", "fan0", []string{star.ID})
		relCheckWholeList(t, s.anon(), "following", "fan0", []string{star.ID})

		// followedAt is set, and does not increase down the list.
		edges, _ := relCollectForward(t, s.anon(), "followers", "star", 100)
		for i, e := range edges {
			if e.FollowedAt == nil || e.FollowedAt.IsZero() {
				t.Fatalf("edge %d has no followedAt", i)
			}
			if i > 0 && e.FollowedAt.After(*edges[i-1].FollowedAt) {
				t.Fatalf("followedAt of edge %d (%v) is after that of edge %d (%v)", i, e.FollowedAt, i-1, edges[i-1].FollowedAt)
			}
		}

		// first: 0 and last: 0 give no edges, but the list is not empty.
		p := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(0)})
		if len(p.Edges) != 0 || p.TotalCount != 7 || !p.PageInfo.HasNextPage || p.PageInfo.HasPreviousPage {
			t.Fatalf("first: 0 gave %d edges, totalCount %d, hasNextPage %v, hasPreviousPage %v", len(p.Edges), p.TotalCount, p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage)
		}
		p = relPage(t, s.anon(), "followers", "star", relArgs{Last: relInt(0)})
		if len(p.Edges) != 0 || p.TotalCount != 7 || p.PageInfo.HasNextPage || !p.PageInfo.HasPreviousPage {
			t.Fatalf("last: 0 gave %d edges, totalCount %d, hasNextPage %v, hasPreviousPage %v", len(p.Edges), p.TotalCount, p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage)
		}

		// The page after the most recent follower has that follower before it;
		// the page before the earliest follower has that follower after it.
		all := relNewestFirst(fans)
		p = relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(2), After: &edges[0].Cursor})
		relSameList(t, "page after the first follower", relIDs(p.Edges), all[1:3])
		if !p.PageInfo.HasPreviousPage {
			t.Errorf("first: 2 after the first follower's cursor: hasPreviousPage false, want true")
		}
		p = relPage(t, s.anon(), "followers", "star", relArgs{Last: relInt(2), Before: &edges[6].Cursor})
		relSameList(t, "page before the last follower", relIDs(p.Edges), all[4:6])
		if !p.PageInfo.HasNextPage {
			t.Errorf("last: 2 before the last follower's cursor: hasNextPage false, want true")
		}

		// A page in the middle, either way, knows there is more on both sides.
		top := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(2)})
		mid := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(3), After: top.PageInfo.EndCursor})
		relSameList(t, "forward middle page", relIDs(mid.Edges), relNewestFirst(fans)[2:5])
		if !mid.PageInfo.HasNextPage || !mid.PageInfo.HasPreviousPage {
			t.Fatalf("forward middle page: hasNextPage %v hasPreviousPage %v", mid.PageInfo.HasNextPage, mid.PageInfo.HasPreviousPage)
		}
		back := relPage(t, s.anon(), "followers", "star", relArgs{Last: relInt(2), Before: mid.PageInfo.EndCursor})
		relSameList(t, "backward middle page", relIDs(back.Edges), relNewestFirst(fans)[2:4])
		if !back.PageInfo.HasNextPage || !back.PageInfo.HasPreviousPage {
			t.Fatalf("backward middle page: hasNextPage %v hasPreviousPage %v", back.PageInfo.HasNextPage, back.PageInfo.HasPreviousPage)
		}
		// The cursors of the followers list are refused by the following list.
		r := s.anon().do(t, relPageQuery("following"), map[string]any{"u": "star", "first": 2, "after": *top.PageInfo.EndCursor})
		if r.Code() != "BAD_USER_INPUT" {
			t.Fatalf("a followers cursor used on following: %+v", r.Errors)
		}
	})
}

// A cursor stays valid after the follow it points at ends: paging resumes
// from its place, with no repeat and no skip, both ways.
func TestRelationsCursorSurvivesUnfollow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		star := s.signUp(t, "star")
		fans := relSignUpMany(t, s, "fan", 10)
		for _, f := range fans {
			relChange(t, f, "follow", star)
		}
		want := relNewestFirst(fans) // fan9 .. fan0

		// Forward: the first page ends at fan6, who then unfollows.
		p := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(4)})
		relSameList(t, "first page", relIDs(p.Edges), want[:4])
		relChange(t, fans[6], "unfollow", star)
		rest := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(100), After: p.PageInfo.EndCursor})
		relSameList(t, "page after the cursor of a follower who left", relIDs(rest.Edges), want[4:])
		if rest.PageInfo.HasNextPage || !rest.PageInfo.HasPreviousPage || rest.TotalCount != 9 {
			t.Fatalf("page after a dead cursor: hasNextPage %v hasPreviousPage %v totalCount %d", rest.PageInfo.HasNextPage, rest.PageInfo.HasPreviousPage, rest.TotalCount)
		}
		// A short page from the dead cursor, then the rest from its end.
		short := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(2), After: p.PageInfo.EndCursor})
		relSameList(t, "short page after a dead cursor", relIDs(short.Edges), want[4:6])
		if !short.PageInfo.HasNextPage || !short.PageInfo.HasPreviousPage {
			t.Fatalf("short page after a dead cursor: hasNextPage %v hasPreviousPage %v", short.PageInfo.HasNextPage, short.PageInfo.HasPreviousPage)
		}

		// Backward: the cursor of fan2 (want[7]); fan2 is removed as a follower.
		var fan2Cursor string
		for _, e := range rest.Edges {
			if e.Node.ID == fans[2].ID {
				fan2Cursor = e.Cursor
			}
		}
		relChange(t, star, "removeFollower", fans[2])
		up := relPage(t, s.anon(), "followers", "star", relArgs{Last: relInt(100), Before: &fan2Cursor})
		wantUp := []string{fans[9].ID, fans[8].ID, fans[7].ID, fans[5].ID, fans[4].ID, fans[3].ID}
		relSameList(t, "backward page before the cursor of a removed follower", relIDs(up.Edges), wantUp)
		if !up.PageInfo.HasNextPage || up.PageInfo.HasPreviousPage {
			t.Fatalf("backward page before a dead cursor: hasNextPage %v hasPreviousPage %v", up.PageInfo.HasNextPage, up.PageInfo.HasPreviousPage)
		}
		down := relPage(t, s.anon(), "followers", "star", relArgs{First: relInt(100), After: &fan2Cursor})
		relSameList(t, "forward page after the cursor of a removed follower", relIDs(down.Edges), []string{fans[1].ID, fans[0].ID})

		// The whole list now, both ways.
		relCheckWholeList(t, s.anon(), "followers", "star", []string{fans[9].ID, fans[8].ID, fans[7].ID, fans[5].ID, fans[4].ID, fans[3].ID, fans[1].ID, fans[0].ID})
	})
}
