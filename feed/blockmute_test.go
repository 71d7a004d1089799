package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// Issue 25's rules of block and mute, through the engine, in every mode:
// what leaves a feed and what comes back in its place, counts, refused
// follows, timelines, full pages, reads on another instance, the unread
// count and live events, home insertions, and the repair a stream event
// alone makes after a crash.

// bmCase is a mode the rules are checked in. With celebrities, every author
// a test makes has fans enough to be a celebrity, so hybrid mode merges
// their posts at read time instead of fanning them out.
type bmCase struct {
	name        string
	mode        config.Mode
	celebrities bool
}

var bmCases = []bmCase{
	{"pull", config.ModePull, false},
	{"push", config.ModePush, false},
	{"hybrid", config.ModeHybrid, false},
	{"hybrid_celebrities", config.ModeHybrid, true},
}

// bmCelebrityFollowers is the celebrity threshold of the tests' engines,
// and the number of fans an author of a celebrities case gets: with the
// reader's follow they have one more, so a block that ends that follow
// leaves them a celebrity.
const bmCelebrityFollowers = 3

// bmEach runs test in every case, in parallel.
func bmEach(t *testing.T, test func(t *testing.T, c bmCase)) {
	for _, c := range bmCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			test(t, c)
		})
	}
}

func (c bmCase) configure(change []func(*config.Config)) []func(*config.Config) {
	return append([]func(*config.Config){func(cfg *config.Config) {
		cfg.Mode, cfg.CelebrityFollowers = c.mode, bmCelebrityFollowers
	}}, change...)
}

// engine starts an engine of the case.
func (c bmCase) engine(t *testing.T, change ...func(*config.Config)) *bmWorld {
	t.Helper()
	return &bmWorld{testEngine: newTestEngine(t, c.configure(change)...), celebrities: c.celebrities}
}

// twoEngines starts two instances of the case on one store and one Redis:
// the world writes on the first.
func (c bmCase) twoEngines(t *testing.T, change ...func(*config.Config)) (*bmWorld, *testEngine) {
	t.Helper()
	one, two := startTwoEngines(t, c.configure(change)...)
	return &bmWorld{testEngine: one, celebrities: c.celebrities}, two
}

// bmWorld is an engine whose authors are celebrities in a celebrities case.
type bmWorld struct {
	*testEngine
	celebrities bool
	fans        []int64
}

// author signs up a user whose posts a test reads; in a celebrities case
// the world's fans follow them.
func (w *bmWorld) author(name string) int64 {
	w.t.Helper()
	id := w.user(name)
	if !w.celebrities {
		return id
	}
	for len(w.fans) < bmCelebrityFollowers {
		w.fans = append(w.fans, w.user(fmt.Sprintf("fan%d", len(w.fans))))
	}
	for _, fan := range w.fans {
		w.follow(fan, id)
	}
	return id
}

func (te *testEngine) mute(viewer, user int64) {
	te.t.Helper()
	if _, err := te.Mute(context.Background(), viewer, user); err != nil {
		te.t.Fatalf("mute: %v", err)
	}
}

func (te *testEngine) unmute(viewer, user int64) {
	te.t.Helper()
	if _, err := te.Unmute(context.Background(), viewer, user); err != nil {
		te.t.Fatalf("unmute: %v", err)
	}
}

func (te *testEngine) block(viewer, user int64) *models.BlockPayload {
	te.t.Helper()
	p, err := te.Block(context.Background(), viewer, user)
	if err != nil {
		te.t.Fatalf("block: %v", err)
	}
	return p
}

func (te *testEngine) unblock(viewer, user int64) {
	te.t.Helper()
	if _, err := te.Unblock(context.Background(), viewer, user); err != nil {
		te.t.Fatalf("unblock: %v", err)
	}
}

// touchFeed reads one page of reader's feed: the reader is active, and in
// push and hybrid modes has an inbox that fan-out feeds.
func (te *testEngine) touchFeed(reader int64) {
	te.t.Helper()
	one := 1
	if _, err := te.Feed(context.Background(), reader, paging.PageArgs{First: &one}); err != nil {
		te.t.Fatalf("feed of %d: %v", reader, err)
	}
	te.inboxes.Wait() // the inbox a cold read rebuilt is written after its answer
}

