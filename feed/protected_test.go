package feed

import (
	"context"
	"slices"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// The rules of protected accounts, through the engine, in every mode: a
// follow of a protected user waits for approval, and their posts are for
// them and their approved followers only, on every read.

// protect turns user's protection on or off.
func (te *testEngine) protect(user int64, on bool) {
	te.t.Helper()
	if _, err := te.ChangeProfile(context.Background(), user, models.ProfileChange{IsProtected: &on}); err != nil {
		te.t.Fatalf("protect %d (%v): %v", user, on, err)
	}
}

// requesters are who waits for user's approval, most recent first.
func (te *testEngine) requesters(user int64) []int64 {
	te.t.Helper()
	most := config.MaxPageSize
	conn, err := te.FollowRequests(context.Background(), user, paging.PageArgs{First: &most})
	if err != nil {
		te.t.Fatalf("follow requests of %d: %v", user, err)
	}
	ids := make([]int64, len(conn.Edges))
	for i, e := range conn.Edges {
		ids[i] = e.UserID
	}
	if conn.TotalCount != len(ids) {
		te.t.Fatalf("follow requests of %d: totalCount %d for %v", user, conn.TotalCount, ids)
	}
	return ids
}

// hasRequested says whether requester waits for user's approval.
func (te *testEngine) hasRequested(requester, user int64) bool {
	te.t.Helper()
	got, err := te.RequestedAmong(context.Background(), requester, []int64{user})
	if err != nil {
		te.t.Fatal(err)
	}
	return got[user]
}

// unreadCountOf is reader's unread count as a read asks it.
func (te *testEngine) unreadCountOf(reader int64) int {
	te.t.Helper()
	n, err := te.UnreadCount(context.Background(), reader)
	if err != nil {
		te.t.Fatalf("unread count of %d: %v", reader, err)
	}
	return n
}

// A follow of a protected user is a request: no follow, no count, until
// the user approves it, which makes the follow with its counts, the
// follower's feed and their live red dot. Reject drops a request,
// unfollow withdraws it, a block either way drops it; turning protection
// off approves every request, turning it on keeps the followers.
func TestFollowRequestsWaitForApproval(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		ctx := context.Background()
		p := w.author("protected")
		w.protect(p, true)
		p1 := w.post(p, "p1")
		r, s, u, v, x := w.user("reader"), w.user("rejected"), w.user("unprotected"), w.user("blocked"), w.user("blocker")
		w.touchFeed(r)
		before := bmFollowCounts(t, w.testEngine, p, r)
		pay, err := w.Follow(ctx, r, p)
		if err != nil || pay.User.ID != p || pay.Viewer.ID != r {
			t.Fatalf("follow of a protected user: %+v, %v", pay, err)
		}
		if !w.hasRequested(r, p) {
			t.Fatal("the follow of a protected user made no request")
		}
		if _, err := w.Follow(ctx, r, p); err != nil {
			t.Fatalf("asking again: %v", err)
		}
		bmWantFollowing(t, w.testEngine, "requested", r, false, p)
		if after := bmFollowCounts(t, w.testEngine, p, r); !slices.Equal(after, before) {
			t.Fatalf("a request moved the counts: %v, were %v", after, before)
		}
		if got := w.requesters(p); !slices.Equal(got, []int64{r}) {
			t.Fatalf("requests of p: %v, want [%d]", got, r)
		}
		w.settle()
		bmWantFeed(t, w.testEngine, "requested", r, []feedItem{})
		counts, _ := w.unreadCounts(r)
		if n := <-counts; n != 0 {
			t.Fatalf("first unread count %d, want 0", n)
		}

		if _, err := w.ApproveFollowRequest(ctx, p, r); err != nil {
			t.Fatalf("approve: %v", err)
		}
		bmWantFollowing(t, w.testEngine, "approved", r, true, p)
		if w.hasRequested(r, p) || len(w.requesters(p)) != 0 {
			t.Fatal("the approved request is still there")
		}
		if after := bmFollowCounts(t, w.testEngine, p, r); after[0][0] != before[0][0]+1 || after[1][1] != before[1][1]+1 {
			t.Fatalf("counts after approval: %v, were %v", after, before)
		}
		w.settle()
		bmWantFeed(t, w.testEngine, "approved", r, []feedItem{{Post: p1, Key: p1, Reposters: []int64{}}})
		p2 := w.post(p, "p2")
		deadline := time.After(testenv.Scale(5 * time.Second))
		for got := -1; got != 2; {
			select {
			case got = <-counts:
			case <-deadline:
				t.Fatalf("the approved follower's red dot is at %d, want 2 (p1 and p2 %d)", got, p2)
			}
		}
		if _, err := w.ApproveFollowRequest(ctx, p, r); err != nil {
			t.Fatalf("approving a follower again: %v", err)
		}
		if _, err := w.ApproveFollowRequest(ctx, p, s); apperr.CodeOf(err) != apperr.CodeNotFound {
			t.Fatalf("approving who never asked: %v, want NOT_FOUND", err)
		}

		w.follow(s, p)
		if _, err := w.RejectFollowRequest(ctx, p, s); err != nil {
			t.Fatalf("reject: %v", err)
		}
		if _, err := w.RejectFollowRequest(ctx, p, s); err != nil {
			t.Fatalf("reject again: %v", err)
		}
		if w.hasRequested(s, p) || len(w.requesters(p)) != 0 {
			t.Fatal("the rejected request is still there")
		}
		bmWantFollowing(t, w.testEngine, "rejected", s, false, p)

		w.follow(s, p)
		w.unfollow(s, p)
		if w.hasRequested(s, p) || len(w.requesters(p)) != 0 {
			t.Fatal("unfollow left the request")
		}

		w.follow(v, p)
		w.follow(x, p)
		w.block(p, v)
		w.block(x, p)
		if got := w.requesters(p); len(got) != 0 || w.hasRequested(v, p) || w.hasRequested(x, p) {
			t.Fatalf("requests after blocks both ways: %v", got)
		}

		w.follow(u, p)
		w.follow(s, p)
		w.protect(p, false)
		bmWantFollowing(t, w.testEngine, "protection off", u, true, p)
		bmWantFollowing(t, w.testEngine, "protection off", s, true, p)
		if got := w.requesters(p); len(got) != 0 {
			t.Fatalf("requests after protection off: %v", got)
		}
		w.protect(p, true)
		bmWantFollowing(t, w.testEngine, "protection on again", r, true, p)
		bmWantFollowing(t, w.testEngine, "protection on again", u, true, p)
	})
}

