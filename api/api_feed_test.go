package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/feedmodel"
	"feedservice/internal/testenv"
)

// Black-box tests of the home feed (Query.feed, FeedItem, unreadCount,
// markFeedRead) through the GraphQL API, on every backend. The expected
// feeds are written out by hand in the scenario tests, and computed by the
// reference model (internal/feedmodel) in the randomized one.

// ---------------------------------------------------------------------------
// Helpers: a feedWorld drives the server and records every change in the
// reference model, so that any user's feed can be checked against it.

// feedWorld is a server with its users and the model of what they did.
type feedWorld struct {
	t     *testing.T
	s     *testServer
	m     *feedmodel.Model
	users map[string]*client // by global id
}

func feedNewWorld(t *testing.T, s *testServer) *feedWorld {
	return &feedWorld{t: t, s: s, m: feedNewModel(), users: map[string]*client{}}
}

// feedNewModel is the reference model of the feed, with the engine's limits.
func feedNewModel() *feedmodel.Model {
	return feedmodel.New(feedmodel.Limits{MaxReposters: feedconfig.MaxReposters, MaxUnreadCount: feedconfig.DefaultMaxUnreadCount})
}

// feedPosted is what createPost and repost answer.
type feedPosted struct {
	ID        string
	CreatedAt time.Time
	RepostOf  *struct{ ID string }
}

func (w *feedWorld) signUp(name string) *client {
	w.t.Helper()
	c := w.s.signUp(w.t, name)
	w.users[c.ID] = c
	w.m.SignUp(c.ID, name)
	return c
}

func (w *feedWorld) post(c *client, body string) feedPosted {
	w.t.Helper()
	p := feedCreatePost(w.t, c, body)
	w.m.AddPost(c.ID, p.ID, p.CreatedAt)
	return p
}

// repost reposts target (a post or a repost) as c, and checks that the
// server answers as the model says: a repost of the original, or c's
// existing live repost of it.
func (w *feedWorld) repost(c *client, target string) feedPosted {
	w.t.Helper()
	p := feedRepost(w.t, c, target)
	want := w.m.Repost(c.ID, p.ID, target, p.CreatedAt)
	if p.ID != want {
		w.t.Fatalf("%s reposting %s: got post %s, want %s", c.Name, w.m.Name(target), p.ID, w.m.Name(want))
	}
	orig := w.m.Lookup(want).RepostOf
	if p.RepostOf == nil || p.RepostOf.ID != orig {
		w.t.Fatalf("%s reposting %s: repostOf = %+v, want the original %s", c.Name, w.m.Name(target), p.RepostOf, w.m.Name(orig))
	}
	return p
}

func (w *feedWorld) delete(c *client, id string) {
	w.t.Helper()
	feedDeletePost(w.t, c, id)
	w.m.Delete(id)
}

func (w *feedWorld) follow(a, b *client) {
	w.t.Helper()
	feedRelation(w.t, a, "follow", b)
	w.m.Follow(a.ID, b.ID)
}

func (w *feedWorld) unfollow(a, b *client) {
	w.t.Helper()
	feedRelation(w.t, a, "unfollow", b)
	w.m.Unfollow(a.ID, b.ID)
}

// removeFollower makes follower stop following viewer, as viewer.
func (w *feedWorld) removeFollower(viewer, follower *client) {
	w.t.Helper()
	feedRelation(w.t, viewer, "removeFollower", follower)
	w.m.RemoveFollower(viewer.ID, follower.ID)
}

// check reads c's whole feed (forward, pageSize at a time) and compares it
// with the model's; it returns the entries read.
func (w *feedWorld) check(c *client, pageSize int) []feedEntry {
	w.t.Helper()
	want := w.m.Feed(c.ID)
	got := feedAll(w.t, c, pageSize, len(want))
	w.compare(c, got, want)
	return got
}

// compare fails the test unless got is the feed want: the same originals in
// the same order, with the same reposters, authors, and an addedAt that is
// the time of the arrival that placed each entry.
func (w *feedWorld) compare(c *client, got []feedEntry, want []feedmodel.Entry) {
	w.t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		g, e := got[i], want[i]
		ok = g.PostID == e.PostID && slices.Equal(g.Reposters, e.Reposters) &&
			g.AuthorID == w.m.Lookup(e.PostID).Author && feedAddedAtMatches(g.AddedAt, e.AddedAt)
	}
	if !ok {
		w.t.Fatalf("feed of %s differs from the model\ngot:\n%swant:\n%s", c.Name, w.describe(got), w.m.Describe(want))
	}
}

// describe renders entries read from the server with the model's names.
func (w *feedWorld) describe(entries []feedEntry) string {
	var b strings.Builder
	for i, e := range entries {
		rs := make([]string, len(e.Reposters))
		for j, r := range e.Reposters {
			rs[j] = w.m.Name(r)
		}
		fmt.Fprintf(&b, "  %2d. %s by %s addedAt=%s reposters=[%s]\n", i, w.m.Name(e.PostID), w.m.Name(e.AuthorID),
			e.AddedAt.Format("15:04:05.000"), strings.Join(rs, " "))
	}
	return b.String()
}

// feedAddedAtMatches says whether addedAt (the id time of the arrival, to the
// millisecond) is the time of an arrival created at createdAt (as the
// mutation answered it). The id is made just before createdAt is read; the
// slack only absorbs that gap and rounding: positions in the feed, which
// the tests check exactly, tell arrivals apart.
func feedAddedAtMatches(addedAt, createdAt time.Time) bool {
	if createdAt.IsZero() {
		return true
	}
	d := createdAt.Sub(addedAt)
	return d >= -time.Millisecond && d < testenv.Scale(50*time.Millisecond)
}

// feedCreatePost creates a post as c.
func feedCreatePost(t *testing.T, c *client, body string) feedPosted {
	t.Helper()
	var out struct{ CreatePost struct{ Post feedPosted } }
	c.mustDo(t, `mutation($b: String!) { createPost(input: {body: $b}) { post { id createdAt repostOf { id } } } }`,
		map[string]any{"b": body}, &out)
	return out.CreatePost.Post
}

// feedRepost reposts id as c.
func feedRepost(t *testing.T, c *client, id string) feedPosted {
	t.Helper()
	var out struct{ Repost struct{ Post feedPosted } }
	c.mustDo(t, `mutation($id: ID!) { repost(postId: $id) { post { id createdAt repostOf { id } } } }`,
		map[string]any{"id": id}, &out)
	return out.Repost.Post
}

