package feed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// countingLoader loads "value of id" for each id, slowly, counting the keys
// it was asked for.
type countingLoader struct {
	keys  atomic.Int64
	calls atomic.Int64
	delay time.Duration
}

func (l *countingLoader) load(_ context.Context, ids []int64) (map[int64]*string, error) {
	l.calls.Add(1)
	l.keys.Add(int64(len(ids)))
	time.Sleep(l.delay)
	out := make(map[int64]*string, len(ids))
	for _, id := range ids {
		v := fmt.Sprintf("value of %d", id)
		out[id] = &v
	}
	return out, nil
}

func strBytes(s *string) int { return len(*s) }

func newStringTier(t *testing.T, entries int, bytes int64, ttl time.Duration) *localTier[*string] {
	t.Helper()
	tier := newLocalTier(metrics.KindPost, entries, bytes, ttl, strBytes, metrics.New())
	t.Cleanup(tier.stop)
	return tier
}

// A hot key is loaded once however many readers ask for it at once, and
// a page's misses are loaded in one batch.
func TestLocalTierFillsOncePerKey(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, time.Minute)
	loader := &countingLoader{delay: 50 * time.Millisecond}
	ids := []int64{1, 2, 3, 4, 5}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			got, err := tier.getMany(context.Background(), ids, loader.load)
			if err == nil && (len(got) != len(ids) || *got[3] != "value of 3") {
				err = fmt.Errorf("got %d values", len(got))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := loader.keys.Load(); n != int64(len(ids)) {
		t.Fatalf("100 readers of %d keys loaded %d keys in %d calls, want each key once", len(ids), n, loader.calls.Load())
	}
	if got := tier.cached(ids); len(got) != len(ids) {
		t.Fatalf("the tier holds %d of the %d keys it filled", len(got), len(ids))
	}
}

// The tier holds at most its entries and at most its bytes.
func TestLocalTierBounds(t *testing.T) {
	fill := func(tier *localTier[*string], n int, size int) {
		for i := range n {
			v := strings.Repeat("x", size)
			tier.getMany(context.Background(), []int64{int64(i)}, func(context.Context, []int64) (map[int64]*string, error) {
				return map[int64]*string{int64(i): &v}, nil
			})
		}
		tier.cache.CleanUp()
	}
	byEntries := newStringTier(t, 100, 1<<30, time.Minute)
	fill(byEntries, 1000, 10)
	if n := byEntries.cache.EstimatedSize(); n > 100 || n == 0 {
		t.Fatalf("a tier of 100 entries holds %d", n)
	}
	byBytes := newStringTier(t, 100_000, 10_000, time.Minute)
	fill(byBytes, 1000, 1000)
	if n := byBytes.cache.EstimatedSize(); n > 10 || n == 0 {
		t.Fatalf("a tier of 10,000 bytes holds %d values of 1,000 bytes", n)
	}
}

// A value is loaded again once the tier's TTL has passed since its fill.
func TestLocalTierRevalidatesAfterTTL(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, 100*time.Millisecond)
	loader := &countingLoader{}
	read := func() { tier.getMany(context.Background(), []int64{7}, loader.load) }
	read()
	read()
	if n := loader.calls.Load(); n != 1 {
		t.Fatalf("two reads within the TTL loaded %d times, want 1", n)
	}
	time.Sleep(200 * time.Millisecond)
	read()
	if n := loader.calls.Load(); n != 2 {
		t.Fatalf("a read after the TTL loaded %d times in all, want 2", n)
	}
}

// A fill that began before a drop does not put its (perhaps older) value
// in the tier.
func TestLocalTierDropDuringFill(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, time.Minute)
	started, release := make(chan struct{}), make(chan struct{})
	go tier.getMany(context.Background(), []int64{9}, func(context.Context, []int64) (map[int64]*string, error) {
		close(started)
		<-release
		old := "old"
		return map[int64]*string{9: &old}, nil
	})
	<-started
	tier.drop([]int64{9})
	close(release)
	waitFor(t, "the first fill to end", func() bool {
		tier.mu.Lock()
		defer tier.mu.Unlock()
		return len(tier.flights) == 0
	})
	loader := &countingLoader{}
	got, err := tier.getMany(context.Background(), []int64{9}, loader.load)
	if err != nil {
		t.Fatal(err)
	}
	if *got[9] != "value of 9" {
		t.Fatalf("a read after the drop got %q, from the fill that began before it", *got[9])
	}
}