// A protected author's posts leave the feed of whoever does not follow
// them, the reposts made before the protection included: home, a list's
// feed and the unread count, in every mode, with full pages; their
// approved followers keep them; turning protection off brings them back.
func TestProtectedPostsLeaveStrangersFeeds(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		r, m, f, o, a := w.user("reader"), w.author("muted"), w.author("friend"), w.author("other"), w.user("approved")
		w.follow(r, m)
		w.follow(r, f)
		w.follow(a, o)
		w.touchFeed(r)
		w.touchFeed(a)
		round := bmWriteRound(w.testEngine, m, f, o)
		l := w.createList(r, "both")
		w.addToList(r, l, m, f)
		w.settle()
		bmWantFeed(t, w.testEngine, "o public", r, round.following(m, f))
		if n := w.unreadCountOf(r); n != bmRoundEntries {
			t.Fatalf("unread count with o public: %d, want %d", n, bmRoundEntries)
		}

		w.protect(o, true)
		strangers := []feedItem{
			{Post: round.f1, Key: round.f1, Reposters: []int64{m}},
			{Post: round.m1, Key: round.m1, Reposters: []int64{f}},
		}
		bmWantFeed(t, w.testEngine, "o protected", r, strangers)
		wantListFeed(t, w.testEngine, "o protected", r, l, strangers)
		if n := w.unreadCountOf(r); n != len(strangers) {
			t.Fatalf("unread count with o protected: %d, want %d", n, len(strangers))
		}
		approved := []feedItem{
			{Post: round.o3, Key: round.o3, Reposters: []int64{}},
			{Post: round.o2, Key: round.o2, Reposters: []int64{}},
			{Post: round.o1, Key: round.o1, Reposters: []int64{}},
		}
		bmWantFeed(t, w.testEngine, "o protected, approved follower", a, approved)

		w.protect(o, false)
		bmWantFeed(t, w.testEngine, "o public again", r, round.following(m, f))
		wantListFeed(t, w.testEngine, "o public again", r, l, round.following(m, f))
	})
}

// Live: a protected author's post that enters a stranger's inbox through
// a repost made before the protection (a backfill on a new follow) is
// neither announced to feedItemAdded nor counted on the red dot.
func TestProtectedPostsStayOffLiveStreams(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		r, g, o := w.user("reader"), w.author("reposter"), w.author("protected")
		o1 := w.post(o, "o1")
		w.repost(g, o1)
		w.protect(o, true)
		w.touchFeed(r)
		added := w.feedItemsAdded(r)
		counts, _ := w.unreadCounts(r)
		if n := <-counts; n != 0 {
			t.Fatalf("first unread count %d, want 0", n)
		}
		w.follow(r, g)
		w.settle()
		g1 := w.post(g, "g1")
		deadline := time.After(testenv.Scale(5 * time.Second))
		for seen := false; !seen; {
			select {
			case e := <-added:
				if e.Node.PostID == o1 {
					t.Fatalf("feedItemAdded announced the protected post %d", o1)
				}
				seen = e.Node.PostID == g1
			case <-deadline:
				t.Fatalf("g1 %d never announced", g1)
			}
		}
		bmWantFeed(t, w.testEngine, "after g1", r, []feedItem{{Post: g1, Key: g1, Reposters: []int64{}}})
		deadline = time.After(testenv.Scale(5 * time.Second))
		for got := -1; got != 1; {
			select {
			case got = <-counts:
				if got > 1 {
					t.Fatalf("red dot at %d: it counted the protected post", got)
				}
			case <-deadline:
				t.Fatalf("red dot at %d, want 1", got)
			}
		}
		select {
		case n := <-counts:
			t.Fatalf("red dot moved on to %d", n)
		case <-time.After(testenv.Scale(200 * time.Millisecond)):
		}
	})
}