// feedDeletePost deletes c's post id.
func feedDeletePost(t *testing.T, c *client, id string) {
	t.Helper()
	var out struct {
		DeletePost struct{ DeletedPostID string }
	}
	c.mustDo(t, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": id}, &out)
	if out.DeletePost.DeletedPostID != id {
		t.Fatalf("deletePost(%s) answered %q", id, out.DeletePost.DeletedPostID)
	}
}

// feedRelation runs follow, unfollow or removeFollower as c on other.
func feedRelation(t *testing.T, c *client, mutation string, other *client) {
	t.Helper()
	c.mustDo(t, `mutation($id: ID!) { `+mutation+`(userId: $id) { user { id } viewer { id } } }`,
		map[string]any{"id": other.ID}, nil)
}

// feedEntry is one feed edge as read from the server.
type feedEntry struct {
	Cursor    string
	PostID    string
	AuthorID  string
	Reposters []string
	AddedAt   time.Time
}

// feedPageInfo is a feed page's pageInfo.
type feedPageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

const feedPageQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
  feed(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { addedAt post { id author { id } } reposters { id } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

// feedArgs builds a page's variables; nil values are left out.
func feedArgs(first, last *int, after, before string) map[string]any {
	vars := map[string]any{}
	if first != nil {
		vars["first"] = *first
	}
	if last != nil {
		vars["last"] = *last
	}
	if after != "" {
		vars["after"] = after
	}
	if before != "" {
		vars["before"] = before
	}
	return vars
}

func (p feedPageInfo) String() string {
	return fmt.Sprintf("{hasNextPage:%v hasPreviousPage:%v startCursor:%s endCursor:%s}",
		p.HasNextPage, p.HasPreviousPage, feedStr(p.StartCursor), feedStr(p.EndCursor))
}

func feedInt(n int) *int { return &n }

// feedGet reads one page of c's feed and checks that its cursors are those of
// its first and last edges.
func feedGet(t *testing.T, c *client, vars map[string]any) ([]feedEntry, feedPageInfo) {
	t.Helper()
	var out struct {
		Feed struct {
			Edges []struct {
				Cursor string
				Node   struct {
					AddedAt time.Time
					Post    struct {
						ID     string
						Author struct{ ID string }
					}
					Reposters []struct{ ID string }
				}
			}
			PageInfo feedPageInfo
		}
	}
	c.mustDo(t, feedPageQuery, vars, &out)
	entries := make([]feedEntry, len(out.Feed.Edges))
	for i, e := range out.Feed.Edges {
		if e.Node.Reposters == nil {
			t.Fatalf("feed %v: reposters of %s is null, want a list", vars, e.Node.Post.ID)
		}
		rs := make([]string, len(e.Node.Reposters))
		for j, r := range e.Node.Reposters {
			rs[j] = r.ID
		}
		entries[i] = feedEntry{Cursor: e.Cursor, PostID: e.Node.Post.ID, AuthorID: e.Node.Post.Author.ID, Reposters: rs, AddedAt: e.Node.AddedAt}
	}
	info := out.Feed.PageInfo
	if len(entries) == 0 {
		if info.StartCursor != nil || info.EndCursor != nil {
			t.Fatalf("feed %v: an empty page has cursors %v %v", vars, feedStr(info.StartCursor), feedStr(info.EndCursor))
		}
	} else if feedStr(info.StartCursor) != entries[0].Cursor || feedStr(info.EndCursor) != entries[len(entries)-1].Cursor {
		t.Fatalf("feed %v: startCursor/endCursor %s/%s are not the first and last edges' %s/%s", vars,
			feedStr(info.StartCursor), feedStr(info.EndCursor), entries[0].Cursor, entries[len(entries)-1].Cursor)
	}
	return entries, info
}

func feedStr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// feedAll reads c's whole feed forward, n entries a page, checking that
// pages link up and never repeat an entry; the feed should hold total
// entries, which bounds the pages.
func feedAll(t *testing.T, c *client, n, total int) []feedEntry {
	t.Helper()
	var all []feedEntry
	seen := map[string]bool{}
	after := ""
	guard := pageGuard{t: t, what: fmt.Sprintf("feed of %s, forward by %d", c.Name, n)}
	for {
		entries, info := feedGet(t, c, feedArgs(feedInt(n), nil, after, ""))
		if len(entries) > n {
			t.Fatalf("feed of %s: first: %d answered %d entries", c.Name, n, len(entries))
		}
		if info.HasNextPage && len(entries) < n {
			t.Fatalf("feed of %s: a short page (%d of %d) says hasNextPage", c.Name, len(entries), n)
		}
		for _, e := range entries {
			if seen[e.PostID] {
				t.Fatalf("feed of %s: post %s appears twice", c.Name, e.PostID)
			}
			seen[e.PostID] = true
		}
		all = append(all, entries...)
		if !info.HasNextPage {
			return all
		}
		guard.follow(info.EndCursor, total)
		after = *info.EndCursor
	}
}

// feedIDs lists the post ids of entries.
func feedIDs(entries []feedEntry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.PostID
	}
	return ids
}

// feedUnread reads c's unreadCount.
func feedUnread(t *testing.T, c *client) int {
	t.Helper()
	var out struct{ Feed struct{ UnreadCount int } }
	c.mustDo(t, `{ feed(first: 1) { unreadCount } }`, nil, &out)
	return out.Feed.UnreadCount
}

// feedMarkRead runs markFeedRead as c (upTo "" passes null) and returns the
// unread count it answers.
func feedMarkRead(t *testing.T, c *client, upTo string) int {
	t.Helper()
	var out struct{ MarkFeedRead struct{ UnreadCount int } }
	vars := map[string]any{"upTo": nil}
	if upTo != "" {
		vars["upTo"] = upTo
	}
	c.mustDo(t, `mutation($upTo: String) { markFeedRead(upTo: $upTo) { unreadCount } }`, vars, &out)
	return out.MarkFeedRead.UnreadCount
}

// feedBadge is an unread count with whether it is at the cap, as
// unreadCount and unreadCountCapped, or unreadBadge, answer it.
type feedBadge struct {
	Count  int
	Capped bool
}

// feedExpectBadge fails unless feed and home, asked together, both answer
// want as their unreadCount and unreadCountCapped.
func feedExpectBadge(t *testing.T, c *client, want feedBadge, what string) {
	t.Helper()
	type counted struct {
		UnreadCount       int
		UnreadCountCapped bool
	}
	var out struct{ Feed, Home counted }
	c.mustDo(t, `{ feed(first: 1) { unreadCount unreadCountCapped } home(first: 1) { unreadCount unreadCountCapped } }`, nil, &out)
	for name, got := range map[string]counted{"feed": out.Feed, "home": out.Home} {
		if (feedBadge{got.UnreadCount, got.UnreadCountCapped}) != want {
			t.Fatalf("%s: %s answers unreadCount %d, unreadCountCapped %v; want %+v", what, name, got.UnreadCount, got.UnreadCountCapped, want)
		}
	}
}

// feedMarkReadBadge is feedMarkRead answering the payload's count with
// whether it is at the cap.
func feedMarkReadBadge(t *testing.T, c *client, upTo string) feedBadge {
	t.Helper()
	var out struct {
		MarkFeedRead struct {
			UnreadCount       int
			UnreadCountCapped bool
		}
	}
	vars := map[string]any{"upTo": nil}
	if upTo != "" {
		vars["upTo"] = upTo
	}
	c.mustDo(t, `mutation($upTo: String) { markFeedRead(upTo: $upTo) { unreadCount unreadCountCapped } }`, vars, &out)
	return feedBadge{out.MarkFeedRead.UnreadCount, out.MarkFeedRead.UnreadCountCapped}
}

// feedExpect fails unless c's whole feed holds exactly the posts want, in
// that order, and returns it.
func feedExpect(t *testing.T, c *client, want ...string) []feedEntry {
	t.Helper()
	got := feedAll(t, c, 20, len(want))
	if !slices.Equal(feedIDs(got), want) {
		t.Fatalf("feed of %s:\n got  %v\n want %v", c.Name, feedIDs(got), want)
	}
	return got
}

// feedCheckEntry checks one entry's author, reposters and addedAt.
func feedCheckEntry(t *testing.T, e feedEntry, author *client, addedAt time.Time, reposters ...*client) {
	t.Helper()
	want := []string{}
	for _, r := range reposters {
		want = append(want, r.ID)
	}
	if e.AuthorID != author.ID {
		t.Errorf("entry %s: author %s, want %s", e.PostID, e.AuthorID, author.Name)
	}
	if !slices.Equal(e.Reposters, want) {
		t.Errorf("entry %s: reposters %v, want %v", e.PostID, e.Reposters, want)
	}
	if !feedAddedAtMatches(e.AddedAt, addedAt) {
		t.Errorf("entry %s: addedAt %s, want the time of its arrival %s", e.PostID, e.AddedAt.Format(time.RFC3339Nano), addedAt.Format(time.RFC3339Nano))
	}
}

// ---------------------------------------------------------------------------
// 1. The basics.

// TestFeedBasic: followees' posts newest first; strangers' and one's own
// posts are absent; unfollowing removes a followee's posts; following shows
// the followee's older posts at their own time.
func TestFeedBasic(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, ann, bob, cat := w.signUp("viewer"), w.signUp("ann"), w.signUp("bob"), w.signUp("cat")

		s.anon().mustFail(t, "UNAUTHENTICATED", `{ feed { edges { cursor } } }`, nil)
		feedExpect(t, viewer) // no followees: an empty feed
		_, info := feedGet(t, viewer, nil)
		if info.HasNextPage || info.HasPreviousPage {
			t.Fatalf("empty feed: pageInfo %+v", info)
		}

		w.follow(viewer, ann)
		a1 := w.post(ann, "ann 1")
		c1 := w.post(cat, "cat 1")
		b1 := w.post(bob, "bob 1")
		v1 := w.post(viewer, "viewer 1")
		a2 := w.post(ann, "ann 2")

		got := feedExpect(t, viewer, a2.ID, a1.ID)
		feedCheckEntry(t, got[0], ann, a2.CreatedAt)
		feedCheckEntry(t, got[1], ann, a1.CreatedAt)

		// bob's older post appears at its own time, between ann's.
		w.follow(viewer, bob)
		got = feedExpect(t, viewer, a2.ID, b1.ID, a1.ID)
		feedCheckEntry(t, got[1], bob, b1.CreatedAt)
		w.check(viewer, 2)

		// Following again changes nothing.
		w.follow(viewer, bob)
		feedExpect(t, viewer, a2.ID, b1.ID, a1.ID)

		// Unfollowing ann removes all her posts, old and new.
		w.unfollow(viewer, ann)
		feedExpect(t, viewer, b1.ID)
		a3 := w.post(ann, "ann 3")
		feedExpect(t, viewer, b1.ID)

		// Following her back brings them all back at their own places.
		w.follow(viewer, ann)
		feedExpect(t, viewer, a3.ID, a2.ID, b1.ID, a1.ID)

		// bob removes the viewer as a follower: bob's posts leave the feed.
		w.removeFollower(bob, viewer)
		feedExpect(t, viewer, a3.ID, a2.ID, a1.ID)

		// The others' feeds: ann follows nobody; cat, following the viewer,
		// sees the post the viewer's own feed never shows.
		feedExpect(t, ann)
		w.follow(cat, viewer)
		feedExpect(t, cat, v1.ID)
		w.follow(viewer, cat)
		feedExpect(t, viewer, a3.ID, a2.ID, c1.ID, a1.ID)
		for _, c := range []*client{viewer, ann, bob, cat} {
			w.check(c, 3)
		}
	})
}