// feedItemsAdded opens the stream of entries entering reader's feed, which
// the end of the test closes.
func (te *testEngine) feedItemsAdded(reader int64) <-chan *models.FeedEdge {
	te.t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	te.t.Cleanup(stop)
	added, err := te.FeedItemsAdded(ctx, reader)
	if err != nil {
		te.t.Fatalf("feed items added of %d: %v", reader, err)
	}
	return added
}

// bmWantFeed checks reader's feed against want, paged forward and backward
// by several sizes. Every page that says more follows must be full,
// however much of the feed the reader hides.
func bmWantFeed(t testing.TB, te *testEngine, stage string, reader int64, want []feedItem) {
	t.Helper()
	for _, size := range []int{1, 3, 100} {
		for _, backward := range []bool{false, true} {
			full := func(page int, conn *models.FeedConnection) {
				more := conn.PageInfo.HasNextPage
				if backward {
					more = conn.PageInfo.HasPreviousPage
				}
				if more && len(conn.Edges) != size {
					t.Fatalf("%s: feed of %d paged by %d (backward %v): page %d holds %d entries and says more follow",
						stage, reader, size, backward, page+1, len(conn.Edges))
				}
			}
			// A few pages to spare: a feed with entries too many is then
			// reported by the comparison, with both feeds.
			got := te.pageFeed(reader, size, backward, len(want)+5, full)
			if !slices.EqualFunc(got, want, feedItemEqual) {
				t.Fatalf("%s: feed of %d paged by %d (backward %v):\n got %v\nwant %v", stage, reader, size, backward, got, want)
			}
		}
	}
}

// bmFollowCounts is each user's follower and following counts.
func bmFollowCounts(t testing.TB, te *testEngine, ids ...int64) [][2]int {
	t.Helper()
	users, err := te.Users(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][2]int, len(users))
	for i, u := range users {
		out[i] = [2]int{u.FollowerCount, u.FollowingCount}
	}
	return out
}

// bmWantFollowing checks whether follower follows each of ids.
func bmWantFollowing(t testing.TB, te *testEngine, stage string, follower int64, want bool, ids ...int64) {
	t.Helper()
	followed, err := te.FollowedBy(context.Background(), follower, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if followed[id] != want {
			t.Fatalf("%s: %d follows %d: %v, want %v", stage, follower, id, followed[id], want)
		}
	}
}

// bmWantTimeline checks how many of user's posts and reposts viewer's
// page of their timeline shows.
func bmWantTimeline(t testing.TB, te *testEngine, stage string, viewer, user int64, want int) {
	t.Helper()
	ctx := context.Background()
	users, err := te.Users(ctx, []int64{user})
	if err != nil {
		t.Fatal(err)
	}
	ten := 10
	conn, err := te.Timeline(ctx, viewer, users[0], paging.PageArgs{First: &ten})
	if err != nil {
		t.Fatalf("%s: timeline of %d for %d: %v", stage, user, viewer, err)
	}
	if len(conn.Edges) != want {
		t.Fatalf("%s: timeline of %d for %d shows %d posts, want %d", stage, user, viewer, len(conn.Edges), want)
	}
}

// bmRound is one round of posts around a reader who follows m (the one
// muted or blocked) and f (a friend), and o, whom the reader does not
// follow. Each field is a post's id, named by its author and, for a
// repost, whose post it reposts: mO2 is m's repost of o2.
type bmRound struct {
	m1, f1, o1, mO1, o2, mO2, fO2, o3, fO3, mO3, fM1, mF1 int64
}

// bmRoundEntries is how many entries a round puts in the reader's feed.
const bmRoundEntries = 5

func bmWriteRound(te *testEngine, m, f, o int64) bmRound {
	te.t.Helper()
	var r bmRound
	r.m1 = te.post(m, "m1")
	r.f1 = te.post(f, "f1")
	r.o1 = te.post(o, "o1")
	r.mO1 = te.repost(m, r.o1)
	r.o2 = te.post(o, "o2")
	r.mO2 = te.repost(m, r.o2)
	r.fO2 = te.repost(f, r.o2)
	r.o3 = te.post(o, "o3")
	r.fO3 = te.repost(f, r.o3)
	r.mO3 = te.repost(m, r.o3)
	r.fM1 = te.repost(f, r.m1)
	r.mF1 = te.repost(m, r.f1)
	return r
}

