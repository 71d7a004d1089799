package feed

import (
	"context"
	"feedservice/feed/pull"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
	"feedservice/store/storetest"
)

// testEngine is an engine on its own MariaDB database and Redis key prefix.
type testEngine struct {
	*Engine
	t      testing.TB
	cancel context.CancelFunc
}

// newTestEngine starts an engine on real MariaDB and Redis with tiny
// defaults (so that every path is taken) that change can adjust. Its
// workers and dispatcher run unless change sets FanoutWorkers to 0 or
// Dispatch to false.
func newTestEngine(t testing.TB, change ...func(*config.Config)) *testEngine {
	t.Helper()
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	return startTestEngine(t, st, rdb, prefix, change...)
}

// newTestStore opens a store on a database of the test's own with the
// store's schema (storetest.MySQL).
func newTestStore(t testing.TB) *store.Store {
	t.Helper()
	dsn := storetest.MySQL(t)
	return depstest.Store(t, store.Config{MySQLDSN: dsn, ReplicaDSNs: testenv.MySQLReplicas(t, dsn)})
}

// startTestEngine starts an engine on an existing store and Redis prefix,
// as a second instance or after a restart.
func startTestEngine(t testing.TB, st *store.Store, rdb redis.UniversalClient, prefix string, change ...func(*config.Config)) *testEngine {
	t.Helper()
	return startTunedTestEngine(t, st, rdb, prefix, nil, change...)
}

// startTunedTestEngine is startTestEngine with the engine's timings that
// are no setting (deps.Deps' FanoutClaimAfter and InboxTrimEvery) changed
// by tune before it starts: they are the engine's own, so tests that change
// them still run beside the others.
func startTunedTestEngine(t testing.TB, st *store.Store, rdb redis.UniversalClient, prefix string, tune func(*deps.Deps), change ...func(*config.Config)) *testEngine {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return startTestEngineWithLog(t, st, rdb, prefix, log, tune, change...)
}