// ---------------------------------------------------------------------------
// 2. Reposts merge into their original's entry.

// TestFeedRepostMerging: an original reposted by several followees is one
// entry with every reposter, most recent first, placed at its first arrival.
func TestFeedRepostMerging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, nora, mark := w.signUp("viewer"), w.signUp("nora"), w.signUp("mark")
		r1, r2, r3 := w.signUp("rep1"), w.signUp("rep2"), w.signUp("rep3")
		for _, f := range []*client{mark, r1, r2, r3} {
			w.follow(viewer, f)
		}

		// nora is not followed; rep1 then rep2 repost her post, with mark's
		// posts in between as landmarks.
		n1 := w.post(nora, "nora 1")
		m0 := w.post(mark, "mark 0")
		rp1 := w.repost(r1, n1.ID)
		m1 := w.post(mark, "mark 1")
		rp2 := w.repost(r2, n1.ID)
		m2 := w.post(mark, "mark 2")

		got := feedExpect(t, viewer, m2.ID, m1.ID, n1.ID, m0.ID)
		feedCheckEntry(t, got[2], nora, rp1.CreatedAt, r2, r1)
		w.check(viewer, 3)

		// Reposting again returns the same repost and changes nothing.
		if again := w.repost(r1, n1.ID); again.ID != rp1.ID {
			t.Fatalf("second repost by rep1: %s, want %s", again.ID, rp1.ID)
		}
		feedExpect(t, viewer, m2.ID, m1.ID, n1.ID, m0.ID)

		// A repost of a repost is a repost of the original: merged.
		rp3 := w.repost(r3, rp2.ID)
		got = feedExpect(t, viewer, m2.ID, m1.ID, n1.ID, m0.ID)
		feedCheckEntry(t, got[2], nora, rp1.CreatedAt, r3, r2, r1)

		// Deleting the first repost moves the entry to the second one's place.
		w.delete(r1, rp1.ID)
		got = feedExpect(t, viewer, m2.ID, n1.ID, m1.ID, m0.ID)
		feedCheckEntry(t, got[1], nora, rp2.CreatedAt, r3, r2)

		// Once nora is followed, the entry sits at the original's place.
		w.follow(viewer, nora)
		got = feedExpect(t, viewer, m2.ID, m1.ID, m0.ID, n1.ID)
		feedCheckEntry(t, got[3], nora, n1.CreatedAt, r3, r2)
		w.check(viewer, 2)

		// A followee reposting a post already in the feed does not move it.
		m3 := w.post(mark, "mark 3")
		w.repost(r1, m0.ID)
		got = feedExpect(t, viewer, m3.ID, m2.ID, m1.ID, m0.ID, n1.ID)
		feedCheckEntry(t, got[3], mark, m0.CreatedAt, r1)

		// Unfollowing nora again: the entry goes back to the first live repost.
		w.unfollow(viewer, nora)
		got = feedExpect(t, viewer, m3.ID, m2.ID, n1.ID, m1.ID, m0.ID)
		feedCheckEntry(t, got[2], nora, rp2.CreatedAt, r3, r2)

		// Unfollowing a reposter drops their part.
		w.unfollow(viewer, r2)
		got = feedExpect(t, viewer, m3.ID, n1.ID, m2.ID, m1.ID, m0.ID)
		feedCheckEntry(t, got[1], nora, rp3.CreatedAt, r3)
		w.follow(viewer, r2)

		// Deleting the original removes the entry, live reposts or not.
		w.delete(nora, n1.ID)
		feedExpect(t, viewer, m3.ID, m2.ID, m1.ID, m0.ID)
		w.check(viewer, 20)
		feedRepostFails(t, r1, rp3.ID) // a repost of a repost of a deleted post
	})
}

func feedRepostFails(t *testing.T, c *client, id string) {
	t.Helper()
	c.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": id})
}

// TestFeedRepostersCapped: past feedconfig.MaxReposters reposters the entry lists
// the most recent ones; the viewer's own post reposted by a followee reaches
// the feed; the viewer's own reposts do not count.
func TestFeedRepostersCapped(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, nora, pal := w.signUp("viewer"), w.signUp("nora"), w.signUp("pal")
		n := feedconfig.MaxReposters + 2
		fans := make([]*client, n)
		for i := range fans {
			fans[i] = w.signUp(fmt.Sprintf("fan%02d", i))
			w.follow(viewer, fans[i])
		}
		p := w.post(nora, "popular")
		reposts := make([]feedPosted, n)
		for i, f := range fans {
			reposts[i] = w.repost(f, p.ID)
		}
		newestFirst := func(from, to int) []*client { // fans[to-1] .. fans[from]
			var out []*client
			for i := to - 1; i >= from; i-- {
				out = append(out, fans[i])
			}
			return out
		}
		got := feedExpect(t, viewer, p.ID)
		feedCheckEntry(t, got[0], nora, reposts[0].CreatedAt, newestFirst(n-feedconfig.MaxReposters, n)...)

		// The cap applies to the live reposts: deleting the newest one lists
		// the next older fan.
		w.delete(fans[n-1], reposts[n-1].ID)
		got = feedExpect(t, viewer, p.ID)
		feedCheckEntry(t, got[0], nora, reposts[0].CreatedAt, newestFirst(n-1-feedconfig.MaxReposters, n-1)...)
		w.check(viewer, 1)

		// The viewer's own post reaches their feed only through a repost
		// by a followee, at that repost's place.
		mine := w.post(viewer, "my own post")
		feedExpect(t, viewer, p.ID)
		w.follow(viewer, pal)
		palPost := w.post(pal, "pal 1")
		back := w.repost(pal, mine.ID)
		got = feedExpect(t, viewer, mine.ID, palPost.ID, p.ID)
		feedCheckEntry(t, got[0], viewer, back.CreatedAt, pal)

		// The viewer's own repost of a stranger's post brings nothing, and
		// adds no reposter to an entry.
		other := w.post(nora, "unseen")
		w.repost(viewer, other.ID)
		w.repost(viewer, palPost.ID)
		got = feedExpect(t, viewer, mine.ID, palPost.ID, p.ID)
		feedCheckEntry(t, got[1], pal, palPost.CreatedAt)

		// Deleting the repost takes the viewer's post out again.
		w.delete(pal, back.ID)
		feedExpect(t, viewer, palPost.ID, p.ID)
		w.check(viewer, 2)
	})
}