// following is the round in the reader's feed while they follow m and f
// and hide neither, newest first.
func (r bmRound) following(m, f int64) []feedItem {
	return []feedItem{
		{Post: r.o3, Key: r.fO3, Reposters: []int64{m, f}},
		{Post: r.o2, Key: r.mO2, Reposters: []int64{f, m}},
		{Post: r.o1, Key: r.mO1, Reposters: []int64{m}},
		{Post: r.f1, Key: r.f1, Reposters: []int64{m}},
		{Post: r.m1, Key: r.m1, Reposters: []int64{f}},
	}
}

// hidingM is the round in the feed of a reader who mutes or blocks m: m's
// post goes though f reposted it, and so does o1, which only m brought;
// m leaves the reposters of o3 and f1; o2 moves to f's repost.
func (r bmRound) hidingM(f int64) []feedItem {
	return []feedItem{
		{Post: r.o3, Key: r.fO3, Reposters: []int64{f}},
		{Post: r.o2, Key: r.fO2, Reposters: []int64{f}},
		{Post: r.f1, Key: r.f1, Reposters: []int64{}},
	}
}

// throughF is the round in the feed of a reader who follows only f: m's
// post comes by f's repost.
func (r bmRound) throughF(f int64) []feedItem {
	return []feedItem{
		{Post: r.m1, Key: r.fM1, Reposters: []int64{f}},
		{Post: r.o3, Key: r.fO3, Reposters: []int64{f}},
		{Post: r.o2, Key: r.fO2, Reposters: []int64{f}},
		{Post: r.f1, Key: r.f1, Reposters: []int64{}},
	}
}

// Mute: the muted followee's posts, their reposts and others' reposts of
// their posts leave the feed, they leave the reposters of the entries that
// stay, and an entry they brought first moves to the friend's repost; no
// count moves and the follow stays. Unmute puts every entry back at its
// former cursor, inside the inbox window (the newer round) and below it
// (the older round: the inbox, and a celebrity's outbox, keep one round).
// In hybrid mode with celebrities the muted followee is one: not merged.
func TestBlockMuteMuteHidesAndUnmuteRestores(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t, func(cfg *config.Config) { cfg.InboxCap = bmRoundEntries })
		r, m, f, o := w.user("reader"), w.author("muted"), w.author("friend"), w.user("other")
		w.follow(r, m)
		w.follow(r, f)
		w.touchFeed(r)
		older := bmWriteRound(w.testEngine, m, f, o)
		newer := bmWriteRound(w.testEngine, m, f, o)
		w.settle()
		unmuted := slices.Concat(newer.following(m, f), older.following(m, f))
		muted := slices.Concat(newer.hidingM(f), older.hidingM(f))
		bmWantFeed(t, w.testEngine, "before the mute", r, unmuted)
		counts := bmFollowCounts(t, w.testEngine, r, m)

		w.mute(r, m)
		bmWantFeed(t, w.testEngine, "just after the mute", r, muted)
		if got := bmFollowCounts(t, w.testEngine, r, m); !slices.Equal(got, counts) {
			t.Fatalf("the mute moved the counts (followers, following) of reader and muted: %v, before %v", got, counts)
		}
		bmWantFollowing(t, w.testEngine, "after the mute", r, true, m)
		w.settle()
		bmWantFeed(t, w.testEngine, "after the mute, settled", r, muted)

		w.unmute(r, m)
		bmWantFeed(t, w.testEngine, "just after the unmute", r, unmuted)
		w.settle()
		bmWantFeed(t, w.testEngine, "after the unmute, settled", r, unmuted)
	})
}

// bmSide is one side of a block: me follows other, who follows me back,
// and friend, whom other does not follow. other posts post, which friend
// reposts (a third user's repost of other's post); friend posts
// friendPost, which other reposts; and a stranger's post comes to me by
// other's repost alone.
type bmSide struct {
	me, other, friend                     int64
	post, friendRepost                    int64
	friendPost, otherRepost               int64
	strangerPost, strangerRepostedByOther int64
}