// startTestEngineWithLog is startTestEngine writing its log to log, its
// timings changed by tune (when not nil) before it starts.
func startTestEngineWithLog(t testing.TB, st *store.Store, rdb redis.UniversalClient, prefix string, log *slog.Logger, tune func(*deps.Deps), change ...func(*config.Config)) *testEngine {
	t.Helper()
	cfg := config.Config{
		KeyPrefix:          prefix,
		TokenSecret:        []byte(strings.Repeat("s", 32)),
		BcryptCost:         4,
		NodeID:             -1,
		Mode:               config.ModeHybrid,
		CelebrityFollowers: 3,
		InboxCap:           5,
		InboxTTL:           time.Hour,
		FanoutBatchSize:    2,
		FanoutWorkers:      2,
		Dispatch:           true,
	}
	for _, c := range change {
		c(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e, err := New(ctx, cfg, st, rdb, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if tune != nil {
		tune(e.d) // before Start, which runs the workers that read them
	}
	e.Start(ctx)
	te := &testEngine{Engine: e, t: t, cancel: cancel}
	t.Cleanup(te.stop)
	return te
}

// startTwoEngines starts two instances on one store and one Redis prefix,
// as behind a load balancer, and waits until both hubs listen on the
// invalidate channel, so that each hears every message the other sends
// from then on.
func startTwoEngines(t *testing.T, change ...func(*config.Config)) (a, b *testEngine) {
	t.Helper()
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	a = startTestEngine(t, st, rdb, prefix, change...)
	b = startTestEngine(t, st, rdb, prefix, change...)
	testenv.WaitFor(t, "both hubs on the invalidate channel", func() bool {
		return numSub(t, a, a.keys.CacheInvalidateChannel()) == 2
	})
	return a, b
}

// stop ends the engine's workers and waits for them.
func (te *testEngine) stop() {
	te.cancel()
	te.Wait()
}

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// settle waits for every committed change to be fanned out.
func (te *testEngine) settle() {
	te.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(20*time.Second))
	defer cancel()
	if err := te.WaitIdle(ctx); err != nil {
		te.t.Fatalf("settle: %v", err)
	}
}

// user signs up a user and returns their id.
func (te *testEngine) user(name string) int64 {
	te.t.Helper()
	auth, err := te.SignUp(context.Background(), name, "password-"+name, nil)
	if err != nil {
		te.t.Fatalf("sign up %s: %v", name, err)
	}
	return auth.User.ID
}

func (te *testEngine) follow(follower, followee int64) {
	te.t.Helper()
	if _, err := te.Follow(context.Background(), follower, followee); err != nil {
		te.t.Fatalf("follow: %v", err)
	}
}

func (te *testEngine) unfollow(follower, followee int64) {
	te.t.Helper()
	if _, err := te.Unfollow(context.Background(), follower, followee); err != nil {
		te.t.Fatalf("unfollow: %v", err)
	}
}

func (te *testEngine) post(author int64, body string) int64 {
	te.t.Helper()
	p, err := te.CreatePost(context.Background(), author, body)
	if err != nil {
		te.t.Fatalf("post: %v", err)
	}
	return p.ID
}

func (te *testEngine) repost(user, post int64) int64 {
	te.t.Helper()
	p, err := te.Repost(context.Background(), user, post)
	if err != nil {
		te.t.Fatalf("repost: %v", err)
	}
	return p.ID
}

func (te *testEngine) deletePost(user, post int64) {
	te.t.Helper()
	if err := te.DeletePost(context.Background(), user, post); err != nil {
		te.t.Fatalf("delete: %v", err)
	}
}

// feedItem is one entry of a feed read through the engine.
type feedItem struct {
	Post      int64
	Reposters []int64
	Key       int64
}

// readFeed reads the reader's whole feed, pageSize entries a page, bounded
// by the feed MySQL computes.
func (te *testEngine) readFeed(reader int64, pageSize int) []feedItem {
	te.t.Helper()
	return te.pageFeed(reader, pageSize, false, len(te.pulledFeed(reader)), nil)
}

// checkFeeds reads each reader's whole feed a few entries a page and in
// one page, and fails the test unless both are want(reader), the feed that
// source (named in the message) holds.
func checkFeeds(t testing.TB, te *testEngine, stage, source string, want func(reader int64) []feedItem, readers ...int64) {
	t.Helper()
	for _, r := range readers {
		wanted := want(r)
		for _, size := range []int{2, 100} {
			if got := te.readFeed(r, size); !slices.EqualFunc(got, wanted, feedItemEqual) {
				t.Fatalf("%s: feed of %d, page size %d, differs from %s:\n got %v\nwant %v", stage, r, size, source, got, wanted)
			}
		}
	}
}

// feedPageTimeout bounds one page read in the tests, so that a read that
// loops inside the engine fails the test instead of hanging it.
const feedPageTimeout = time.Minute

// pageFeed reads the reader's whole feed pageSize entries a page, forward
// (first/after, following endCursor) or backward (last/before, following
// startCursor), and returns it newest first; check, if not nil, sees each
// page. Every test that pages the feed goes through it, and it is bounded:
// more pages than the feed has entries (entries; at least one page), a
// cursor that does not move past the one before it, or a page slower than
// feedPageTimeout fails the test with the cursors followed, never hangs.
func (te *testEngine) pageFeed(reader int64, pageSize int, backward bool, entries int, check func(page int, conn *models.FeedConnection)) []feedItem {
	te.t.Helper()
	way := "forward"
	if backward {
		way = "backward"
	}
	var pages [][]feedItem
	var cursor *string
	var followed []int64 // the keys of the cursors followed, for messages
	for page := 0; ; page++ {
		if page >= max(entries, 1) {
			te.t.Fatalf("feed of %d paged %s by %d: page %d of a feed of %d entries; cursors followed: %v",
				reader, way, pageSize, page+1, entries, followed)
		}
		args := paging.PageArgs{First: &pageSize, After: cursor}
		if backward {
			args = paging.PageArgs{Last: &pageSize, Before: cursor}
		}
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(feedPageTimeout))
		conn, err := te.Feed(ctx, reader, args)
		cancel()
		if err != nil {
			te.t.Fatalf("feed of %d paged %s by %d, page %d: %v; cursors followed: %v", reader, way, pageSize, page+1, err, followed)
		}
		if check != nil {
			check(page, conn)
		}
		items := make([]feedItem, 0, len(conn.Edges))
		for _, edge := range conn.Edges {
			key, _ := paging.DecodeCursor(paging.CursorFeed, edge.Cursor)
			items = append(items, feedItem{Post: edge.Node.PostID, Reposters: edge.Node.ReposterIDs, Key: key})
		}
		pages = append(pages, items)
		more, next := conn.PageInfo.HasNextPage, conn.PageInfo.EndCursor
		if backward {
			more, next = conn.PageInfo.HasPreviousPage, conn.PageInfo.StartCursor
		}
		if !more {
			break
		}
		key := int64(0)
		if next != nil {
			key, _ = paging.DecodeCursor(paging.CursorFeed, *next)
		}
		if last := len(followed) - 1; key == 0 || (last >= 0 && ((!backward && key >= followed[last]) || (backward && key <= followed[last]))) {
			te.t.Fatalf("feed of %d paged %s by %d, page %d claims more from cursor %v (key %d), which does not move past the one before; cursors followed: %v",
				reader, way, pageSize, page+1, next, key, followed)
		}
		followed = append(followed, key)
		cursor = next
	}
	if backward {
		slices.Reverse(pages)
	}
	// A read that found no inbox answered before its rebuild wrote one:
	// what the test does next sees the inbox written.
	te.inboxes.Wait()
	return slices.Concat(pages...)
}

// pulledFeed is the reader's whole feed computed from MySQL alone: the
// truth every mode must agree with.
func (te *testEngine) pulledFeed(reader int64) []feedItem {
	te.t.Helper()
	ctx := context.Background()
	followees, err := te.store.FolloweeIDs(ctx, reader)
	if err != nil {
		te.t.Fatal(err)
	}
	entries, err := te.pull.Entries(ctx, pull.NewView(followees, nil), store.Older, 1<<62, 1<<20)
	if err != nil {
		te.t.Fatal(err)
	}
	return te.itemsWithReposters(followees, entries)
}

// itemsWithReposters are entries as feed items, each entry that lacks
// reposters given the followees who reposted its post as MySQL lists
// them: most recent first, at most MaxReposters.
func (te *testEngine) itemsWithReposters(followees []int64, entries []pull.Entry) []feedItem {
	te.t.Helper()
	posts := make([]int64, len(entries))
	for i, en := range entries {
		posts[i] = en.PostID
	}
	reposts, err := te.store.Reposts(context.Background(), followees, posts)
	if err != nil {
		te.t.Fatal(err)
	}
	by := map[int64][]int64{}
	for _, r := range reposts {
		if o := *r.RepostOfID; len(by[o]) < config.MaxReposters {
			by[o] = append(by[o], r.AuthorID)
		}
	}
	out := make([]feedItem, len(entries))
	for i, en := range entries {
		if en.Reposters == nil {
			en.Reposters = by[en.PostID]
		}
		out[i] = feedItem{Post: en.PostID, Reposters: en.Reposters, Key: en.Key}
	}
	return out
}