// ---------------------------------------------------------------------------
// 3. Relay paging.

// feedBuild makes a feed of posts and merged reposts for viewer: it returns
// the world and the viewer, whose feed has exactly entries entries.
func feedBuild(t *testing.T, s *testServer, entries int) (*feedWorld, *client) {
	t.Helper()
	w := feedNewWorld(t, s)
	viewer := w.signUp("viewer")
	authors := []*client{w.signUp("ann"), w.signUp("bob"), w.signUp("cat")}
	reposters := []*client{w.signUp("rex"), w.signUp("ria")}
	stranger := w.signUp("stranger")
	for _, c := range append(slices.Clone(authors), reposters...) {
		w.follow(viewer, c)
	}
	var own []string // the stranger's posts, reposted below
	for i := 0; len(w.m.Feed(viewer.ID)) < entries; i++ {
		switch i % 5 {
		case 0, 1, 2:
			w.post(authors[i%3], fmt.Sprintf("post %d", i))
		case 3:
			own = append(own, w.post(stranger, fmt.Sprintf("stranger %d", i)).ID)
			w.repost(reposters[i%2], own[len(own)-1])
		case 4:
			// a second reposter of an earlier stranger's post merges into it,
			// and a repost of a followed author's post changes no place
			w.repost(reposters[(i+1)%2], own[len(own)/2])
			w.repost(reposters[i%2], w.m.Feed(viewer.ID)[2].PostID)
		}
	}
	if got := len(w.m.Feed(viewer.ID)); got != entries {
		t.Fatalf("built a feed of %d entries, want %d", got, entries)
	}
	return w, viewer
}

// TestFeedPaging: first/after and last/before both cover the feed exactly,
// in the same order, with exact hasNextPage and hasPreviousPage.
func TestFeedPaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		const total = 45
		w, viewer := feedBuild(t, s, total)
		want := w.m.Feed(viewer.ID)
		all := w.check(viewer, 100)
		cursorOf := map[string]string{}
		for _, e := range all {
			cursorOf[e.PostID] = e.Cursor
		}

		for _, n := range []int{1, 7, 20} {
			// Forward from the top.
			var fwd []feedEntry
			after := ""
			fwdGuard := pageGuard{t: t, what: fmt.Sprintf("feed forward by %d", n)}
			for page := 0; ; page++ {
				entries, info := feedGet(t, viewer, feedArgs(feedInt(n), nil, after, ""))
				start := page * n
				wantLen := min(n, total-start)
				if len(entries) != wantLen {
					t.Fatalf("first %d, page %d: %d entries, want %d", n, page, len(entries), wantLen)
				}
				if info.HasNextPage != (start+n < total) || info.HasPreviousPage != (page > 0) {
					t.Fatalf("first %d, page %d (entries %d-%d of %d): pageInfo %+v", n, page, start, start+wantLen-1, total, info)
				}
				fwd = append(fwd, entries...)
				if !info.HasNextPage {
					break
				}
				fwdGuard.follow(info.EndCursor, total)
				after = *info.EndCursor
			}
			w.compare(viewer, fwd, want)

			// Backward from the bottom.
			var bwd []feedEntry
			before := ""
			bwdGuard := pageGuard{t: t, what: fmt.Sprintf("feed backward by %d", n)}
			for page := 0; ; page++ {
				entries, info := feedGet(t, viewer, feedArgs(nil, feedInt(n), "", before))
				end := total - page*n // entries [end-n, end)
				wantLen := min(n, end)
				if len(entries) != wantLen {
					t.Fatalf("last %d, page %d: %d entries, want %d", n, page, len(entries), wantLen)
				}
				if info.HasPreviousPage != (end-n > 0) || info.HasNextPage != (page > 0) {
					t.Fatalf("last %d, page %d (entries %d-%d of %d): pageInfo %+v", n, page, end-wantLen, end-1, total, info)
				}
				bwd = append(slices.Clone(entries), bwd...)
				if !info.HasPreviousPage {
					break
				}
				bwdGuard.follow(info.StartCursor, total)
				before = *info.StartCursor
			}
			w.compare(viewer, bwd, want)
			for i := range bwd {
				if bwd[i].Cursor != fwd[i].Cursor {
					t.Fatalf("entry %d has cursor %s forward and %s backward", i, fwd[i].Cursor, bwd[i].Cursor)
				}
			}
		}

		// Windows between two cursors, both ways.
		mid := func(i int) string { return cursorOf[want[i].PostID] }
		entries, info := feedGet(t, viewer, feedArgs(feedInt(100), nil, mid(10), mid(20)))
		if !slices.Equal(feedIDs(entries), feedIDs(all[11:20])) || !info.HasPreviousPage {
			t.Fatalf("first/after/before: %v %+v, want entries 11-19", feedIDs(entries), info)
		}
		entries, info = feedGet(t, viewer, feedArgs(nil, feedInt(3), mid(10), mid(20)))
		if !slices.Equal(feedIDs(entries), feedIDs(all[17:20])) || !info.HasNextPage || !info.HasPreviousPage {
			t.Fatalf("last 3/after/before: %v %+v, want entries 17-19", feedIDs(entries), info)
		}
		entries, info = feedGet(t, viewer, feedArgs(feedInt(5), nil, mid(total-3), ""))
		if !slices.Equal(feedIDs(entries), feedIDs(all[total-2:])) || info.HasNextPage || !info.HasPreviousPage {
			t.Fatalf("first 5 after the third last: %v %+v", feedIDs(entries), info)
		}
		entries, info = feedGet(t, viewer, feedArgs(nil, feedInt(5), "", mid(2)))
		if !slices.Equal(feedIDs(entries), feedIDs(all[:2])) || info.HasPreviousPage || !info.HasNextPage {
			t.Fatalf("last 5 before the third: %v %+v", feedIDs(entries), info)
		}
		entries, info = feedGet(t, viewer, feedArgs(feedInt(5), nil, mid(total-1), ""))
		if len(entries) != 0 || info.HasNextPage || !info.HasPreviousPage {
			t.Fatalf("first 5 after the last entry: %v %+v", feedIDs(entries), info)
		}
		entries, info = feedGet(t, viewer, feedArgs(nil, feedInt(5), "", mid(0)))
		if len(entries) != 0 || info.HasPreviousPage || !info.HasNextPage {
			t.Fatalf("last 5 before the first entry: %v %+v", feedIDs(entries), info)
		}

		// first: 0 and last: 0 return no edges, and say what lies beyond.
		for _, tc := range []struct {
			vars           map[string]any
			next, previous bool
		}{
			{feedArgs(feedInt(0), nil, "", ""), true, false},
			{feedArgs(feedInt(0), nil, mid(20), ""), true, true},
			{feedArgs(feedInt(0), nil, mid(total-1), ""), false, true},
			{feedArgs(nil, feedInt(0), "", ""), false, true},
			{feedArgs(nil, feedInt(0), "", mid(20)), true, true},
			{feedArgs(nil, feedInt(0), "", mid(0)), true, false},
		} {
			entries, info := feedGet(t, viewer, tc.vars)
			if len(entries) != 0 || info.HasNextPage != tc.next || info.HasPreviousPage != tc.previous {
				t.Errorf("feed %v: %d entries, pageInfo %+v; want none, hasNextPage %v, hasPreviousPage %v",
					tc.vars, len(entries), info, tc.next, tc.previous)
			}
		}

		// Without first or last a page holds feedconfig.DefaultPageSize entries.
		entries, info = feedGet(t, viewer, nil)
		if len(entries) != feedconfig.DefaultPageSize || !info.HasNextPage || info.HasPreviousPage {
			t.Fatalf("default page: %d entries, %+v", len(entries), info)
		}
		entries, _ = feedGet(t, viewer, feedArgs(feedInt(feedconfig.MaxPageSize), nil, "", ""))
		if len(entries) != total {
			t.Fatalf("first %d: %d entries, want %d", feedconfig.MaxPageSize, len(entries), total)
		}

		// Bad arguments.
		for _, vars := range []map[string]any{
			feedArgs(feedInt(1), feedInt(1), "", ""),
			feedArgs(feedInt(-1), nil, "", ""),
			feedArgs(nil, feedInt(-1), "", ""),
			feedArgs(feedInt(feedconfig.MaxPageSize+1), nil, "", ""),
			feedArgs(feedInt(1), nil, "not-a-cursor", ""),
			feedArgs(nil, feedInt(1), "", "bm90LWEtY3Vyc29y"),
		} {
			viewer.mustFail(t, "BAD_USER_INPUT", feedPageQuery, vars)
		}
		// A cursor of another list is refused.
		var tl struct {
			Viewer struct {
				Timeline struct{ Edges []struct{ Cursor string } }
			}
		}
		w.users[w.m.Users()[1]].mustDo(t, `{ viewer { timeline(first: 1) { edges { cursor } } } }`, nil, &tl)
		if len(tl.Viewer.Timeline.Edges) != 1 {
			t.Fatalf("ann's timeline: %+v", tl)
		}
		viewer.mustFail(t, "BAD_USER_INPUT", feedPageQuery, feedArgs(feedInt(1), nil, tl.Viewer.Timeline.Edges[0].Cursor, ""))
	})
}