func bmWriteSide(te *testEngine, me, other, friend, stranger int64) bmSide {
	te.t.Helper()
	s := bmSide{me: me, other: other, friend: friend}
	s.post = te.post(other, "other's")
	s.friendRepost = te.repost(friend, s.post)
	s.friendPost = te.post(friend, "friend's")
	s.otherRepost = te.repost(other, s.friendPost)
	s.strangerPost = te.post(stranger, "stranger's")
	s.strangerRepostedByOther = te.repost(other, s.strangerPost)
	return s
}

// before is me's feed before the block, newest first.
func (s bmSide) before() []feedItem {
	return []feedItem{
		{Post: s.strangerPost, Key: s.strangerRepostedByOther, Reposters: []int64{s.other}},
		{Post: s.friendPost, Key: s.friendPost, Reposters: []int64{s.other}},
		{Post: s.post, Key: s.post, Reposters: []int64{s.friend}},
	}
}

// blocked is me's feed while either blocks the other: nothing of other's,
// not even by the friend's repost, and other is no reposter.
func (s bmSide) blocked() []feedItem {
	return []feedItem{{Post: s.friendPost, Key: s.friendPost, Reposters: []int64{}}}
}

// unblocked is me's feed after the unblock: no follow came back, but the
// friend's repost brings other's post again.
func (s bmSide) unblocked() []feedItem {
	return []feedItem{
		{Post: s.friendPost, Key: s.friendPost, Reposters: []int64{}},
		{Post: s.post, Key: s.friendRepost, Reposters: []int64{s.friend}},
	}
}

// Block, by the reader or of the reader: the follows end both ways, with
// the counts; a follow either way is FORBIDDEN; neither sees the other's
// posts, reposts, or a third user's reposts of their posts; the timeline
// across the block is empty. Unblock brings no follow back. In hybrid mode
// with celebrities, both are celebrities (a blocked one, and one who
// blocks the reader) and so are their friends.
func TestBlockMuteBlock(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		for _, readerBlocks := range []bool{true, false} {
			name := "reader_blocks"
			if !readerBlocks {
				name = "blocks_the_reader"
			}
			t.Run(name, func(t *testing.T) {
				w := c.engine(t)
				r, b := w.author("reader"), w.author("blocked")
				rf, bf, stranger := w.author("reader_friend"), w.author("blocked_friend"), w.user("stranger")
				w.follow(r, b)
				w.follow(b, r)
				w.follow(r, rf)
				w.follow(b, bf)
				w.touchFeed(r)
				w.touchFeed(b)
				sides := []bmSide{bmWriteSide(w.testEngine, r, b, rf, stranger), bmWriteSide(w.testEngine, b, r, bf, stranger)}
				w.settle()
				for _, s := range sides {
					bmWantFeed(t, w.testEngine, "before the block", s.me, s.before())
				}
				bmWantTimeline(t, w.testEngine, "before the block", r, b, 3)

				blocker, blocked := r, b
				if !readerBlocks {
					blocker, blocked = b, r
				}
				before := bmFollowCounts(t, w.testEngine, blocker, blocked)
				p := w.block(blocker, blocked)
				after := [][2]int{{before[0][0] - 1, before[0][1] - 1}, {before[1][0] - 1, before[1][1] - 1}}
				if got := [][2]int{{p.Viewer.FollowerCount, p.Viewer.FollowingCount}, {p.User.FollowerCount, p.User.FollowingCount}}; !slices.Equal(got, after) {
					t.Fatalf("block payload: counts (followers, following) of blocker and blocked %v, want %v", got, after)
				}
				if got := bmFollowCounts(t, w.testEngine, blocker, blocked); !slices.Equal(got, after) {
					t.Fatalf("after the block: counts (followers, following) of blocker and blocked %v, want %v", got, after)
				}
				bmWantFollowing(t, w.testEngine, "after the block", r, false, b)
				bmWantFollowing(t, w.testEngine, "after the block", b, false, r)
				for _, pair := range [][2]int64{{r, b}, {b, r}} {
					if _, err := w.Follow(context.Background(), pair[0], pair[1]); apperr.CodeOf(err) != apperr.CodeForbidden {
						t.Fatalf("follow of %d by %d across the block: %v, want %s", pair[1], pair[0], err, apperr.CodeForbidden)
					}
				}
				blockerSide := sides[0]
				if !readerBlocks {
					blockerSide = sides[1]
				}
				bmWantFeed(t, w.testEngine, "just after the block", blocker, blockerSide.blocked())
				w.settle()
				for _, s := range sides {
					bmWantFeed(t, w.testEngine, "after the block, settled", s.me, s.blocked())
				}
				bmWantTimeline(t, w.testEngine, "after the block", r, b, 0)
				bmWantTimeline(t, w.testEngine, "after the block", b, r, 0)

				w.unblock(blocker, blocked)
				if got := bmFollowCounts(t, w.testEngine, blocker, blocked); !slices.Equal(got, after) {
					t.Fatalf("after the unblock: counts (followers, following) of blocker and blocked %v, want %v as after the block", got, after)
				}
				bmWantFollowing(t, w.testEngine, "after the unblock", r, false, b)
				bmWantFollowing(t, w.testEngine, "after the unblock", b, false, r)
				w.settle()
				// The blocked side's reset was made by the block: the
				// unblock's waits for BlockResetInterval to end
				// (TestBlockResetBounded). Read as after it.
				if _, err := w.ResetDueBlocks(context.Background(), w.now().Add(2*config.DefaultBlockResetInterval)); err != nil {
					t.Fatal(err)
				}
				for _, s := range sides {
					bmWantFeed(t, w.testEngine, "after the unblock", s.me, s.unblocked())
				}
				bmWantTimeline(t, w.testEngine, "after the unblock", r, b, 3)
				bmWantTimeline(t, w.testEngine, "after the unblock", b, r, 3)
				w.follow(r, b) // allowed again
			})
		}
	})
}

