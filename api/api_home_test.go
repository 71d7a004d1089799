package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/models"
)

// Black-box tests of the home connection (Query.home): the feed with
// promoted posts and suggested users in every Nth place, in every feed
// mode, on the real backend.

const homeOperatorToken = "operator-secret-for-tests"

const homePageQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
  home(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor feedCursor node { __typename
      ... on FeedItem { post { id } }
      ... on SuggestedUser { user { username viewerIsFollowing } followedByCount }
      ... on PromotedPost { post { id } } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    unreadCount
  }
}`

// homeEntry is one home edge, as a label: F:<post> for a feed item,
// P:<post> for a promoted post, S:<username> for a suggestion.
type homeEntry struct {
	Label, Cursor string
}

type homePage struct {
	Entries []homeEntry
	Info    feedPageInfo
	Unread  int
}

func homeGet(t *testing.T, c *client, vars map[string]any) homePage {
	t.Helper()
	var out struct {
		Home struct {
			Edges []struct {
				Cursor     string
				FeedCursor *string
				Node       struct {
					Typename string `json:"__typename"`
					Post     struct{ ID string }
					User     struct{ Username string }
				}
			}
			PageInfo    feedPageInfo
			UnreadCount int
		}
	}
	c.mustDo(t, homePageQuery, vars, &out)
	var p homePage
	for _, e := range out.Home.Edges {
		label := ""
		switch e.Node.Typename {
		case "FeedItem":
			label = "F:" + e.Node.Post.ID
			if e.FeedCursor == nil {
				t.Fatalf("feed item %s without feedCursor", label)
			}
		case "PromotedPost":
			label = "P:" + e.Node.Post.ID
		case "SuggestedUser":
			label = "S:" + e.Node.User.Username
		}
		if e.Node.Typename != "FeedItem" && e.FeedCursor != nil {
			t.Fatalf("%s has a feedCursor", label)
		}
		p.Entries = append(p.Entries, homeEntry{label, e.Cursor})
	}
	p.Info, p.Unread = out.Home.PageInfo, out.Home.UnreadCount
	return p
}

func homeLabels(es []homeEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Label
	}
	return out
}

// homeForward pages the whole home forward n at a time.
func homeForward(t *testing.T, c *client, n int) []homeEntry {
	t.Helper()
	var all []homeEntry
	after := ""
	for range 100 {
		p := homeGet(t, c, feedArgs(&n, nil, after, ""))
		all = append(all, p.Entries...)
		if !p.Info.HasNextPage {
			return all
		}
		after = *p.Info.EndCursor
	}
	t.Fatal("home claims pages without end")
	return nil
}

// homeBackward pages back n at a time from before (the bottom when empty),
// and returns the entries newest first.
func homeBackward(t *testing.T, c *client, n int, before string) []homeEntry {
	t.Helper()
	var all []homeEntry
	for range 100 {
		p := homeGet(t, c, feedArgs(nil, &n, "", before))
		all = append(slices.Clone(p.Entries), all...)
		if !p.Info.HasPreviousPage {
			return all
		}
		before = *p.Info.StartCursor
	}
	t.Fatal("home claims pages without end")
	return nil
}

// homeWorld is a viewer whose followees a and b both follow x (a
// suggestion) while only a follows y (not one); a posted posts, and an
// operator promoted one post of z, whom the viewer does not follow.
type homeWorld struct {
	s                  *testServer
	viewer, a, b, z, x *client
	posts              []string // a's, newest first
	promoted           string
	operator           *client
}

func homeBuild(t *testing.T, s *testServer, posts int) *homeWorld {
	w := &homeWorld{s: s}
	w.viewer, w.a, w.b, w.z, w.x = s.signUp(t, "viewer"), s.signUp(t, "alpha"), s.signUp(t, "bravo"), s.signUp(t, "zulu"), s.signUp(t, "xray")
	y := s.signUp(t, "yankee")
	feedRelation(t, w.viewer, "follow", w.a)
	feedRelation(t, w.viewer, "follow", w.b)
	feedRelation(t, w.a, "follow", w.x)
	feedRelation(t, w.b, "follow", w.x)
	feedRelation(t, w.a, "follow", y)
	w.promoted = feedCreatePost(t, w.z, "promoted").ID
	for i := range posts {
		w.posts = append([]string{feedCreatePost(t, w.a, fmt.Sprint("post ", i)).ID}, w.posts...)
	}
	w.operator = &client{s: s, Token: w.viewer.Token, Name: "operator", Header: map[string][]string{"X-Operator-Token": {homeOperatorToken}}}
	w.operator.mustDo(t, `mutation($id: ID!) { promotePost(postId: $id) { promoted post { id } } }`, map[string]any{"id": w.promoted}, nil)
	return w
}

func homeServer(t *testing.T, mode string, every int) *testServer {
	return newTestServer(t, backendReal, func(c *settings.Settings) {
		c.Mode, c.HomeInsertEvery, c.OperatorToken = feedconfig.Mode(mode), every, homeOperatorToken
	})
}

func forEachMode(t *testing.T, fn func(t *testing.T, mode string)) {
	for _, mode := range []feedconfig.Mode{feedconfig.ModePull, feedconfig.ModePush, feedconfig.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) { fn(t, string(mode)) })
	}
}

// Every third entry is an insertion (the promoted post, then the
// suggestion), the feed items are feed's exactly, paging forward and back
// across the insertions in pages of any size shows each entry once and in
// the same places, and the red dot counts the feed items alone.
func TestHomeInsertsAndPaging(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, mode string) {
		s := homeServer(t, mode, 3)
		w := homeBuild(t, s, 7)
		p := w.posts
		want := []string{"F:" + p[0], "F:" + p[1], "P:" + w.promoted, "F:" + p[2], "F:" + p[3], "S:xray", "F:" + p[4], "F:" + p[5], "F:" + p[6]}
		for _, n := range []int{1, 2, 3, 4, 20} {
			got := homeForward(t, w.viewer, n)
			if !slices.Equal(homeLabels(got), want) {
				t.Fatalf("pages of %d forward: %v, want %v", n, homeLabels(got), want)
			}
			// Back from the last entry: everything above it, in the same places.
			back := homeBackward(t, w.viewer, n, got[len(got)-1].Cursor)
			if !slices.Equal(homeLabels(back), want[:len(want)-1]) {
				t.Fatalf("pages of %d back from the end: %v, want %v", n, homeLabels(back), want[:len(want)-1])
			}
			// Forward again from each entry: the rest, unchanged.
			for i, e := range got[:len(got)-1] {
				rest := homeGet(t, w.viewer, feedArgs(feedInt(20), nil, e.Cursor, ""))
				if !slices.Equal(homeLabels(rest.Entries), want[i+1:]) {
					t.Fatalf("after entry %d (%s): %v, want %v", i, e.Label, homeLabels(rest.Entries), want[i+1:])
				}
			}
		}
		feedIDs := feedIDs(feedAll(t, w.viewer, 20, len(p)))
		for i := range feedIDs {
			feedIDs[i] = "F:" + feedIDs[i]
		}
		items := slices.DeleteFunc(slices.Clone(want), func(l string) bool { return !strings.HasPrefix(l, "F:") })
		if !slices.Equal(items, feedIDs) {
			t.Fatalf("home's feed items %v, feed %v", items, feedIDs)
		}
		page := homeGet(t, w.viewer, feedArgs(feedInt(5), nil, "", ""))
		if page.Unread != len(p) || feedUnread(t, w.viewer) != len(p) {
			t.Fatalf("unreadCount: home %d, feed %d, want %d (the insertions never count)", page.Unread, feedUnread(t, w.viewer), len(p))
		}
		// A post arriving on top moves nothing a held cursor points at.
		newer := feedCreatePost(t, w.a, "newer").ID
		rest := homeGet(t, w.viewer, feedArgs(feedInt(20), nil, homeForward(t, w.viewer, 2)[3].Cursor, ""))
		if len(rest.Entries) == 0 {
			t.Fatalf("nothing after the fourth entry once %s arrived", newer)
		}
		// A feed cursor is not a home cursor.
		w.viewer.mustFail(t, "BAD_USER_INPUT", homePageQuery, map[string]any{"after": feedAll(t, w.viewer, 20, len(p)+1)[0].Cursor})
		w.viewer.mustFail(t, "BAD_USER_INPUT", homePageQuery, map[string]any{"first": feedconfig.MaxPageSize + 1})
	})
}

// HOME_INSERT_EVERY at its edges: 0 is the feed alone, 2 alternates.
func TestHomeInsertEveryEdges(t *testing.T) {
	t.Parallel()
	s := homeServer(t, string(feedconfig.ModeHybrid), 0)
	w := homeBuild(t, s, 3)
	if got := homeLabels(homeForward(t, w.viewer, 2)); !slices.Equal(got, []string{"F:" + w.posts[0], "F:" + w.posts[1], "F:" + w.posts[2]}) {
		t.Fatalf("HOME_INSERT_EVERY=0: %v, want the feed alone", got)
	}
	s = homeServer(t, string(feedconfig.ModeHybrid), 2)
	w = homeBuild(t, s, 3)
	want := []string{"F:" + w.posts[0], "P:" + w.promoted, "F:" + w.posts[1], "S:xray", "F:" + w.posts[2]}
	for _, n := range []int{1, 2, 5} {
		got := homeForward(t, w.viewer, n)
		if !slices.Equal(homeLabels(got), want) {
			t.Fatalf("HOME_INSERT_EVERY=2, pages of %d: %v, want %v", n, homeLabels(got), want)
		}
		if back := homeBackward(t, w.viewer, n, got[len(got)-1].Cursor); !slices.Equal(homeLabels(back), want[:len(want)-1]) {
			t.Fatalf("HOME_INSERT_EVERY=2, pages of %d back: %v, want %v", n, homeLabels(back), want[:len(want)-1])
		}
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"0", true}, {"1", false}, {"2", true}, {fmt.Sprint(feedconfig.MaxHomeInsertEvery), true}, {fmt.Sprint(feedconfig.MaxHomeInsertEvery + 1), false}, {"-1", false}} {
		_, err := parseConfig([]string{"-home-insert-every", tc.value})
		if (err == nil) != tc.ok {
			t.Errorf("-home-insert-every %s: error %v, want ok=%v", tc.value, err, tc.ok)
		}
	}
}

// A dismissed suggestion never comes back: not on the next page, not when
// the suggestions are worked out again, not when more followees follow the
// account. A dismissed promoted post goes for that viewer alone, and a
// promoted post that is deleted goes for everyone.
func TestHomeDismissAndDelete(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, mode string) {
		s := homeServer(t, mode, 2)
		w := homeBuild(t, s, 4)
		other := s.signUp(t, "other")
		feedRelation(t, other, "follow", w.a)
		feedRelation(t, other, "follow", w.b)
		has := func(c *client, label string) bool {
			return slices.Contains(homeLabels(homeForward(t, c, 20)), label)
		}
		if !has(w.viewer, "S:xray") || !has(w.viewer, "P:"+w.promoted) {
			t.Fatalf("before dismissing: %v", homeLabels(homeForward(t, w.viewer, 20)))
		}
		w.viewer.mustDo(t, `mutation($id: ID!) { dismissHomeEntry(id: $id) { dismissedId } }`, map[string]any{"id": w.x.ID}, nil)
		if has(w.viewer, "S:xray") {
			t.Fatal("a dismissed suggestion is still shown")
		}
		// More of the viewer's followees follow x, and the viewer's
		// suggestions are worked out again: still gone.
		c := s.signUp(t, "charlie")
		feedRelation(t, w.viewer, "follow", c)
		feedRelation(t, c, "follow", w.x)
		if err := s.app.redis.Del(t.Context(), s.app.engine.HomeCandidatesKey(w.viewer.ID)).Err(); err != nil {
			t.Fatal(err)
		}
		if has(w.viewer, "S:xray") {
			t.Fatal("a dismissed suggestion came back when the suggestions were worked out again")
		}
		w.viewer.mustDo(t, `mutation($id: ID!) { dismissHomeEntry(id: $id) { dismissedId } }`, map[string]any{"id": w.promoted}, nil)
		if has(w.viewer, "P:"+w.promoted) {
			t.Fatal("a dismissed promoted post is still shown")
		}
		if !has(other, "P:"+w.promoted) || !has(other, "S:xray") {
			t.Fatalf("another viewer lost what they did not dismiss: %v", homeLabels(homeForward(t, other, 20)))
		}
		feedDeletePost(t, w.z, w.promoted)
		if has(other, "P:"+w.promoted) {
			t.Fatal("a deleted promoted post is still shown")
		}
		if !has(other, "S:xray") {
			t.Fatal("the suggestion went with the deleted promoted post")
		}
		// Following a suggestion takes it out too.
		feedRelation(t, other, "follow", w.x)
		if has(other, "S:xray") {
			t.Fatal("a suggested user the viewer now follows is still suggested")
		}
	})
}

// promotePost and unpromotePost are an operator's: refused to a signed-in
// user, to a wrong token, and to everyone when no token is configured.
func TestHomePromoteIsOperatorOnly(t *testing.T) {
	t.Parallel()
	s := homeServer(t, string(feedconfig.ModeHybrid), 3)
	w := homeBuild(t, s, 1)
	doc := `mutation($id: ID!) { promotePost(postId: $id) { promoted } }`
	undoc := `mutation($id: ID!) { unpromotePost(postId: $id) { promoted } }`
	vars := map[string]any{"id": w.posts[0]}
	w.viewer.mustFail(t, "FORBIDDEN", doc, vars)
	w.viewer.mustFail(t, "FORBIDDEN", undoc, vars)
	wrong := &client{s: s, Header: map[string][]string{"X-Operator-Token": {homeOperatorToken + "x"}}}
	wrong.mustFail(t, "FORBIDDEN", doc, vars)
	gone := feedCreatePost(t, w.z, "gone").ID
	feedDeletePost(t, w.z, gone)
	w.operator.mustFail(t, "NOT_FOUND", doc, map[string]any{"id": gone})
	w.operator.mustDo(t, undoc, map[string]any{"id": w.promoted}, nil)
	if slices.Contains(homeLabels(homeForward(t, w.viewer, 20)), "P:"+w.promoted) {
		t.Fatal("an unpromoted post is still shown")
	}
	none := newTestServer(t, backendReal, func(c *settings.Settings) { c.OperatorToken = "" })
	v := none.signUp(t, "someone")
	p := feedCreatePost(t, v, "hello").ID
	for _, token := range []string{"", " ", homeOperatorToken} {
		c := &client{s: none, Token: v.Token, Header: map[string][]string{"X-Operator-Token": {token}}}
		c.mustFail(t, "FORBIDDEN", doc, map[string]any{"id": p})
	}
}

// dismissHomeEntry refuses an id that names nothing (a user or a post that
// does not exist) with NOT_FOUND, and stores no dismissal for it; ids of a
// user and a post that exist are dismissed.
func TestHomeDismissUnknownID(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	viewer := s.signUp(t, "viewer")
	author := s.signUp(t, "author")
	const dismiss = `mutation($id: ID!) { dismissHomeEntry(id: $id) { dismissedId } }`
	for _, id := range []string{models.NodeID(models.KindUser, 999999), models.NodeID(models.KindPost, 999999)} {
		r := viewer.mustFail(t, "NOT_FOUND", dismiss, map[string]any{"id": id})
		if msg := r.Errors[0].Message; !strings.Contains(msg, "does not exist") {
			t.Errorf("dismissHomeEntry(%s): message %q, want one saying it does not exist", id, msg)
		}
	}
	var stored int64
	if err := s.app.store.DB().Table("home_dismissals").Count(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Fatalf("%d dismissals stored for ids that name nothing", stored)
	}
	var post struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	author.mustDo(t, createPostMutation, map[string]any{"b": "dismissable"}, &post)
	for _, id := range []string{author.ID, post.CreatePost.Post.ID} {
		viewer.mustDo(t, dismiss, map[string]any{"id": id}, nil)
	}
}
