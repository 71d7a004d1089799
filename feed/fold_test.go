package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/internal/testenv"
	"feedservice/store"
)

// foldWorld is a hybrid engine whose reader follows an ordinary author and
// a celebrity (three followers), with a post by each, and has read their
// feed once cold and once warm: the warm page merged the celebrity's
// outbox and folded it into the inbox after it answered.
type foldWorld struct {
	*testEngine
	reader, author, star int64
	fans                 []int64
}

func newFoldWorld(t *testing.T, rdb redis.UniversalClient, prefix string) *foldWorld {
	t.Helper()
	te := startTestEngine(t, newTestStore(t), rdb, prefix, func(c *config.Config) { c.CelebrityFollowers = 3; c.InboxCap = 20 })
	w := &foldWorld{testEngine: te, reader: te.user("reader"), author: te.user("author"), star: te.user("star")}
	w.fans = []int64{te.user("fan1"), te.user("fan2")}
	te.follow(w.reader, w.author)
	for _, f := range append([]int64{w.reader}, w.fans...) {
		te.follow(f, w.star) // three followers: a celebrity
	}
	te.post(w.author, "ordinary")
	te.post(w.star, "celebrated")
	te.settle()
	te.touchFeed(w.reader) // cold: the inbox is rebuilt
	te.touchFeed(w.reader) // warm: merges the star's outbox, then folds it
	te.settle()
	return w
}

// inInbox says whether post is an entry of the reader's inbox in Redis.
func (w *foldWorld) inInbox(t *testing.T, post int64) bool {
	t.Helper()
	_, err := w.redis.ZScore(context.Background(), w.keys.Inbox(w.reader), strconv.FormatInt(post, 10)).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	return err == nil
}

// folds is how many folds ended with outcome.
func (w *foldWorld) folds(outcome string) float64 {
	return lcCount(w.metrics.Folds.WithLabelValues(outcome))
}

// shownFeed is reader's whole feed computed from MySQL alone, with what
// they mute or block hidden (the world has no reposts).
func (w *foldWorld) shownFeed(reader int64) []feedItem {
	w.t.Helper()
	ctx := context.Background()
	followees, hidden, err := w.store.FeedView(ctx, reader)
	if err != nil {
		w.t.Fatal(err)
	}
	entries, err := w.pull.Entries(ctx, pull.NewView(followees, hidden), store.Older, 1<<62, 1<<20)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.itemsWithReposters(followees, entries)
}

// checkFeed fails unless the reader's feed, paged by 2 and read whole, is
// the feed MySQL computes.
func (w *foldWorld) checkFeed(t *testing.T, stage string) {
	t.Helper()
	w.settle()
	checkFeeds(t, w.testEngine, stage, "MySQL", w.shownFeed, w.reader)
}

// A warm hybrid page folds the celebrities it merged into the inbox, and
// folds again, only what came since, after the celebrity posts again; the
// feed stays MySQL's throughout.
func TestFoldPutsCelebrityPostsInTheInbox(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	w := newFoldWorld(t, rdb, prefix)
	celebrated := w.shownFeed(w.reader)[0].Post
	if !w.inInbox(t, celebrated) {
		t.Fatalf("the star's post %d is not in the reader's inbox after a warm page: nothing was folded (folds: %v folded, %v stale, %v skipped)",
			celebrated, w.folds("folded"), w.folds("stale"), w.folds("skipped"))
	}
	w.checkFeed(t, "after the first fold")
	next := w.post(w.star, "again")
	w.settle()
	w.touchFeed(w.reader) // merges the new post, and folds it
	w.settle()
	if !w.inInbox(t, next) {
		t.Fatalf("the star's second post %d was not folded", next)
	}
	w.checkFeed(t, "after the second fold")
}