// A reader who follows 60 and mutes all but 5 of them still gets full
// pages, forward and backward, both of posts from before the mutes and of
// posts fanned out after them. The followee set is asked about page by
// page (FollowingReadMax below the followees), as for any reader who
// follows many. In hybrid mode with celebrities, every followee is one.
func TestBlockMutePagesStayFull(t *testing.T) {
	t.Parallel()
	const followees, keptEvery = 60, 12
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t, func(cfg *config.Config) { cfg.FollowingReadMax = 20 })
		r := w.user("reader")
		authors := make([]int64, followees)
		for i := range authors {
			authors[i] = w.author(fmt.Sprintf("author%02d", i))
			w.follow(r, authors[i])
		}
		w.touchFeed(r)
		var want []feedItem // oldest first
		writeRound := func() {
			for i, a := range authors {
				p := w.post(a, "p")
				if i%keptEvery == 0 {
					want = append(want, feedItem{Post: p, Key: p, Reposters: []int64{}})
				}
			}
		}
		writeRound()
		for i, a := range authors {
			if i%keptEvery != 0 {
				w.mute(r, a)
			}
		}
		w.touchFeed(r) // the inbox again, for the fan-out of the next round
		writeRound()
		w.settle()
		slices.Reverse(want)
		bmWantFeed(t, w.testEngine, fmt.Sprintf("muting all but every %dth of %d followees", keptEvery, followees), r, want)
	})
}

// Every instance reflects a block or mute at the viewer's very next read,
// made there with its copies warm: neither instance runs a dispatcher or
// workers, so only what the mutation itself does after its commit can
// bring the change to the other one.
func TestBlockMuteOwnWritesOnAnotherInstance(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w, two := c.twoEngines(t, func(cfg *config.Config) { cfg.Dispatch, cfg.FanoutWorkers = false, 0 })
		r, m, f, o := w.user("reader"), w.author("muted"), w.author("friend"), w.user("other")
		w.follow(r, m)
		w.follow(r, f)
		round := bmWriteRound(w.testEngine, m, f, o)
		bmWantFeed(t, two, "on the other instance, before", r, round.following(m, f))

		w.mute(r, m)
		bmWantFeed(t, two, "on the other instance, just after the mute", r, round.hidingM(f))
		w.unmute(r, m)
		bmWantFeed(t, two, "on the other instance, just after the unmute", r, round.following(m, f))

		w.block(r, m)
		bmWantFeed(t, two, "on the other instance, just after the block", r, round.hidingM(f))
		bmWantTimeline(t, two, "on the other instance, just after the block", r, m, 0)
		if _, err := two.Follow(context.Background(), r, m); apperr.CodeOf(err) != apperr.CodeForbidden {
			t.Fatalf("follow across the block on the other instance: %v, want %s", err, apperr.CodeForbidden)
		}
		w.unblock(r, m)
		bmWantFeed(t, two, "on the other instance, just after the unblock", r, round.throughF(f))
		bmWantTimeline(t, two, "on the other instance, just after the unblock", r, m, 5)
	})
}