// A protected user's timeline is theirs and their followers' alone (its
// totalCount stays public); their posts are reposted by them alone:
// FORBIDDEN to a follower, NOT_FOUND to anyone else.
func TestProtectedTimelineAndReposts(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	ctx := context.Background()
	p, a, r := te.user("protected"), te.user("approved"), te.user("stranger")
	te.follow(a, p)
	p1 := te.post(p, "p1")
	te.protect(p, true)
	user, err := te.Users(ctx, []int64{p})
	if err != nil || !user[0].IsProtected {
		t.Fatalf("p as read: %+v, %v", user[0], err)
	}
	for _, c := range []struct {
		name   string
		viewer int64
		edges  int
	}{{"author", p, 1}, {"follower", a, 1}, {"stranger", r, 0}, {"signed out", 0, 0}} {
		conn, err := te.Timeline(ctx, c.viewer, user[0], paging.PageArgs{})
		if err != nil || len(conn.Edges) != c.edges || conn.TotalCount != 1 {
			t.Errorf("timeline of p for the %s: %+v, %v; want %d edges and totalCount 1", c.name, conn, err, c.edges)
		}
	}
	if _, err := te.Repost(ctx, a, p1); apperr.CodeOf(err) != apperr.CodeForbidden {
		t.Errorf("a follower's repost: %v, want FORBIDDEN", err)
	}
	if _, err := te.Repost(ctx, r, p1); apperr.CodeOf(err) != apperr.CodeNotFound {
		t.Errorf("a stranger's repost: %v, want NOT_FOUND", err)
	}
	if _, err := te.Repost(ctx, p, p1); err != nil {
		t.Errorf("the author's repost: %v", err)
	}
}

// Home inserts no promoted post of a protected author but for the
// author's followers; turning protection on takes it out at once.
func TestProtectedPostIsNotPromotedToStrangers(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(cfg *config.Config) { cfg.HomeInsertEvery = 2 })
	ctx := context.Background()
	v, f, a, p := te.user("viewer"), te.user("follower"), te.user("followee"), te.user("promoter")
	te.follow(v, a)
	te.follow(f, a)
	te.follow(f, p)
	promoted := te.post(p, "promoted")
	if err := te.SetPromoted(ctx, promoted, true); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		te.post(a, "a slot for the insertion")
	}
	te.settle()
	for _, r := range []int64{v, f} {
		if _, posts := bmHomeInserts(t, te, r); !slices.Equal(posts, []int64{promoted}) {
			t.Fatalf("p public: home of %d promotes %v, want [%d]", r, posts, promoted)
		}
	}
	te.protect(p, true)
	if _, posts := bmHomeInserts(t, te, v); len(posts) != 0 {
		t.Fatalf("p protected: the stranger's home promotes %v", posts)
	}
	if _, posts := bmHomeInserts(t, te, f); !slices.Equal(posts, []int64{promoted}) {
		t.Fatalf("p protected: the follower's home promotes %v, want [%d]", posts, promoted)
	}
}

// Turning protection off approves every waiting request even when the
// process that committed the change dies before it approves them: the
// change's user_changed event approves them (here the change is committed
// as ChangeProfile commits it, and nothing of what ChangeProfile does
// after the commit runs). The approved follows come with their counts and
// the follower's feed.
func TestProtectionOffApprovesAfterACrash(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		p := w.author("protected")
		w.protect(p, true)
		p1 := w.post(p, "p1")
		r1, r2 := w.user("reader1"), w.user("reader2")
		for _, r := range []int64{r1, r2} {
			w.touchFeed(r)
			w.follow(r, p)
		}
		if got := w.requesters(p); len(got) != 2 {
			t.Fatalf("requests of p: %v, want two", got)
		}
		before := bmFollowCounts(t, w.testEngine, p)[0]
		off := false
		if _, err := w.store.UpdateProfile(context.Background(), p, models.ProfileChange{IsProtected: &off}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		w.settle()
		if got := w.requesters(p); len(got) != 0 {
			t.Fatalf("after the crash and the event, requests of p: %v, want none", got)
		}
		for _, r := range []int64{r1, r2} {
			bmWantFollowing(t, w.testEngine, "approved by the event", r, true, p)
			bmWantFeed(t, w.testEngine, "approved by the event", r, []feedItem{{Post: p1, Key: p1}})
		}
		if after := bmFollowCounts(t, w.testEngine, p)[0]; after[0] != before[0]+2 {
			t.Fatalf("p's follower count %d after two approvals, was %d", after[0], before[0])
		}
	})
}