// ---------------------------------------------------------------------------
// 4. Paging while the feed changes.

// TestFeedPagingStable: new posts arriving between pages appear above and
// never repeat or shift older pages; a cursor outlives its entry; a client
// catches up from its newest cursor with last/before.
func TestFeedPagingStable(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w, viewer := feedBuild(t, s, 24)
		ann, rex := w.users[w.m.Users()[1]], w.users[w.m.Users()[4]]
		stranger := w.users[w.m.Users()[6]]
		snapshot := w.check(viewer, 100)
		old := w.post(stranger, "an old post nobody reposted yet")

		// Page forward while followees post and repost between pages.
		var paged []feedEntry
		after := ""
		var added []string // newest last
		guard := pageGuard{t: t, what: "feed forward by 7 while posts arrive"}
		for page := 0; ; page++ {
			entries, info := feedGet(t, viewer, feedArgs(feedInt(7), nil, after, ""))
			paged = append(paged, entries...)
			if !info.HasNextPage {
				break
			}
			guard.follow(info.EndCursor, len(snapshot))
			after = *info.EndCursor
			switch page {
			case 0:
				added = append(added, w.post(ann, "new 1").ID, w.post(ann, "new 2").ID)
			case 1:
				w.repost(rex, old.ID) // a new entry, at the top
				added = append(added, old.ID)
				w.repost(rex, snapshot[20].PostID) // an old entry: it stays put
			case 2:
				added = append(added, w.post(ann, "new 3").ID)
			}
		}
		if !slices.Equal(feedIDs(paged), feedIDs(snapshot)) {
			t.Fatalf("paging while posts arrive:\n got  %v\n want %v", feedIDs(paged), feedIDs(snapshot))
		}
		now := w.check(viewer, 5)
		slices.Reverse(added)
		if !slices.Equal(feedIDs(now[:len(added)]), added) || !slices.Equal(feedIDs(now[len(added):]), feedIDs(snapshot)) {
			t.Fatalf("after paging: %v, want %v above %v", feedIDs(now), added, feedIDs(snapshot))
		}

		// A cursor outlives the entry it points at.
		feed0 := w.check(viewer, 100)
		gone := feed0[4]
		w.delete(w.users[gone.AuthorID], gone.PostID)
		entries, info := feedGet(t, viewer, feedArgs(feedInt(5), nil, gone.Cursor, ""))
		if !slices.Equal(feedIDs(entries), feedIDs(feed0[5:10])) || !info.HasNextPage || !info.HasPreviousPage {
			t.Fatalf("first 5 after a deleted entry: %v %+v, want %v", feedIDs(entries), info, feedIDs(feed0[5:10]))
		}
		entries, info = feedGet(t, viewer, feedArgs(nil, feedInt(5), "", gone.Cursor))
		if !slices.Equal(feedIDs(entries), feedIDs(feed0[:4])) || info.HasPreviousPage || !info.HasNextPage {
			t.Fatalf("last 5 before a deleted entry: %v %+v, want %v", feedIDs(entries), info, feedIDs(feed0[:4]))
		}
		w.check(viewer, 7)

		// Catching up: from the newest cursor held, page backward with
		// last/before and get exactly what arrived since.
		top, _ := feedGet(t, viewer, feedArgs(feedInt(1), nil, "", ""))
		newest := top[0].Cursor
		var fresh []string
		for i := range 5 {
			if i == 3 {
				p := w.post(stranger, "reposted at once")
				w.repost(rex, p.ID)
				fresh = append(fresh, p.ID)
				continue
			}
			fresh = append(fresh, w.post(w.users[w.m.Users()[1+i%3]], fmt.Sprintf("later %d", i)).ID)
		}
		slices.Reverse(fresh)
		var caught []feedEntry
		before := newest
		catchUp := pageGuard{t: t, what: "catching up backward by 2"}
		for {
			entries, info := feedGet(t, viewer, feedArgs(nil, feedInt(2), "", before))
			if !info.HasNextPage {
				t.Fatalf("last 2 before %s: hasNextPage false, but older entries exist", before)
			}
			caught = append(slices.Clone(entries), caught...)
			if !info.HasPreviousPage {
				break
			}
			if len(entries) != 2 {
				t.Fatalf("a short backward page (%d) says hasPreviousPage", len(entries))
			}
			catchUp.follow(info.StartCursor, len(fresh))
			before = *info.StartCursor
		}
		if !slices.Equal(feedIDs(caught), fresh) {
			t.Fatalf("catching up: %v, want %v", feedIDs(caught), fresh)
		}
		w.compare(viewer, caught, w.m.Feed(viewer.ID)[:5])
		entries, info = feedGet(t, viewer, feedArgs(nil, feedInt(2), "", caught[0].Cursor))
		if len(entries) != 0 || info.HasPreviousPage || !info.HasNextPage {
			t.Fatalf("caught up, last 2 before the newest: %v %+v", feedIDs(entries), info)
		}
	})
}

// ---------------------------------------------------------------------------
// 5. The N+1 guard.