// bmWaitCount reads counts until it says want.
func bmWaitCount(t *testing.T, counts <-chan int, stage string, want int) {
	t.Helper()
	var seen []int
	deadline := time.After(testenv.Scale(5 * time.Second))
	for {
		select {
		case n := <-counts:
			if seen = append(seen, n); n == want {
				return
			}
		case <-deadline:
			t.Fatalf("%s: the live unread count said %v, never %d", stage, seen, want)
		}
	}
}

// bmWaitAdded reads added until post arrives; any other entry fails.
func bmWaitAdded(t *testing.T, added <-chan *models.FeedEdge, stage string, post int64) {
	t.Helper()
	select {
	case e := <-added:
		if e.Node.PostID != post {
			t.Fatalf("%s: feedItemAdded of post %d, want %d", stage, e.Node.PostID, post)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatalf("%s: no feedItemAdded of post %d", stage, post)
	}
}

// bmWantUnread checks reader's unread count.
func bmWantUnread(t *testing.T, te *testEngine, stage string, reader int64, want int) {
	t.Helper()
	if n, err := te.UnreadCount(context.Background(), reader); err != nil || n != want {
		t.Fatalf("%s: unread count %d (%v), want %d", stage, n, err, want)
	}
}

// A mute that hides unread entries lowers the unread count, at once and on
// the live count; afterwards the muted followee's post, and a friend's
// repost of their post, raise no feedItemAdded event and no count. In
// hybrid mode with celebrities, the muted followee is one, heard on their
// own channel until the mute.
func TestBlockMuteUnreadCount(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		r, m, f := w.user("reader"), w.author("muted"), w.author("friend")
		w.follow(r, m)
		w.follow(r, f)
		w.touchFeed(r)
		counts, _ := w.unreadCounts(r)
		added := w.feedItemsAdded(r)
		bmWaitCount(t, counts, "at the start", 0)
		// Each arrival waits for its event, so that the events come in order.
		var posts []int64
		for _, author := range []int64{m, f, m} {
			posts = append(posts, w.post(author, "unread"))
			bmWaitAdded(t, added, "before the mute", posts[len(posts)-1])
		}
		w.settle()
		bmWaitCount(t, counts, "before the mute", 3)
		bmWantUnread(t, w.testEngine, "before the mute", r, 3)

		w.mute(r, m)
		bmWantUnread(t, w.testEngine, "just after the mute", r, 1)
		bmWaitCount(t, counts, "after the mute", 1)

		w.post(m, "muted")
		w.repost(f, posts[0])
		sentinel := w.post(f, "after")
		w.settle()
		bmWaitAdded(t, added, "after the muted post and the repost of one", sentinel)
		bmWaitCount(t, counts, "after the muted post, the repost of one and a friend's post", 2)
		// Whatever the muted post or the repost would have announced has
		// come by now; neither may have.
		grace := time.After(testenv.Scale(300 * time.Millisecond))
		for done := false; !done; {
			select {
			case e := <-added:
				t.Fatalf("feedItemAdded of post %d, hidden by the mute", e.Node.PostID)
			case n := <-counts:
				t.Fatalf("the live unread count moved to %d, want it to stay at 2", n)
			case <-grace:
				done = true
			}
		}
		bmWantUnread(t, w.testEngine, "after the muted post, the repost of one and a friend's post", r, 2)
	})
}

// bmHomeInserts pages viewer's whole home and returns the users it
// suggests and the promoted posts it inserts, sorted.
func bmHomeInserts(t *testing.T, te *testEngine, viewer int64) (users, posts []int64) {
	t.Helper()
	size := 10
	var after *string
	for range 100 {
		conn, _, err := te.Home(context.Background(), viewer, paging.PageArgs{First: &size, After: after})
		if err != nil {
			t.Fatalf("home of %d: %v", viewer, err)
		}
		for _, e := range conn.Edges {
			switch n := e.Node.(type) {
			case *models.SuggestedUser:
				users = append(users, n.UserID)
			case *models.PromotedPost:
				posts = append(posts, n.PostID)
			}
		}
		if !conn.PageInfo.HasNextPage {
			slices.Sort(users)
			slices.Sort(posts)
			return users, posts
		}
		after = conn.PageInfo.EndCursor
	}
	t.Fatalf("home of %d claims more pages after 100", viewer)
	return nil, nil
}

