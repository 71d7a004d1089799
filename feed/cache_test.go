package feed

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// sqlCountKey marks the contexts whose SQL statements ctSQL counts, so that
// the engine's own background statements (the dispatcher's polls) do not.
type sqlCountKey struct{}

// ctCounter counts the SQL statements run under contexts it marked.
type ctCounter struct{ n atomic.Int64 }

// ctSQL registers a counter on st's gorm callbacks.
func ctSQL(t testing.TB, st *store.Store) *ctCounter {
	t.Helper()
	c := &ctCounter{}
	count := func(db *gorm.DB) {
		if ctx := db.Statement.Context; ctx != nil && ctx.Value(sqlCountKey{}) == c {
			c.n.Add(1)
		}
	}
	cb := st.DB().Callback()
	name := "cachetest:count"
	for _, err := range []error{
		cb.Query().After("gorm:query").Register(name, count),
		cb.Row().After("gorm:row").Register(name, count),
		cb.Raw().After("gorm:raw").Register(name, count),
		cb.Create().After("gorm:create").Register(name, count),
		cb.Update().After("gorm:update").Register(name, count),
		cb.Delete().After("gorm:delete").Register(name, count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// ctx is a context whose statements c counts.
func (c *ctCounter) ctx() context.Context {
	return context.WithValue(context.Background(), sqlCountKey{}, c)
}

func ctLookups(te *testEngine, kind, result string) float64 {
	return lcCount(te.metrics.CacheLookups.WithLabelValues(metrics.TierRedis, kind, result))
}

// ctQuiet is an engine whose copies only its mutations refresh: no
// dispatcher, no workers. Its local tier is off: these tests are of the
// Redis copies under it (localtier_test.go has the local tier's).
func ctQuiet(c *config.Config) { c.Dispatch, c.FanoutWorkers, c.LocalCacheMaxEntries = false, 0, -1 }

// ctOne reads the post or user id through read (the engine's Posts or
// Users), as a request would.
func ctOne[T any](t testing.TB, read func(context.Context, []int64) ([]*T, error), id int64) *T {
	t.Helper()
	got, err := read(context.Background(), []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

func ctPost(t testing.TB, te *testEngine, id int64) *models.Post {
	t.Helper()
	return ctOne(t, te.Posts, id)
}

func ctUser(t testing.TB, te *testEngine, id int64) *models.User {
	t.Helper()
	return ctOne(t, te.Users, id)
}

// ctSameUser compares what a page shows of a user: the cached copy against
// the row in MySQL.
func ctSameUser(t testing.TB, te *testEngine, stage string, id int64) *models.User {
	t.Helper()
	got := ctUser(t, te, id)
	want, err := te.store.UserByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want.PasswordHash, want.LastActiveAt = "", time.Time{}
	if got == nil || *got != *want {
		t.Fatalf("%s: user %d reads\n %+v\nMySQL holds\n %+v", stage, id, got, want)
	}
	return got
}

func ctSamePost(t testing.TB, te *testEngine, stage string, id int64) *models.Post {
	t.Helper()
	got := ctPost(t, te, id)
	rows, err := te.store.PostsByIDs(context.Background(), []int64{id})
	if err != nil || len(rows) != 1 {
		t.Fatal(err)
	}
	want := rows[0]
	if got == nil || !ctPostEqual(got, want) {
		t.Fatalf("%s: post %d reads\n %+v\nMySQL holds\n %+v", stage, id, got, want)
	}
	return got
}

func ctPostEqual(a, b *models.Post) bool {
	same := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	sameID := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.ID == b.ID && a.AuthorID == b.AuthorID && a.Body == b.Body && sameID(a.RepostOfID, b.RepostOfID) &&
		a.RepostCount == b.RepostCount && a.CreatedAt.Equal(b.CreatedAt) && same(a.DeletedAt, b.DeletedAt) && a.Version == b.Version
}

// Warm reads of posts and users run no SQL and hit Redis; the first read
// fills the copies with one query per kind, and one for the lists of
// reposts of the posts that have some.
func TestCacheWarmReadsRunNoSQL(t *testing.T) {
	t.Parallel()
	// The callbacks are registered before the engine's goroutines start
	// using the store: gorm compiles them without a lock.
	st := newTestStore(t)
	sql := ctSQL(t, st)
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix, ctQuiet)
	a, b := te.user("warm_a"), te.user("warm_b")
	p1 := te.post(a, "one")
	p2 := te.post(b, "two")
	rp := te.repost(a, p2)
	ids := []int64{p1, p2, rp}
	testenv.DeletePrefix(context.Background(), te.redis, te.cfg.KeyPrefix+"cache:")

	ctx := sql.ctx()
	if _, err := te.Posts(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Users(ctx, []int64{a, b}); err != nil {
		t.Fatal(err)
	}
	if n := sql.n.Load(); n != 3 {
		t.Fatalf("the cold reads ran %d SQL statements, want 3 (one per kind, and the reposts of the reposted post)", n)
	}
	hits := ctLookups(te, metrics.KindPost, "hit") + ctLookups(te, metrics.KindUser, "hit")
	sql.n.Store(0)
	posts, err := te.Posts(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	users, err := te.Users(ctx, []int64{a, b, a})
	if err != nil {
		t.Fatal(err)
	}
	if n := sql.n.Load(); n != 0 {
		t.Fatalf("the warm reads ran %d SQL statements, want 0", n)
	}
	if got := ctLookups(te, metrics.KindPost, "hit") + ctLookups(te, metrics.KindUser, "hit") - hits; got != 5 {
		t.Fatalf("the warm reads counted %v hits, want 5 (3 posts, 2 users)", got)
	}
	if posts[2].RepostOfID == nil || *posts[2].RepostOfID != p2 || posts[0].Body != "one" || users[2] != users[0] && users[2].Username != "warm_a" {
		t.Fatalf("warm reads: posts %+v users %+v", posts, users)
	}
	for _, id := range ids {
		ctSamePost(t, te, "warm", id)
	}
	for _, id := range []int64{a, b} {
		if u := ctSameUser(t, te, "warm", id); u.PasswordHash != "" {
			t.Fatal("a cached user carries its password hash")
		}
	}
	raw, err := te.redis.Get(context.Background(), te.keys.CachedUserInfo(a)).Result()
	if err != nil {
		t.Fatal(err)
	}
	full, _ := te.store.UserByID(context.Background(), a)
	if strings.Contains(raw, full.PasswordHash) {
		t.Fatal("the user's Redis copy holds the password hash")
	}
}

// The instance that served a mutation reads its own write at once: counts,
// a profile, a repost count, a deletion's tombstone, the read marker. No
// dispatcher runs, so only the mutation's own refresh can bring them.
func TestCacheOwnWrites(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, ctQuiet)
	ctx := context.Background()
	a, b := te.user("own_a"), te.user("own_b")
	ctUser(t, te, a)
	ctUser(t, te, b) // warm copies, which every step below makes stale

	if _, err := te.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if ctSameUser(t, te, "follow", b).FollowerCount != 1 || ctSameUser(t, te, "follow", a).FollowingCount != 1 {
		t.Fatal("follow: counts not moved")
	}
	p := te.post(b, "a post")
	ctPost(t, te, p)
	if ctSameUser(t, te, "post", b).PostCount != 1 {
		t.Fatal("post: count not moved")
	}
	rp := te.repost(a, p)
	if ctSamePost(t, te, "repost", p).RepostCount != 1 || ctSameUser(t, te, "repost", a).PostCount != 1 {
		t.Fatal("repost: counts not moved")
	}
	ctPost(t, te, rp)
	if err := te.DeletePost(ctx, a, rp); err != nil {
		t.Fatal(err)
	}
	if !ctSamePost(t, te, "delete repost", rp).Deleted() || ctSamePost(t, te, "delete repost", p).RepostCount != 0 ||
		ctSameUser(t, te, "delete repost", a).PostCount != 0 {
		t.Fatal("delete repost: tombstone or counts missing")
	}
	if err := te.DeletePost(ctx, b, p); err != nil {
		t.Fatal(err)
	}
	if !ctSamePost(t, te, "delete", p).Deleted() {
		t.Fatal("delete: no tombstone")
	}
	name, bio := "Own B", "a new bio"
	if _, err := te.UpdateProfile(ctx, b, &name, &bio); err != nil {
		t.Fatal(err)
	}
	if u := ctSameUser(t, te, "profile", b); u.DisplayName != name || u.Bio != bio {
		t.Fatal("profile: not changed")
	}
	if _, err := te.Unfollow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	ctSameUser(t, te, "unfollow", a)
	ctSameUser(t, te, "unfollow", b)
	if _, err := te.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := te.RemoveFollower(ctx, b, a); err != nil {
		t.Fatal(err)
	}
	if ctSameUser(t, te, "remove follower", b).FollowerCount != 0 || ctSameUser(t, te, "remove follower", a).FollowingCount != 0 {
		t.Fatal("removeFollower: counts not moved")
	}
	// The read marker: markFeedRead's count comes from the marker it moved.
	if _, err := te.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	q := te.post(b, "unread")
	before := ctUser(t, te, a).FeedReadKey
	if _, err := te.MarkFeedRead(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	if u := ctSameUser(t, te, "mark read", a); u.FeedReadKey == before || u.FeedReadKey != q {
		t.Fatalf("markFeedRead: the copy's marker is %d, want %d", u.FeedReadKey, q)
	}
}

// A fill that read a row before a mutation and writes after the
// mutation's refresh loses: the copy keeps the newer version.
func TestCacheSetIfNewerRefusesOlder(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, ctQuiet)
	ctx := context.Background()
	a := te.user("race_a")
	p := te.post(a, "raced")
	stale, err := te.store.PostsByIDs(ctx, []int64{p})
	if err != nil {
		t.Fatal(err)
	}
	staleUsers, err := te.store.UsersByIDs(ctx, []int64{a})
	if err != nil {
		t.Fatal(err)
	}
	if err := te.DeletePost(ctx, a, p); err != nil {
		t.Fatal(err)
	}
	// The late fill of the read that began before the deletion.
	writes := append([]cache.Write{te.cache.PostWrite(stale[0])}, te.cache.UserWrites(staleUsers[0])...)
	if err := te.cache.WriteCached(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if !ctSamePost(t, te, "after a stale fill", p).Deleted() {
		t.Fatal("a stale fill overwrote the tombstone")
	}
	if ctSameUser(t, te, "after a stale fill", a).PostCount != 0 {
		t.Fatal("a stale fill overwrote the post count")
	}
	// A newer version replaces an older one.
	newer := *stale[0]
	newer.Version, newer.Body = 99, "newer"
	if err := te.cache.WriteCached(ctx, []cache.Write{te.cache.PostWrite(&newer)}); err != nil {
		t.Fatal(err)
	}
	if got := ctPost(t, te, p); got.Body != "newer" || got.Version != 99 {
		t.Fatalf("a newer version did not replace the copy: %+v", got)
	}
	// Versions past one varint byte compare right in the script.
	newer.Version, newer.Body = 300, "300"
	te.cache.WriteCached(ctx, []cache.Write{te.cache.PostWrite(&newer)})
	newer.Version, newer.Body = 299, "299"
	te.cache.WriteCached(ctx, []cache.Write{te.cache.PostWrite(&newer)})
	if got := ctPost(t, te, p); got.Version != 300 {
		t.Fatalf("version 299 replaced 300: %+v", got)
	}
}

// A process that dies between a commit and its refresh leaves stale copies
// only until the dispatcher handles the change's event.
func TestCacheRepairedByDispatcher(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	ctx := context.Background()
	a, b := te.user("died_a"), te.user("died_b")
	p := te.post(b, "to delete")
	te.settle()
	ctUser(t, te, a)
	ctUser(t, te, b)
	ctPost(t, te, p)
	now := time.Now().UTC().Truncate(time.Millisecond)
	// The mutations as the store commits them, with no refresh after.
	if _, err := te.store.Follow(ctx, a, b, te.ids.Next(), now); err != nil {
		t.Fatal(err)
	}
	if _, err := te.store.DeletePost(ctx, p, b, now); err != nil {
		t.Fatal(err)
	}
	name := "Died B"
	if _, err := te.store.UpdateProfile(ctx, b, models.ProfileChange{DisplayName: &name}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := te.store.MoveFeedReadKey(ctx, a, 12345, now); err != nil {
		t.Fatal(err)
	}
	te.stream.Poke()
	te.settle()
	if !ctSamePost(t, te, "after the dispatcher", p).Deleted() {
		t.Fatal("no tombstone after the dispatcher")
	}
	if u := ctSameUser(t, te, "after the dispatcher", b); u.DisplayName != name || u.FollowerCount != 1 || u.PostCount != 0 {
		t.Fatalf("user b after the dispatcher: %+v", u)
	}
	if u := ctSameUser(t, te, "after the dispatcher", a); u.FollowingCount != 1 || u.FeedReadKey != 12345 {
		t.Fatalf("user a after the dispatcher: %+v", u)
	}
}

// Losing the copies (a flush, an eviction) refills them from MySQL on the
// next read.
func TestCacheRefillsAfterFlush(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheMaxEntries = -1 }) // the Redis tier's misses are counted
	a, b := te.user("flush_a"), te.user("flush_b")
	te.follow(a, b)
	p := te.post(b, "kept")
	te.settle()
	ctSamePost(t, te, "warm", p)
	ctSameUser(t, te, "warm", b)
	if n := ftFlushPrefix(t, te); n == 0 {
		t.Fatal("nothing flushed")
	}
	misses := ctLookups(te, metrics.KindPost, "miss") + ctLookups(te, metrics.KindUser, "miss")
	ctSamePost(t, te, "after the flush", p)
	ctSameUser(t, te, "after the flush", b)
	if got := ctLookups(te, metrics.KindPost, "miss") + ctLookups(te, metrics.KindUser, "miss") - misses; got != 2 {
		t.Fatalf("reads after the flush counted %v misses, want 2", got)
	}
	for _, key := range []string{te.keys.CachedPost(p), te.keys.CachedUserInfo(b), te.keys.CachedUserCounts(b)} {
		if te.redis.Exists(context.Background(), key).Val() != 1 {
			t.Fatalf("%s was not refilled", key)
		}
	}
	// Mid-run: the feed and the counts stay right after another flush.
	ftFlushPrefix(t, te)
	q := te.post(b, "after the flush")
	te.settle()
	if u := ctSameUser(t, te, "posted after the flush", b); u.PostCount != 2 {
		t.Fatalf("post count %d after the flush, want 2", u.PostCount)
	}
	if got := te.readFeed(a, 10); len(got) != 2 || got[0].Post != q {
		t.Fatalf("feed after the flush: %v", got)
	}
}

// With Redis down, reads of posts and users come from MySQL, and count
// the failure.
func TestCacheRedisDownFallsBack(t *testing.T) {
	t.Parallel()
	server := testenv.StartRedis(t)
	st := newTestStore(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:       []string{server.Addr()},
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, st, rdb, testenv.Name("t")+":", ctQuiet)
	a := te.user("down_a")
	p := te.post(a, "read while Redis is down")
	ctSamePost(t, te, "Redis up", p)
	server.Kill()
	errs := ctLookups(te, metrics.KindPost, "error") + ctLookups(te, metrics.KindUser, "error")
	ctSamePost(t, te, "Redis down", p)
	ctSameUser(t, te, "Redis down", a)
	if got := ctLookups(te, metrics.KindPost, "error") + ctLookups(te, metrics.KindUser, "error") - errs; got != 2 {
		t.Fatalf("reads with Redis down counted %v errors, want 2", got)
	}
	// A mutation commits and answers; its refresh failing is only logged.
	q := te.post(a, "posted while Redis is down")
	if u := ctSameUser(t, te, "Redis down, after a post", a); u.PostCount != 2 {
		t.Fatalf("post count %d, want 2", u.PostCount)
	}
	ctSamePost(t, te, "Redis down, after a post", q)

	// Redis comes back, empty: the copies fill again. (Back, too, so that
	// the client's redial goroutine ends before the leak check.)
	server.Start()
	waitForRedis(t, rdb)
	ctSamePost(t, te, "Redis back", q)
	if te.redis.Exists(context.Background(), te.keys.CachedPost(q)).Val() != 1 {
		t.Fatal("the post's copy was not refilled after Redis came back")
	}
}

// Another instance, on the same Redis, sees a deletion, an unfollow and a
// profile change as soon as the mutation answers: both read the copy the
// mutation wrote. Neither runs a dispatcher, so only that write can bring it.
func TestCacheOtherInstanceSeesChangeAtOnce(t *testing.T) {
	t.Parallel()
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	one := startTestEngine(t, st, rdb, prefix, ctQuiet)
	two := startTestEngine(t, st, rdb, prefix, ctQuiet)
	ctx := context.Background()
	a, b := one.user("two_a"), one.user("two_b")
	one.follow(a, b)
	p := one.post(b, "seen on two")
	if ctPost(t, two, p).Deleted() || ctUser(t, two, b).FollowerCount != 1 {
		t.Fatal("instance two: not warm")
	}
	if err := one.DeletePost(ctx, b, p); err != nil {
		t.Fatal(err)
	}
	if !ctSamePost(t, two, "delete on one", p).Deleted() {
		t.Fatal("instance two still shows the deleted post")
	}
	one.unfollow(a, b)
	if ctSameUser(t, two, "unfollow on one", b).FollowerCount != 0 {
		t.Fatal("instance two still counts the follower")
	}
	bio := "changed on one"
	if _, err := one.UpdateProfile(ctx, b, nil, &bio); err != nil {
		t.Fatal(err)
	}
	if ctSameUser(t, two, "profile on one", b).Bio != bio {
		t.Fatal("instance two shows the old bio")
	}
}

// A post's copy lists its live reposts up to RepostListMax of them, and
// none past it (such an entry is placed from MySQL); the list follows a
// repost and the deletion of one at once.
func TestCacheRepostListAtItsBound(t *testing.T) {
	t.Parallel()
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { ctQuiet(c); c.RepostListMax = 2 })
	author := te.user("listed")
	p := te.post(author, "reposted")
	var fans, reposts []int64
	for i := range 3 {
		fans = append(fans, te.user(fmt.Sprintf("fan%d", i)))
		reposts = append(reposts, te.repost(fans[i], p))
		got := ctPost(t, te, p)
		kept := i+1 <= te.cfg.RepostListMax
		if got.RepostsKept != kept || (kept && (len(got.Reposts) != i+1 || got.Reposts[i].ID != reposts[i])) {
			t.Fatalf("after %d reposts (bound %d): kept %v, list %+v; want kept %v, the reposts in order", i+1, te.cfg.RepostListMax, got.RepostsKept, got.Reposts, kept)
		}
	}
	if err := te.DeletePost(context.Background(), fans[2], reposts[2]); err != nil {
		t.Fatal(err)
	}
	if got := ctPost(t, te, p); !got.RepostsKept || len(got.Reposts) != 2 {
		t.Fatalf("after a repost's deletion, back at the bound: kept %v, list %+v; want the 2 left", got.RepostsKept, got.Reposts)
	}
}