// feedRichQuery asks for everything a client shows on a feed page: every
// user on it with counts and relation to the viewer.
const feedRichQuery = `query($first: Int) {
  feed(first: $first) {
    edges { cursor node {
      addedAt
      post {
        id body createdAt repostCount
        repostOf { id body author { id username } }
        author { id username displayName followerCount followingCount postCount viewerIsFollowing followsViewer }
      }
      reposters { id username displayName followerCount postCount viewerIsFollowing followsViewer }
    } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    unreadCount
  }
}`

// The N+1 guard's bounds. A feed page today runs: the viewer's followees;
// the pull scan, one round of three statements (events, their originals,
// first reposts) per batch of events, batches growing with the page; the
// reposters of the page's posts; one batch each of posts, users,
// viewer-follows and follows-viewer (users and relation checks asked at two
// depths of the document may form two batches each, depending on timing);
// and the unread count (the viewer row, the followees, one scan). Measured on
// both backends, with and without -race (the fewest of a few runs, see
// below): a plain page of 2 entries 10 statements; rich pages (3 reposters
// each, every user with counts and relations) of 2, 10 and 20 entries 17, 20
// and 20. A query per entry would make the page of 20 cost at least 37.
const (
	// feedMaxStatements bounds any feed page, whatever its size.
	feedMaxStatements = 26
	// feedScanSlack is how many more statements a page of 20 may run than
	// a page of 2 of the same kind: one more scan round (3), and batches
	// split or merged by timing. A query per entry adds 18.
	feedScanSlack = 8
	// feedDoublingSlack is the same for a page of 20 against one of 10,
	// which scan the same number of rounds. A query per entry adds 10.
	feedDoublingSlack = 3
)

// TestFeedQueryCountIsConstant: a feed page costs a bounded number of SQL
// statements, whatever its number of entries, reposters and users.
func TestFeedQueryCountIsConstant(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, plain := w.signUp("viewer"), w.signUp("plain")
		var authors, fans []*client
		for i := range 5 {
			authors = append(authors, w.signUp(fmt.Sprintf("author%d", i)))
			fans = append(fans, w.signUp(fmt.Sprintf("fan%d", i)))
		}
		for i, f := range fans {
			w.follow(viewer, f)
			w.follow(f, viewer) // followsViewer is true for some users
			if i%2 == 0 {
				w.follow(viewer, authors[i]) // some authors followed
			}
		}
		// 24 entries, each reposted by 3 fans; some authors' posts arrive
		// through the reposts only.
		for i := range 24 {
			p := w.post(authors[i%5], fmt.Sprintf("post %d", i))
			for j := range 3 {
				w.repost(fans[(i+j)%5], p.ID)
			}
		}
		w.check(viewer, 20)
		// plain follows one author with two posts and no reposts.
		other := w.signUp("quiet")
		w.follow(plain, other)
		w.post(other, "one")
		w.post(other, "two")

		count := func(c *client, n int) int64 {
			t.Helper()
			var out struct {
				Feed struct {
					Edges []struct {
						Node struct{ Reposters []struct{ ID string } }
					}
				}
			}
			q := feedCountStatements(t, c, feedRichQuery, map[string]any{"first": n}, &out)
			if len(out.Feed.Edges) != n {
				t.Fatalf("first %d: %d entries", n, len(out.Feed.Edges))
			}
			if c == viewer && len(out.Feed.Edges[0].Node.Reposters) != 3 {
				t.Fatalf("the rich page's entries have %d reposters, want 3", len(out.Feed.Edges[0].Node.Reposters))
			}
			return q
		}
		// A loader gathers keys for 2 ms; resolvers that run late (a loaded
		// machine, -race) start another batch, which adds statements by
		// chance (seen: up to 27 on a rich page of 20 under -race). A query
		// per entry adds them on every run: the fewest of a few runs is the
		// page's cost.
		measure := func(c *client, n int) (fewest, most int64) {
			fewest = 1 << 30
			for range 5 {
				q := count(c, n)
				fewest, most = min(fewest, q), max(most, q)
			}
			return fewest, most
		}
		plain2, plain2most := measure(plain, 2)
		rich2, rich2most := measure(viewer, 2)
		rich10, rich10most := measure(viewer, 10)
		rich20, rich20most := measure(viewer, 20)
		t.Logf("SQL statements per feed page (fewest-most of 5 runs): plain page of 2: %d-%d; rich pages of 2, 10, 20: %d-%d, %d-%d, %d-%d",
			plain2, plain2most, rich2, rich2most, rich10, rich10most, rich20, rich20most)
		for _, q := range []int64{plain2, rich2, rich10, rich20} {
			if q > feedMaxStatements {
				t.Errorf("a feed page ran %d SQL statements, more than the bound %d (plain 2: %d; rich 2/10/20: %d/%d/%d)",
					q, feedMaxStatements, plain2, rich2, rich10, rich20)
			}
		}
		// Ten times the entries (and their users) must cost no more than one
		// more round of the pull scan, and doubling them nothing: a query per
		// entry adds 18 and 10 (a query per reposter more), on every run.
		if rich20 > rich2most+feedScanSlack {
			t.Errorf("a rich page of 20 entries ran %d SQL statements, one of 2 at most %d: a query per entry?", rich20, rich2most)
		}
		if rich20 > rich10most+feedDoublingSlack {
			t.Errorf("a rich page of 20 entries ran %d SQL statements, one of 10 at most %d: a query per entry?", rich20, rich10most)
		}
	})
}

// feedCountStatements runs a query that must succeed as c, once the server's
// workers have settled, and returns the SQL statements it ran.
func feedCountStatements(t *testing.T, c *client, query string, vars map[string]any, out any) int64 {
	t.Helper()
	c.s.settle(t)
	c.s.queries.Store(0)
	feedRawDo(t, c, query, vars, out)
	return c.s.queries.Load()
}

// feedRawDo runs a query that must succeed as c, posting it at once:
// client.do first waits for the server's workers to settle, which runs SQL
// of its own and, for a thousand writes in a row, takes long.
func feedRawDo(t *testing.T, c *client, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, c.s.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer res.Body.Close()
	var r response
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("status %d, errors %+v, decoding: %v\nquery: %s", res.StatusCode, r.Errors, err, query)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
}

// ---------------------------------------------------------------------------
// 6. Unread count and markFeedRead.