// Home suggests no user the viewer mutes or blocks or who blocks the
// viewer, and inserts no promoted post by such a user; others stay.
func TestBlockMuteHome(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t, func(cfg *config.Config) { cfg.HomeInsertEvery = 2 })
		v, a, b := w.user("viewer"), w.author("followee_a"), w.author("followee_b")
		w.follow(v, a)
		w.follow(v, b)
		ctx := context.Background()
		relations := []struct {
			name  string
			apply func(viewer, other int64)
		}{
			{"none", nil},
			{"muted", func(viewer, other int64) { w.mute(viewer, other) }},
			{"blocked", func(viewer, other int64) { w.block(viewer, other) }},
			{"blocker", func(viewer, other int64) { w.block(other, viewer) }},
		}
		suggested, promoted, authors := make([]int64, len(relations)), make([]int64, len(relations)), make([]int64, len(relations))
		for i, rel := range relations {
			suggested[i] = w.user("suggested_" + rel.name)
			w.follow(a, suggested[i]) // two of the viewer's followees follow them: a suggestion
			w.follow(b, suggested[i])
			authors[i] = w.user("promoter_" + rel.name)
			promoted[i] = w.post(authors[i], "promoted")
			if err := w.SetPromoted(ctx, promoted[i], true); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 * len(relations) {
			w.post(a, "a slot for every insertion")
		}
		w.settle()
		users, posts := bmHomeInserts(t, w.testEngine, v)
		if !slices.Equal(users, slices.Sorted(slices.Values(suggested))) || !slices.Equal(posts, slices.Sorted(slices.Values(promoted))) {
			t.Fatalf("before any relation: home suggests %v and promotes %v, want %v and %v", users, posts, suggested, promoted)
		}
		for i, rel := range relations {
			if rel.apply != nil {
				rel.apply(v, suggested[i])
				rel.apply(v, authors[i])
			}
		}
		users, posts = bmHomeInserts(t, w.testEngine, v)
		if !slices.Equal(users, suggested[:1]) || !slices.Equal(posts, promoted[:1]) {
			t.Fatalf("after mutes and blocks: home suggests %v and promotes %v, want only %d and %d, of the user the viewer neither hides nor is blocked by",
				users, posts, suggested[0], promoted[0])
		}
	})
}

// A crash between a mutation's commit and the resets after it loses
// nothing: the change's stream event alone repairs the reader's inbox and
// followee set. The store's methods commit a change with its event, as the
// engine's mutations do, and do nothing after.
func TestBlockMuteStreamEventAloneRepairs(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		r, m, f, o := w.user("reader"), w.author("muted"), w.author("friend"), w.user("other")
		w.follow(r, m)
		w.follow(r, f)
		w.touchFeed(r)
		round := bmWriteRound(w.testEngine, m, f, o)
		w.settle()
		bmWantFeed(t, w.testEngine, "before", r, round.following(m, f)) // the inbox and followee set are warm
		ctx := context.Background()
		steps := []struct {
			change string
			commit func() (bool, error)
			want   []feedItem
		}{
			{"mute", func() (bool, error) { return w.store.Mute(ctx, r, m, w.ids.Next(), w.now().UTC()) }, round.hidingM(f)},
			{"unmute", func() (bool, error) { return w.store.Unmute(ctx, r, m, w.now().UTC()) }, round.following(m, f)},
			{"block", func() (bool, error) { return w.store.Block(ctx, r, m, w.ids.Next(), w.now().UTC()) }, round.hidingM(f)},
			{"unblock", func() (bool, error) { return w.store.Unblock(ctx, r, m, w.now().UTC()) }, round.throughF(f)},
		}
		for _, s := range steps {
			if changed, err := s.commit(); err != nil || !changed {
				t.Fatalf("%s in the store: changed %v, %v", s.change, changed, err)
			}
			w.settle()
			bmWantFeed(t, w.testEngine, "after a "+s.change+" committed alone, its event handled", r, s.want)
		}
	})
}