// Unfollowing a folded celebrity takes their posts out of the feed at
// once, as a merged one's; following them again brings them back, the
// fold's mark being of the old followee set.
func TestUnfollowBetweenFoldAndRead(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	w := newFoldWorld(t, rdb, prefix)
	w.unfollow(w.reader, w.star)
	w.checkFeed(t, "after the unfollow")
	if got := w.shownFeed(w.reader); len(got) != 1 {
		t.Fatalf("the reader's feed holds %d entries after the unfollow, want the author's 1", len(got))
	}
	w.follow(w.reader, w.star)
	w.checkFeed(t, "after following again")
	w.touchFeed(w.reader)
	w.checkFeed(t, "after following again, folded")
}

// An unfollow, a mute or a block of the celebrity between a page and its
// fold leaves the fold without effect (its followee set moved on), and the
// feed is MySQL's; undone, the celebrity's posts come back, merged, then
// folded.
func TestChangesDuringAFold(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"unfollow", "mute", "block"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rdb, hook := hookedRedis(t)
			w := newFoldWorld(t, rdb, "fold:")
			hide, undo := w.mute, w.unmute
			switch kind {
			case "block":
				hide = func(a, b int64) { w.block(a, b) }
				undo = w.unblock
			case "unfollow":
				hide, undo = w.unfollow, w.follow
			}
			next := w.post(w.star, "posted before the "+kind)
			w.settle()
			unwritten := func() float64 { return w.folds("stale") + w.folds("missing") + w.folds("rebuilding") }
			before, folded := unwritten(), w.folds("folded")
			hook.arm(w.keys.RebuildLock(w.reader), func() { hide(w.reader, w.star) })
			w.touchFeed(w.reader) // merges next; the fold meets the hiding
			w.settle()
			if !hook.fired.Load() {
				t.Fatal("no fold ran after the page that merged the star's new post")
			}
			// Each moves the followee set on; a block resets the inbox too.
			if got := unwritten(); got != before+1 || w.folds("folded") != folded {
				t.Fatalf("folds that wrote nothing: %v, want %v; folds that wrote: %v, want %v", got, before+1, w.folds("folded"), folded)
			}
			if w.inInbox(t, next) {
				t.Fatalf("the star's post %d was folded into the inbox of a reader who had just done %s of the star", next, kind)
			}
			w.checkFeed(t, "after the "+kind)
			if slices.ContainsFunc(w.shownFeed(w.reader), func(it feedItem) bool { return it.Post == next }) {
				t.Fatalf("MySQL's feed still shows the star's post after %s", kind)
			}
			undo(w.reader, w.star)
			if kind == "block" {
				w.follow(w.reader, w.star) // a block ends the follow
			}
			w.checkFeed(t, "after undoing "+kind)
			w.touchFeed(w.reader)
			w.settle()
			if !w.inInbox(t, next) {
				t.Fatalf("after undoing %s, the star's post %d was not folded again", kind, next)
			}
			w.checkFeed(t, "after undoing "+kind+", folded")
		})
	}
}

// hookedRedis is a private redis-server's client with a beforeFold hook
// on it (a private one: the hook sees every command of the engine).
func hookedRedis(t *testing.T) (redis.UniversalClient, *beforeFold) {
	t.Helper()
	server := testenv.StartRedis(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	hook := &beforeFold{}
	rdb.AddHook(hook)
	return rdb, hook
}

// beforeFold is a Redis hook that runs a function once, before the first
// fold script (five keys, the third the reader's rebuild lock) after it
// was armed.
type beforeFold struct {
	lock  atomic.Pointer[string]
	do    atomic.Pointer[func()]
	fired atomic.Bool
}

func (h *beforeFold) arm(lock string, do func()) {
	h.fired.Store(false)
	h.do.Store(&do)
	h.lock.Store(&lock)
}

func (h *beforeFold) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *beforeFold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *beforeFold) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		lock := h.lock.Load()
		args := cmd.Args()
		if lock != nil && len(args) > 5 && fmt.Sprint(args[2]) == "5" && fmt.Sprint(args[5]) == *lock &&
			(cmd.Name() == "evalsha" || cmd.Name() == "eval") && h.lock.CompareAndSwap(lock, nil) {
			(*h.do.Load())()
			h.fired.Store(true)
		}
		return next(ctx, cmd)
	}
}

