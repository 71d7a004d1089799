package feed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"feedservice/feed/config"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
)

// counted marks the context of the calls whose SQL statements and Redis
// round trips a test counts, so that the engine's background work (the
// hub, the lag watch) is not counted with them.
type counted struct{}

func countedContext() context.Context {
	return context.WithValue(context.Background(), counted{}, true)
}

// readerSQL records the SQL statements, run in a counted context, that ask
// about the reader's own state: the followings table (FollowedAmong,
// FolloweeIDs, Follows) and the celebrities' reposts of given originals
// (Reposts). Other statements (posts and users) are not this test's.
type readerSQL struct{ recorder[string] }

func watchReaderSQL(t *testing.T, db *gorm.DB) *readerSQL {
	t.Helper()
	w := &readerSQL{}
	record := func(tx *gorm.DB) {
		if tx.Statement.Context == nil || tx.Statement.Context.Value(counted{}) == nil {
			return
		}
		sql := tx.Statement.SQL.String()
		if strings.Contains(sql, "followings") || strings.Contains(sql, "repost_of_id IN") {
			w.add(sql)
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register("test:reader-sql", record),
		cb.Row().After("gorm:row").Register("test:reader-sql", record),
		cb.Raw().After("gorm:raw").Register("test:reader-sql", record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// roundTrips counts the Redis round trips made in a counted context: a
// command, or a pipeline (one round trip however many commands it holds).
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(counted{}) != nil {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(counted{}) != nil {
			h.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// readerStateFixture is a reader who follows an ordinary author, a
// reposter and (hybrid) a celebrity, whose feed, posts and reposts of each
// other, all lies within the inbox window.
type readerStateFixture struct {
	te                         *testEngine
	sql                        *readerSQL
	reader, author, other, cel int64
}

func newReaderStateFixture(t *testing.T, mode config.Mode) readerStateFixture {
	t.Helper()
	st := newTestStore(t)
	sql := watchReaderSQL(t, st.DB()) // before the engine runs: gorm's callbacks are not safe to change under it
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.Mode, c.InboxCap, c.CelebrityFollowers = mode, 50, 3 })
	f := readerStateFixture{te: te, sql: sql, reader: te.user("reader"), author: te.user("author"), other: te.user("other"), cel: te.user("celebrity")}
	te.follow(f.reader, f.author)
	te.follow(f.reader, f.other)
	te.follow(f.reader, f.cel)
	te.follow(te.user("fan1"), f.cel)
	te.follow(te.user("fan2"), f.cel) // three followers: a celebrity in hybrid mode
	// Before they post: the celebrity's posts are then not fanned out, and
	// the inbox, built here, learns of its reposts only at read time (a
	// rebuild would write them down as sources).
	te.settle()
	te.readFeed(f.reader, 5)
	var own []int64
	for i := range 6 {
		own = append(own, te.post(f.author, "a"), te.post(f.cel, "c"))
		if i%2 == 0 {
			te.post(f.other, "o")
		}
	}
	te.repost(f.cel, own[0])   // an old post of the author, reposted by the celebrity
	te.repost(f.other, own[1]) // an old post of the celebrity, reposted by an ordinary followee
	te.repost(f.cel, own[4])
	te.settle()
	return f
}

// A warm page, first or deeper within the window, asks MySQL nothing about
// the reader: which celebrities they follow, whether each entry's source is
// still followed, the celebrities' reposts of the candidates. Their followee
// set, read with the inbox check, and the celebrities' outboxes answer.
func TestWarmPageAsksMySQLNothingOfTheReader(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			f := newReaderStateFixture(t, mode)
			te, sql := f.te, f.sql
			trips := &roundTrips{}
			te.redis.AddHook(trips)
			want := te.pulledFeed(f.reader)
			if len(want) < 11 {
				t.Fatalf("the fixture's feed has %d entries; the test wants three pages of 5", len(want))
			}
			te.readFeed(f.reader, 5) // warm: the inbox and the followee set exist

			size := 5
			var cursor *string
			// Every page: the deepest holds posts the celebrity reposted
			// long after, which that page's range of its outbox does not
			// show.
			for page := 1; page == 1 || cursor != nil; page++ {
				trips.n.Store(0)
				conn, err := te.Feed(countedContext(), f.reader, paging.PageArgs{First: &size, After: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for i, edge := range conn.Edges {
					w := want[(page-1)*size+i]
					if edge.Node.PostID != w.Post || !slices.Equal(edge.Node.ReposterIDs, w.Reposters) {
						t.Fatalf("page %d entry %d: post %d reposters %v, want %d %v", page, i, edge.Node.PostID, edge.Node.ReposterIDs, w.Post, w.Reposters)
					}
				}
				if stmts := sql.take(); len(stmts) > 0 {
					t.Errorf("warm page %d ran %d statements about the reader:\n%s", page, len(stmts), strings.Join(stmts, "\n"))
				}
				t.Logf("%s warm page %d: %d Redis round trips", mode, page, trips.n.Load())
				if cursor = conn.PageInfo.EndCursor; !conn.PageInfo.HasNextPage {
					cursor = nil
				}
			}
			// viewerIsFollowing of an active reader: their set answers.
			followed, err := te.FollowedBy(countedContext(), f.reader, []int64{f.author, f.cel, f.reader})
			if err != nil {
				t.Fatal(err)
			}
			if !followed[f.author] || !followed[f.cel] || followed[f.reader] {
				t.Fatalf("FollowedBy = %v", followed)
			}
			if stmts := sql.take(); len(stmts) > 0 {
				t.Errorf("FollowedBy ran %q", stmts)
			}
		})
	}
}

// followingOf is the reader's followee set as Redis holds it, without the
// marker; nil when it is missing.
func followingOf(t *testing.T, te *testEngine, reader int64) []int64 {
	t.Helper()
	members, err := te.redis.SMembers(context.Background(), te.keys.Following(reader)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(members) == 0 {
		return nil
	}
	if !slices.Contains(members, "~") {
		t.Fatalf("followee set %v has no marker", members)
	}
	return depstest.IDs(members)
}

func sortedIDs(ids ...int64) []int64 {
	slices.Sort(ids)
	return ids
}

// follow, unfollow and removeFollower change the set before they return,
// with no worker running; the next page leaves out what the removed
// follow brought, although it is still in the inbox (removeFollower does
// not touch the inbox itself: its worker would), and asks MySQL nothing
// about it.
func TestFollowChangesReachTheSetAtOnce(t *testing.T) {
	t.Parallel()
	f := newReaderStateFixture(t, config.ModePush)
	te := f.te
	te.readFeed(f.reader, 50)
	if got, want := followingOf(t, te, f.reader), sortedIDs(f.author, f.other, f.cel); !slices.Equal(got, want) {
		t.Fatalf("followee set after the rebuild = %v, want %v", got, want)
	}
	// Stop the workers and the dispatcher: only the mutations themselves
	// act from here on.
	te.stop()
	te = startTestEngine(t, te.store, te.redis, te.keys.Prefix(), func(c *config.Config) {
		c.Mode, c.InboxCap, c.FanoutWorkers, c.Dispatch = config.ModePush, 50, 0, false
	})
	newcomer := te.user("newcomer")
	te.follow(f.reader, newcomer)
	if got, want := followingOf(t, te, f.reader), sortedIDs(f.author, f.other, f.cel, newcomer); !slices.Equal(got, want) {
		t.Fatalf("after follow: %v, want %v", got, want)
	}
	te.unfollow(f.reader, f.cel)
	if _, err := te.RemoveFollower(context.Background(), f.other, f.reader); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(inboxAuthorsFor(t, te, f.reader), func(a int64) bool { return a == f.other }) {
		t.Fatal("the removed follow's entries already left the inbox: the test would not see the read leave them out")
	}

	sql := f.sql
	size := 50
	conn, err := te.Feed(countedContext(), f.reader, paging.PageArgs{First: &size})
	if err != nil {
		t.Fatal(err)
	}
	want := te.pulledFeed(f.reader)
	if len(conn.Edges) != len(want) {
		t.Fatalf("page has %d entries, MySQL's feed %d", len(conn.Edges), len(want))
	}
	for i, edge := range conn.Edges {
		if edge.Node.PostID != want[i].Post || !slices.Equal(edge.Node.ReposterIDs, want[i].Reposters) {
			t.Fatalf("entry %d: post %d reposters %v, want %d %v", i, edge.Node.PostID, edge.Node.ReposterIDs, want[i].Post, want[i].Reposters)
		}
	}
	if stmts := sql.take(); len(stmts) > 0 {
		t.Errorf("the page ran %q", stmts)
	}
	if got, want := followingOf(t, te, f.reader), sortedIDs(f.author, newcomer); !slices.Equal(got, want) {
		t.Fatalf("after unfollow and removeFollower: %v, want %v", got, want)
	}
}

// inboxAuthorsFor lists the authors of the posts in the reader's inbox.
func inboxAuthorsFor(t *testing.T, te *testEngine, reader int64) []int64 {
	t.Helper()
	ctx := context.Background()
	members, err := te.redis.ZRangeByScore(ctx, te.keys.Inbox(reader), &redis.ZRangeBy{Min: "0", Max: "+inf"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range members {
		ids = append(ids, depstest.IDs(strings.Split(m, ","))...)
	}
	posts, err := te.store.PostsByIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, p := range posts {
		out = append(out, p.AuthorID)
	}
	return out
}

// The set is swapped in with the inbox, with its TTL, refreshed with it on
// read; a set that outlived its inbox is replaced by the rebuild.
func TestFollowingLivesWithTheInbox(t *testing.T) {
	t.Parallel()
	f := newReaderStateFixture(t, config.ModeHybrid)
	te := f.te
	ctx := context.Background()
	// The fixture's first read built the inbox, and the set with it.
	inboxTTL, setTTL := te.redis.PTTL(ctx, te.keys.Inbox(f.reader)).Val(), te.redis.PTTL(ctx, te.keys.Following(f.reader)).Val()
	if setTTL <= 0 || inboxTTL-setTTL > time.Second || setTTL-inboxTTL > time.Second {
		t.Fatalf("followee set TTL %v, inbox TTL %v", setTTL, inboxTTL)
	}
	// Refreshed on read.
	te.redis.PExpire(ctx, te.keys.Following(f.reader), time.Minute)
	te.readFeed(f.reader, 5)
	if ttl := te.redis.PTTL(ctx, te.keys.Following(f.reader)).Val(); ttl < te.cfg.InboxTTL-time.Minute {
		t.Fatalf("followee set TTL after a read = %v, want about %v", ttl, te.cfg.InboxTTL)
	}
	// The inbox is evicted alone, and the set holds a stale member: the
	// rebuild replaces it with MySQL's followees.
	stranger := te.user("stranger")
	te.redis.SAdd(ctx, te.keys.Following(f.reader), stranger)
	te.redis.Del(ctx, te.keys.Inbox(f.reader), te.keys.InboxSources(f.reader))
	rebuilds := lcCount(te.metrics.Rebuilds)
	te.readFeed(f.reader, 5)
	if lcCount(te.metrics.Rebuilds) != rebuilds+1 {
		t.Fatal("the inbox was not rebuilt")
	}
	if got, want := followingOf(t, te, f.reader), sortedIDs(f.author, f.other, f.cel); !slices.Equal(got, want) {
		t.Fatalf("followee set after the rebuild = %v, want %v", got, want)
	}
}

// A write of the followee set that comes late, its writer having stalled
// between learning the relation (a commit, a read of MySQL) and writing it
// while a newer change went through, does not stay: the writer checks
// MySQL after its write.
func TestLateFollowingWriteIsUndone(t *testing.T) {
	t.Parallel()
	f := newReaderStateFixture(t, config.ModePush)
	te := f.te
	ctx := context.Background()
	if !slices.Contains(followingOf(t, te, f.reader), f.author) {
		t.Fatal("the fixture's reader does not follow its author in the set")
	}
	// An unfollow's write arriving after a follow that came later.
	if err := te.inboxes.SettleFollowing(ctx, f.reader, f.author, false); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(followingOf(t, te, f.reader), f.author) {
		t.Fatal("a late unfollow write stayed in the followee set; MySQL says the reader follows the author")
	}
	// A follow's write arriving after an unfollow that came later.
	if _, err := te.Unfollow(ctx, f.reader, f.author); err != nil {
		t.Fatal(err)
	}
	if err := te.inboxes.SettleFollowing(ctx, f.reader, f.author, true); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(followingOf(t, te, f.reader), f.author) {
		t.Fatal("a late follow write stayed in the followee set; MySQL says the reader does not follow the author")
	}
}

// A missing set (evicted while the inbox lives) and a flushed Redis: MySQL
// answers, the reads stay right, and the set comes back.
func TestMissingFollowingFallsBackToMySQL(t *testing.T) {
	t.Parallel()
	f := newReaderStateFixture(t, config.ModeHybrid)
	te := f.te
	ctx := context.Background()
	want := te.pulledFeed(f.reader)
	check := func(when string) {
		t.Helper()
		if got := te.readFeed(f.reader, 4); !slices.EqualFunc(got, want, func(a, b feedItem) bool {
			return a.Post == b.Post && slices.Equal(a.Reposters, b.Reposters)
		}) {
			t.Fatalf("%s: feed %v, want %v", when, got, want)
		}
		followed, err := te.FollowedBy(ctx, f.reader, []int64{f.author, f.cel, f.reader})
		if err != nil || !followed[f.author] || !followed[f.cel] || followed[f.reader] {
			t.Fatalf("%s: FollowedBy = %v, %v", when, followed, err)
		}
	}
	check("cold")

	// Evicted alone: the read answers from MySQL and puts the set back.
	te.redis.Del(ctx, te.keys.Following(f.reader))
	fallbacks := lcCount(te.metrics.FollowingFallback)
	followed, err := te.FollowedBy(ctx, f.reader, []int64{f.cel})
	if err != nil || !followed[f.cel] {
		t.Fatalf("FollowedBy with no set = %v, %v", followed, err)
	}
	check("set evicted")
	if lcCount(te.metrics.FollowingFallback) < fallbacks+2 {
		t.Fatal("the missing set was not counted as answered by MySQL")
	}
	if got := followingOf(t, te, f.reader); !slices.Equal(got, sortedIDs(f.author, f.other, f.cel)) {
		t.Fatalf("followee set after the read = %v", got)
	}

	// Redis loses everything; a follow change meanwhile finds no set.
	if _, err := testenv.DeletePrefix(ctx, te.redis, te.keys.Prefix()); err != nil {
		t.Fatal(err)
	}
	te.unfollow(f.reader, f.other)
	te.settle()
	want = te.pulledFeed(f.reader)
	check("after a flush")

	// Redis fails on the set: MySQL answers.
	te.redis.AddHook(failScriptsOn(te.keys.Following(f.reader)))
	te.unfollow(f.reader, f.author)
	fallbacks = lcCount(te.metrics.FollowingFallback)
	followed, err = te.FollowedBy(ctx, f.reader, []int64{f.author, f.cel})
	if err != nil || followed[f.author] || !followed[f.cel] {
		t.Fatalf("FollowedBy with Redis failing = %v, %v", followed, err)
	}
	if lcCount(te.metrics.FollowingFallback) <= fallbacks {
		t.Fatal("FollowedBy with the set's scripts failing was not counted as answered by MySQL")
	}
}

// failScriptsOn fails the scripts whose first key is the given one, as a
// Redis that is away would.
type failScriptsOn string

func (h failScriptsOn) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h failScriptsOn) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// EVAL(SHA) script numkeys key...
		if args := cmd.Args(); len(args) > 3 && (args[0] == "evalsha" || args[0] == "eval") {
			if key, ok := args[3].(string); ok && key == string(h) {
				err := errors.New("connection refused")
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}

func (h failScriptsOn) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