// TestFeedUnreadCount: unreadCount counts entries newer than the read
// marker; markFeedRead moves it forward only; deletions and unfollows lower
// the count; merged reposts count once.
func TestFeedUnreadCount(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, ann, bob, rex, nora := w.signUp("viewer"), w.signUp("ann"), w.signUp("bob"), w.signUp("rex"), w.signUp("nora")
		expect := func(want int) {
			t.Helper()
			if got := feedUnread(t, viewer); got != want {
				t.Fatalf("unreadCount = %d, want %d", got, want)
			}
			if m := w.m.Unread(viewer.ID); m != want {
				t.Fatalf("the model's unread count is %d, the test expects %d", m, want)
			}
		}
		mark := func(upTo string, arrival string, want int) {
			t.Helper()
			w.m.MarkRead(viewer.ID, arrival)
			if got := feedMarkRead(t, viewer, upTo); got != want {
				t.Fatalf("markFeedRead(%q) answered unreadCount %d, want %d", upTo, got, want)
			}
			expect(want)
		}

		expect(0)
		mark("", "", 0) // an empty feed: nothing to mark
		w.follow(viewer, ann)
		w.follow(viewer, bob)
		w.follow(viewer, rex)
		a1 := w.post(ann, "a1")
		w.post(nora, "not followed")
		w.post(viewer, "my own")
		b1 := w.post(bob, "b1")
		a2 := w.post(ann, "a2")
		expect(3)

		// Up to an older entry, then to the newest.
		page := feedExpect(t, viewer, a2.ID, b1.ID, a1.ID)
		mark(page[1].Cursor, b1.ID, 1)
		mark("", "", 0)
		// Back to an older entry: the marker stays.
		mark(page[2].Cursor, a1.ID, 0)
		mark(page[1].Cursor, b1.ID, 0)

		// New entries: posts, and a stranger's post reposted by two
		// followees, which is one entry.
		b2 := w.post(bob, "b2")
		n2 := w.post(nora, "n2")
		w.repost(rex, n2.ID)
		w.repost(ann, n2.ID)
		a3 := w.post(ann, "a3")
		expect(3)
		// A followee reposting an entry already read does not raise it.
		rexA1 := w.repost(rex, a1.ID)
		expect(3)

		// Deleting an unread entry lowers it.
		w.delete(bob, b2.ID)
		expect(2) // n2, a3
		// Unfollowing ann takes a3 away, but a1 now arrives through rex's
		// repost, which is newer than the marker: unread again.
		w.unfollow(viewer, ann)
		got := feedExpect(t, viewer, a1.ID, n2.ID, b1.ID)
		feedCheckEntry(t, got[0], ann, rexA1.CreatedAt, rex)
		expect(2)
		// Deleting the repost that brought an entry lowers it.
		w.delete(rex, rexA1.ID)
		expect(1) // n2
		w.follow(viewer, ann)
		expect(2) // a3, n2
		page = feedExpect(t, viewer, a3.ID, n2.ID, a2.ID, b1.ID, a1.ID)
		mark(page[1].Cursor, w.m.Feed(viewer.ID)[1].Arrival, 1) // up to n2's entry, placed by rex's repost
		// Unfollowing the author of the only unread entry lowers it.
		w.unfollow(viewer, ann)
		expect(0)
		w.follow(viewer, ann)
		expect(1)
		mark("", "", 0)
		w.check(viewer, 2)

		// A new entry brought by a repost goes when the repost is deleted.
		n3 := w.post(nora, "n3")
		rp := w.repost(rex, n3.ID)
		expect(1)
		w.delete(rex, rp.ID)
		expect(0)

		// A bad cursor is refused and moves nothing.
		viewer.mustFail(t, "BAD_USER_INPUT", `mutation { markFeedRead(upTo: "nope") { unreadCount } }`, nil)
		s.anon().mustFail(t, "UNAUTHENTICATED", `mutation { markFeedRead { unreadCount } }`, nil)
		w.post(bob, "b3")
		expect(1)
	})
}