// Two instances on one Redis: a profile change, a count change and a delete
// made on one reach the other's local tier by message, long before the
// tier's TTL (an hour here) would.
func TestLocalTierInvalidatedAcrossInstances(t *testing.T) {
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	long := func(c *config.Config) { c.LocalCacheTTL = time.Hour }
	a := startTestEngine(t, st, rdb, prefix, long)
	b := startTestEngine(t, st, rdb, prefix, long)
	waitFor(t, "both hubs on the invalidate channel", func() bool {
		return numSub(t, a, a.keys.CacheInvalidateChannel()) == 2
	})
	ctx := context.Background()
	author, reader := a.user("author"), a.user("reader")
	post := a.post(author, "hello")

	user := func(e *testEngine, id int64) *models.User {
		users, err := e.Users(ctx, []int64{id})
		if err != nil {
			t.Fatal(err)
		}
		return users[0]
	}
	postOn := func(e *testEngine, id int64) *models.Post {
		posts, err := e.Posts(ctx, []int64{id})
		if err != nil {
			t.Fatal(err)
		}
		return posts[0]
	}
	// b caches the author and the post (a read whose fill crosses a's own
	// messages does not prime the tier, so b reads until one does).
	if u := user(b, author); u.PostCount != 1 || u.DisplayName != "author" {
		t.Fatalf("b reads the author as %+v", u)
	}
	waitFor(t, "b's local tier to hold the author and the post", func() bool {
		user(b, author)
		postOn(b, post)
		return len(b.CachedUsers([]int64{author})) == 1 && len(b.CachedPosts([]int64{post})) == 1
	})

	name := "The Author"
	if _, err := a.UpdateProfile(ctx, author, &name, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the profile change on b", func() bool { return user(b, author).DisplayName == name })

	a.follow(reader, author)
	waitFor(t, "the follower count on b", func() bool { return user(b, author).FollowerCount == 1 })

	a.deletePost(author, post)
	waitFor(t, "the delete on b", func() bool { return postOn(b, post).Deleted() })
	waitFor(t, "the post count on b", func() bool { return user(b, author).PostCount == 0 })
}

// An instance whose pub/sub connection dropped may have missed messages:
// when it is subscribed again, it forgets every local copy.
func TestLocalTierForgetsAllAfterResubscribing(t *testing.T) {
	server := testenv.StartRedis(t) // its own: the test kills pub/sub clients
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, newTestStore(t), rdb, "resub:", func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	author := te.user("author")
	waitFor(t, "the local tier to hold the author", func() bool {
		if _, err := te.Users(ctx, []int64{author}); err != nil {
			t.Fatal(err)
		}
		return len(te.CachedUsers([]int64{author})) == 1
	})
	if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the local copy to be forgotten once the hub is back", func() bool {
		return len(te.CachedUsers([]int64{author})) == 0
	})
}

// With the tier off, reads are still right, and nothing is cached.
func TestLocalTierOff(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheMaxEntries = -1 })
	ctx := context.Background()
	author := te.user("author")
	te.post(author, "one")
	users, err := te.Users(ctx, []int64{author, 0})
	if err != nil || users[0] == nil || users[0].PostCount != 1 || users[1] != nil {
		t.Fatalf("users %v, %v", users, err)
	}
	te.post(author, "two")
	users, err = te.Users(ctx, []int64{author})
	if err != nil || users[0].PostCount != 2 {
		t.Fatalf("after a second post: %+v, %v", users[0], err)
	}
	if got := te.CachedUsers([]int64{author}); len(got) != 0 {
		t.Fatalf("the tier is off but holds %d users", len(got))
	}
}

// The instance that made a change reads it at once through its local tier,
// each change checked alone: counts, a repost count, a profile, a delete.
func TestLocalTierOwnWrites(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	author, fan := te.user("author"), te.user("fan")
	post := te.post(author, "one")
	read := func() (*models.User, *models.User, *models.Post) {
		t.Helper()
		users, err := te.Users(ctx, []int64{author, fan})
		if err != nil {
			t.Fatal(err)
		}
		posts, err := te.Posts(ctx, []int64{post})
		if err != nil {
			t.Fatal(err)
		}
		return users[0], users[1], posts[0]
	}
	name := "Fan"
	steps := []struct {
		what   string
		change func()
		holds  func(a, f *models.User, p *models.Post) bool
	}{
		{"a post", func() { te.post(author, "two") }, func(a, _ *models.User, _ *models.Post) bool { return a.PostCount == 2 }},
		{"a follow", func() { te.follow(fan, author) }, func(a, f *models.User, _ *models.Post) bool {
			return a.FollowerCount == 1 && f.FollowingCount == 1
		}},
		{"a repost", func() { te.repost(fan, post) }, func(_, f *models.User, p *models.Post) bool {
			return p.RepostCount == 1 && f.PostCount == 1
		}},
		{"a profile change", func() {
			if _, err := te.UpdateProfile(ctx, fan, &name, nil); err != nil {
				t.Fatal(err)
			}
		}, func(_, f *models.User, _ *models.Post) bool { return f.DisplayName == name }},
		{"an unfollow", func() { te.unfollow(fan, author) }, func(a, f *models.User, _ *models.Post) bool {
			return a.FollowerCount == 0 && f.FollowingCount == 0
		}},
		{"a delete", func() { te.deletePost(author, post) }, func(a, _ *models.User, p *models.Post) bool {
			return p.Deleted() && a.PostCount == 1
		}},
	}
	for _, s := range steps {
		// Fill the tier, past the messages of the change before.
		waitFor(t, "the tier to hold the users and the post", func() bool {
			read()
			return len(te.CachedUsers([]int64{author, fan})) == 2 && len(te.CachedPosts([]int64{post})) == 1
		})
		s.change()
		if a, f, p := read(); !s.holds(a, f, p) {
			t.Fatalf("right after %s: author %+v, fan %+v, post %+v", s.what, a, f, p)
		}
	}
}