// An entry that the inbox cut at its first arrival (the trim keeps the
// newest), and that another followee's repost brought later, above the
// floor, comes back at that repost when the first arrival's author is
// unfollowed: the feed is MySQL's. In hybrid mode with the author a
// celebrity, the first arrival came by a fold.
func TestUnfollowBringsBackATrimmedEntry(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode; c.InboxCap = 3 })
			reader, star, c, b := te.user("reader"), te.user("star"), te.user("carol"), te.user("bob")
			for _, f := range []int64{star, c, b} {
				te.follow(reader, f)
			}
			if mode == config.ModeHybrid {
				te.follow(te.user("fan1"), star)
				te.follow(te.user("fan2"), star) // three followers: a celebrity
			}
			te.settle()
			te.touchFeed(reader)
			p := te.post(star, "first arrival")
			te.post(b, "x1")
			te.settle()
			te.touchFeed(reader) // hybrid: merges p, then folds it
			te.settle()
			te.repost(c, p) // a later arrival of p
			te.post(b, "x2")
			te.post(b, "x3") // the inbox keeps 3: p, at its first arrival, is cut
			te.settle()
			te.touchFeed(reader)
			te.settle()
			te.unfollow(reader, star)
			te.settle()
			checkFeeds(t, te, "after the unfollow", "MySQL", te.pulledFeed, reader)
		})
	}
}

// At most FoldsRunning folds run at once: with one slot taken by a fold
// that has not finished, another reader's page folds nothing (counted as
// skipped), and their next page, once the slot is free, folds.
func TestFoldsRunningBound(t *testing.T) {
	t.Parallel()
	rdb, hook := hookedRedis(t)
	te := startTestEngine(t, newTestStore(t), rdb, "folds:", func(c *config.Config) { c.CelebrityFollowers = 3; c.FoldsRunning = 1 })
	a, b, star := te.user("reader_a"), te.user("reader_b"), te.user("star")
	for _, f := range []int64{a, b, te.user("fan")} {
		te.follow(f, star) // three followers: a celebrity
	}
	for _, r := range []int64{a, b} {
		te.touchFeed(r) // cold: the inbox is rebuilt
	}
	post := te.post(star, "celebrated")
	te.settle()
	inInbox := func(reader int64) bool {
		_, err := te.redis.ZScore(context.Background(), te.keys.Inbox(reader), strconv.FormatInt(post, 10)).Result()
		return err == nil
	}
	release, held := make(chan struct{}), make(chan struct{})
	hook.arm(te.keys.RebuildLock(a), func() { close(held); <-release })
	one := 1
	if _, err := te.Feed(context.Background(), a, paging.PageArgs{First: &one}); err != nil {
		t.Fatal(err)
	}
	<-held // a's fold holds the one slot
	skipped := lcCount(te.metrics.Folds.WithLabelValues("skipped"))
	if _, err := te.Feed(context.Background(), b, paging.PageArgs{First: &one}); err != nil {
		t.Fatal(err)
	}
	if got := lcCount(te.metrics.Folds.WithLabelValues("skipped")); got != skipped+1 {
		t.Fatalf("folds skipped: %v, want %v (the one slot was taken)", got, skipped+1)
	}
	close(release)
	te.settle()
	if !inInbox(a) || inInbox(b) {
		t.Fatalf("the star's post in a's inbox: %v (want true), in b's: %v (want false)", inInbox(a), inInbox(b))
	}
	te.touchFeed(b) // the slot is free: b's page folds
	te.settle()
	if !inInbox(b) {
		t.Fatal("b's page with a free slot folded nothing")
	}
}