// TestFeedUnreadCountCapped: the unread count, asked and pushed live, stops
// at the MaxUnreadCount setting (small here, so that passing it takes a few
// posts, not a thousand), and is exact again once the reader has read past
// the cap. unreadCountCapped (feed, home, markFeedRead's payload) and the
// unreadBadge subscription say when it stopped there: false below the cap,
// true at it and past it. The setting's own bounds are tested in
// api/settings.
func TestFeedUnreadCountCapped(t *testing.T) {
	t.Parallel()
	const maxUnread = 4
	for _, mode := range []feedconfig.Mode{feedconfig.ModePull, feedconfig.ModePush, feedconfig.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *testServer) {
				viewer, ann := s.signUp(t, "viewer"), s.signUp(t, "ann")
				feedRelation(t, viewer, "follow", ann)
				post := func(i int) {
					feedRawDo(t, ann, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`,
						map[string]any{"b": fmt.Sprintf("post %d", i)}, nil)
				}
				for i := range maxUnread - 1 {
					post(i)
				}
				feedExpectBadge(t, viewer, feedBadge{maxUnread - 1, false}, "one entry below the cap")
				post(maxUnread - 1)
				feedExpectBadge(t, viewer, feedBadge{maxUnread, true}, "exactly at the cap")
				for i := maxUnread; i < maxUnread+2; i++ {
					post(i)
				}
				if got := feedUnread(t, viewer); got != maxUnread {
					t.Fatalf("unreadCount with %d unread entries = %d, want the cap %d", maxUnread+2, got, maxUnread)
				}
				feedExpectBadge(t, viewer, feedBadge{maxUnread, true}, "past the cap")
				// Live: the first value is capped, and so is each change.
				ws := liveConnect(t, s, liveTransportWS, viewer.Token)
				live := ws.subscribe(liveUnreadSub)
				if got := ws.firstCount(live, 5*time.Second, "subscribed past the cap"); got != maxUnread {
					t.Fatalf("live unreadCount with %d unread entries starts at %d, want the cap %d", maxUnread+2, got, maxUnread)
				}
				badge := ws.subscribe(liveBadgeSub)
				if got := ws.nextBadge(badge, maxUnread, 5*time.Second, "subscribed past the cap"); got != (feedBadge{maxUnread, true}) {
					t.Fatalf("live unreadBadge with %d unread entries starts at %+v, want {%d true}", maxUnread+2, got, maxUnread)
				}
				feedRawDo(t, ann, `mutation { createPost(input: {body: "one more"}) { post { id } } }`, nil, nil)
				// Marking all but the two newest read: the count is exact again.
				page, _ := feedGet(t, viewer, feedArgs(feedInt(3), nil, "", ""))
				if got := feedMarkReadBadge(t, viewer, page[2].Cursor); got != (feedBadge{2, false}) {
					t.Fatalf("markFeedRead up to the third newest entry: %+v, want {2 false}", got)
				}
				ws.expectBadge(badge, feedBadge{2, false}, maxUnread, 10*time.Second, "after markFeedRead up to the third newest")
				if got := feedUnread(t, viewer); got != 2 {
					t.Fatalf("unreadCount = %d, want 2", got)
				}
				for seen := []int{}; ; {
					res, end, err := ws.event(live, 10*time.Second)
					if err != nil || end != nil || len(res.Errors) > 0 {
						t.Fatalf("live unreadCount after markFeedRead: err %v, end %v, errors %+v; seen %v", err, end, res.Errors, seen)
					}
					var data struct{ UnreadCount int }
					if err := json.Unmarshal(res.Data, &data); err != nil {
						t.Fatalf("live unreadCount sent %s", res.Data)
					}
					if seen = append(seen, data.UnreadCount); data.UnreadCount > maxUnread {
						t.Fatalf("live unreadCount went past the cap %d: values seen %v", maxUnread, seen)
					}
					if data.UnreadCount == 2 {
						break
					}
				}
				if got := feedMarkReadBadge(t, viewer, ""); got != (feedBadge{0, false}) {
					t.Fatalf("markFeedRead of everything: %+v, want {0 false}", got)
				}
				ws.expectBadge(badge, feedBadge{0, false}, maxUnread, 10*time.Second, "after markFeedRead of everything")
				feedExpectBadge(t, viewer, feedBadge{0, false}, "all read")
			}, func(c *settings.Settings) {
				c.Mode = mode
				c.MaxUnreadCount = maxUnread
			})
		})
	}
}

// ---------------------------------------------------------------------------
// Push and hybrid specifics, found by the model with small settings.

// feedForEachMode runs fn on each backend in each of modes, with change
// applied to the settings.
func feedForEachMode(t *testing.T, modes []feedconfig.Mode, change func(*settings.Settings), fn func(t *testing.T, s *testServer)) {
	for _, mode := range modes {
		for _, backend := range backends() {
			t.Run(string(mode)+"/"+backend, func(t *testing.T) {
				fn(t, newTestServer(t, backend, func(c *settings.Settings) {
					c.Mode = mode
					change(c)
				}))
			})
		}
	}
}

// TestFeedFollowBackfillKeepsOlderPosts: following someone with more posts
// than an inbox holds shows all of them, when the reader's inbox already held
// one of them (through a repost) and so took the backfill without trimming.
func TestFeedFollowBackfillKeepsOlderPosts(t *testing.T) {
	t.Parallel()
	const inboxCap = 3
	feedForEachMode(t, []feedconfig.Mode{feedconfig.ModePush, feedconfig.ModeHybrid}, func(c *settings.Settings) { c.InboxCap = inboxCap }, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, ann, rex := w.signUp("viewer"), w.signUp("ann"), w.signUp("rex")
		var posts []string
		for i := range inboxCap + 1 {
			posts = append(posts, w.post(ann, fmt.Sprintf("ann %d", i)).ID)
		}
		w.repost(rex, posts[inboxCap])
		w.follow(viewer, rex)
		w.check(viewer, 5) // the viewer reads: their inbox exists
		w.follow(viewer, ann)
		slices.Reverse(posts)
		feedExpect(t, viewer, posts...)
		w.check(viewer, 2)
	})
}

// TestFeedCelebrityRepostOfReadEntry: a followed celebrity's repost of a post
// already in the feed (placed by an earlier repost) neither moves it nor
// makes it unread again.
func TestFeedCelebrityRepostOfReadEntry(t *testing.T) {
	t.Parallel()
	feedForEachMode(t, []feedconfig.Mode{feedconfig.ModeHybrid}, func(c *settings.Settings) { c.CelebrityFollowers = 2 }, func(t *testing.T, s *testServer) {
		w := feedNewWorld(t, s)
		viewer, fred, celeb, nora, fan := w.signUp("viewer"), w.signUp("fred"), w.signUp("celeb"), w.signUp("nora"), w.signUp("fan")
		w.follow(viewer, fred)
		w.follow(viewer, celeb)
		w.follow(fan, celeb) // two followers: a celebrity
		p := w.post(nora, "nora's post")
		w.repost(fred, p.ID)
		w.m.MarkRead(viewer.ID, "")
		if got := feedMarkRead(t, viewer, ""); got != 0 {
			t.Fatalf("markFeedRead() answered %d unread", got)
		}
		var fresh []string
		for i := range 6 {
			fresh = append(fresh, w.post(fred, fmt.Sprintf("fred %d", i)).ID)
		}
		w.repost(celeb, p.ID)
		if got, want := feedUnread(t, viewer), w.m.Unread(viewer.ID); got != want || want != len(fresh) {
			t.Errorf("unreadCount = %d, want %d (fred's %d new posts; nora's post was read)", got, want, len(fresh))
		}
		slices.Reverse(fresh)
		feedExpect(t, viewer, append(fresh, p.ID)...)
		w.check(viewer, 1)
		w.check(viewer, 4)
	})
}

// ---------------------------------------------------------------------------
// 7. Random operations against the model.

// TestFeedMatchesModel runs random follows, unfollows, follower removals,
// posts, reposts (of posts and of reposts), deletions and read marks, then
// checks every user's whole feed and unread count against the reference
// model. The seed is logged; FEED_SEED=<seed> replays a run.
func TestFeedMatchesModel(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if env := os.Getenv("FEED_SEED"); env != "" {
		var err error
		if seed, err = strconv.ParseUint(env, 10, 64); err != nil {
			t.Fatalf("FEED_SEED=%q: %v", env, err)
		}
	}
	t.Logf("seed %d (replay with FEED_SEED=%d)", seed, seed)
	forEachBackend(t, func(t *testing.T, s *testServer) {
		feedRunModel(t, s, seed, 12, 150)
	})
}

// feedRunModel runs ops random operations by users users on s, seeded with
// seed, checking a few feeds as it goes and every feed at the end.
func feedRunModel(t *testing.T, s *testServer, seed uint64, users, ops int) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed with seed %d (replay with FEED_SEED=%d)", seed, seed)
		}
	})
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := feedNewWorld(t, s)
	cs := make([]*client, users)
	for i := range cs {
		cs[i] = w.signUp(fmt.Sprintf("user%02d", i))
	}
	pick := func() *client { return cs[rng.IntN(len(cs))] }
	pickOther := func(c *client) *client {
		for {
			if o := pick(); o != c {
				return o
			}
		}
	}
	var log []string
	// A denser graph at first, so that feeds fill up.
	for range users * 2 {
		a := pick()
		b := pickOther(a)
		w.follow(a, b)
		log = append(log, fmt.Sprintf("-: %s follows %s", a.Name, b.Name))
	}
	defer func() {
		if t.Failed() {
			t.Logf("operations:\n%s", strings.Join(log, "\n"))
		}
	}()
	for op := 0; op < ops; op++ {
		c := pick()
		switch r := rng.IntN(100); {
		case r < 18:
			o := pickOther(c)
			w.follow(c, o)
			log = append(log, fmt.Sprintf("%d: %s follows %s", op, c.Name, o.Name))
		case r < 25:
			o := pickOther(c)
			w.unfollow(c, o)
			log = append(log, fmt.Sprintf("%d: %s unfollows %s", op, c.Name, o.Name))
		case r < 29:
			o := pickOther(c)
			w.removeFollower(c, o)
			log = append(log, fmt.Sprintf("%d: %s removes follower %s", op, c.Name, o.Name))
		case r < 55:
			p := w.post(c, fmt.Sprintf("post %d by %s", op, c.Name))
			log = append(log, fmt.Sprintf("%d: %s posts %s", op, c.Name, w.m.Name(p.ID)))
		case r < 80:
			var targets []string
			for _, id := range w.m.LivePosts("") {
				if w.m.CanRepost(id) {
					targets = append(targets, id)
				}
			}
			if len(targets) == 0 {
				op--
				continue
			}
			// Prefer recent posts, so that reposts pile up on some.
			target := targets[len(targets)-1-min(len(targets)-1, int(rng.ExpFloat64()*6))]
			p := w.repost(c, target)
			log = append(log, fmt.Sprintf("%d: %s reposts %s: %s", op, c.Name, w.m.Name(target), w.m.Name(p.ID)))
		case r < 92:
			mine := w.m.LivePosts(c.ID)
			if len(mine) == 0 {
				op--
				continue
			}
			id := mine[rng.IntN(len(mine))]
			log = append(log, fmt.Sprintf("%d: %s deletes %s", op, c.Name, w.m.Name(id)))
			w.delete(c, id)
		case r < 96:
			// Mark read up to an entry of the first page, checking the page.
			page, _ := feedGet(t, c, feedArgs(feedInt(10), nil, "", ""))
			want := w.m.Feed(c.ID)
			w.compare(c, page, want[:min(10, len(want))])
			if len(page) == 0 {
				continue
			}
			i := rng.IntN(len(page))
			w.m.MarkRead(c.ID, want[i].Arrival)
			got := feedMarkRead(t, c, page[i].Cursor)
			log = append(log, fmt.Sprintf("%d: %s marks read up to entry %d (%s)", op, c.Name, i, w.m.Name(want[i].Arrival)))
			if m := w.m.Unread(c.ID); got != m {
				t.Fatalf("op %d: markFeedRead(entry %d) by %s answered %d unread, the model says %d", op, i, c.Name, got, m)
			}
		default:
			w.m.MarkRead(c.ID, "")
			got := feedMarkRead(t, c, "")
			log = append(log, fmt.Sprintf("%d: %s marks all read", op, c.Name))
			if got != 0 {
				t.Fatalf("op %d: markFeedRead() by %s answered %d unread, want 0", op, c.Name, got)
			}
		}
		if op%25 == 24 {
			w.check(pick(), 7)
		}
	}
	total := 0
	for _, c := range cs {
		total += len(w.check(c, 7))
		if got, want := feedUnread(t, c), w.m.Unread(c.ID); got != want {
			t.Errorf("unreadCount of %s = %d, the model says %d", c.Name, got, want)
		}
	}
	t.Logf("%d operations, %d posts and reposts, %d feed entries in all", ops, w.m.PostCount(), total)
	if total == 0 {
		t.Fatal("every feed is empty: the random run checked nothing")
	}
}
