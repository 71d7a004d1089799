package feed

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// Two instances on one Redis: a profile change, a count change and a delete
// made on one reach the other's local tier by message, long before the
// tier's TTL (an hour here) would.
func TestLocalTierInvalidatedAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := startTwoEngines(t, func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	author, reader := a.user("author"), a.user("reader")
	post := a.post(author, "hello")

	// b caches the author and the post (a read whose fill crosses a's own
	// messages does not prime the tier, so b reads until one does).
	if u := ctUser(t, b, author); u.PostCount != 1 || u.DisplayName != "author" {
		t.Fatalf("b reads the author as %+v", u)
	}
	testenv.WaitFor(t, "b's local tier to hold the author and the post", func() bool {
		ctUser(t, b, author)
		ctPost(t, b, post)
		return len(b.CachedUsers([]int64{author})) == 1 && len(b.CachedPosts([]int64{post})) == 1
	})

	name := "The Author"
	if _, err := a.UpdateProfile(ctx, author, &name, nil); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the profile change on b", func() bool { return ctUser(t, b, author).DisplayName == name })

	a.follow(reader, author)
	testenv.WaitFor(t, "the follower count on b", func() bool { return ctUser(t, b, author).FollowerCount == 1 })

	a.deletePost(author, post)
	testenv.WaitFor(t, "the delete on b", func() bool { return ctPost(t, b, post).Deleted() })
	testenv.WaitFor(t, "the post count on b", func() bool { return ctUser(t, b, author).PostCount == 0 })
}

// An instance whose pub/sub connection dropped may have missed messages:
// when it is subscribed again, it forgets every local copy.
func TestLocalTierForgetsAllAfterResubscribing(t *testing.T) {
	t.Parallel()
	server := testenv.StartRedis(t) // its own: the test kills pub/sub clients
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, newTestStore(t), rdb, "resub:", func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	author := te.user("author")
	testenv.WaitFor(t, "the local tier to hold the author", func() bool {
		if _, err := te.Users(ctx, []int64{author}); err != nil {
			t.Fatal(err)
		}
		return len(te.CachedUsers([]int64{author})) == 1
	})
	if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the local copy to be forgotten once the hub is back", func() bool {
		return len(te.CachedUsers([]int64{author})) == 0
	})
}

// With the tier off, reads are still right, and nothing is cached.
func TestLocalTierOff(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
		testenv.WaitFor(t, "the tier to hold the users and the post", func() bool {
			read()
			return len(te.CachedUsers([]int64{author, fan})) == 2 && len(te.CachedPosts([]int64{post})) == 1
		})
		s.change()
		if a, f, p := read(); !s.holds(a, f, p) {
			t.Fatalf("right after %s: author %+v, fan %+v, post %+v", s.what, a, f, p)
		}
	}
}
