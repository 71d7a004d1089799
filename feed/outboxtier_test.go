package feed

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/livemsg"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
)

// celebrityWorld is a reader following a celebrity, who posted once since
// the reader's first read.
func celebrityWorld(t *testing.T, te *testEngine) (reader, star int64) {
	t.Helper()
	reader, star = te.user("reader"), te.user("star")
	for _, f := range []int64{reader, te.user("fan1"), te.user("fan2")} {
		te.follow(f, star) // three followers: a celebrity
	}
	te.settle()
	// Builds the inbox, then the outbox: posts go to an outbox that exists.
	// The first read answers from MySQL and writes the inbox after; the
	// second reads the inbox, merged with the star's outbox.
	firstPost(t, te, reader)
	te.settle()
	firstPost(t, te, reader)
	te.post(star, "first")
	te.settle()
	return reader, star
}

// firstPost is the post at the top of reader's feed on te.
func firstPost(t *testing.T, te *testEngine, reader int64) int64 {
	t.Helper()
	one := 1
	conn, err := te.Feed(context.Background(), reader, paging.PageArgs{First: &one})
	if err != nil {
		t.Fatal(err)
	}
	te.inboxes.Wait() // the rebuild a first read left, written
	if len(conn.Edges) == 0 {
		return 0
	}
	return conn.Edges[0].Node.PostID
}

// holdsCopy reads reader's feed on te until a read finds te's local tier
// holding a copy of the outbox of the one celebrity reader follows, as the
// tier's hit count tells (a read whose fill crosses a message of an
// earlier change does not prime the tier).
func holdsCopy(t *testing.T, te *testEngine, reader int64) {
	t.Helper()
	hits := te.metrics.CacheLookups.WithLabelValues(metrics.TierLocal, metrics.KindOutbox, "hit")
	testenv.WaitFor(t, "the local tier to hold the celebrity's outbox", func() bool {
		before := lcCount(hits)
		firstPost(t, te, reader)
		return lcCount(hits) > before
	})
}

// A celebrity's new post shows in a follower's feed on the instance whose
// worker put it in the outbox as soon as the workers settled, though that
// instance held a copy of the outbox and its copies last an hour; and the
// author's delete leaves the feed before DeletePost returns.
func TestCelebrityPostShowsAtOnceOnWriter(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	reader, star := celebrityWorld(t, te)
	holdsCopy(t, te, reader)

	post := te.post(star, "second")
	te.settle()
	if got := firstPost(t, te, reader); got != post {
		t.Fatalf("the feed opens with %d, want the new post %d", got, post)
	}
	holdsCopy(t, te, reader)
	te.deletePost(star, post)
	if got := firstPost(t, te, reader); got == post {
		t.Fatalf("the feed still opens with the deleted post %d", got)
	}
}

// A celebrity's new post shows in a follower's feed on another instance,
// whose local tier holds a copy of the outbox for an hour, once that
// instance has applied the messages sent until the workers settled: the
// invalidation message brings it, not the copy's expiry.
func TestCelebrityPostReachesOtherInstance(t *testing.T) {
	t.Parallel()
	a, b := startTwoEngines(t, func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	reader, star := celebrityWorld(t, a)
	for range 3 {
		holdsCopy(t, b, reader)
		post := a.post(star, "next")
		a.settle() // the worker may run on either instance
		if err := b.syncInvalidations(ctx); err != nil {
			t.Fatal(err)
		}
		if got := firstPost(t, b, reader); got != post {
			t.Fatalf("the feed on the other instance opens with %d, want the new post %d", got, post)
		}
	}
}

// An outbox changed with no message (one lost on the way) shows on an
// instance that held a copy of it within LocalCacheTTL, the tier's bound:
// the copy is read again from Redis once it is that old.
func TestOutboxCopyRevalidatedWithinTTL(t *testing.T) {
	t.Parallel()
	ttl := testenv.Scale(300 * time.Millisecond)
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheTTL = ttl })
	ctx := context.Background()
	reader, star := celebrityWorld(t, te)
	post := te.post(star, "second")
	te.settle()
	// The post leaves the outbox with no message, and this instance
	// copies the outbox without it.
	key := te.keys.Outbox(star)
	if n, err := te.redis.ZRem(ctx, key, strconv.FormatInt(post, 10)).Result(); err != nil || n != 1 {
		t.Fatalf("the post left the outbox: %d, %v", n, err)
	}
	newOutboxVersion(t, te, star)
	te.cache.OnResubscribed() // forgets every local copy, as after a reconnection
	holdsCopy(t, te, reader)
	if got := firstPost(t, te, reader); got == post {
		inbox, _ := te.redis.ZRangeWithScores(ctx, te.keys.Inbox(reader), 0, -1).Result()
		outbox, _ := te.redis.ZRangeWithScores(ctx, key, 0, -1).Result()
		celebs, _ := te.redis.SMembers(ctx, te.keys.Celebrities()).Result()
		t.Fatalf("the feed opens with %d, which the outbox no longer holds; inbox %v outbox %v celebs %v", got, inbox, outbox, celebs)
	}
	// It comes back with no message: the copy is stale until it expires.
	// The add raises the outbox's version, as every add does (the outbox
	// script's): reads that folded the outbox into the inbox know it
	// changed by that.
	readdWithoutMessage(t, te, star, post)
	changed := time.Now()
	bound := ttl + testenv.Scale(500*time.Millisecond) // slack for a loaded machine
	for firstPost(t, te, reader) != post {
		if time.Since(changed) > bound {
			t.Fatalf("the post did not show within %s of the change (the tier's bound is %s)", bound, ttl)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("shown %s after the change (bound %s)", time.Since(changed).Round(time.Millisecond), ttl)
}

// A message on a celebrity's channel wakes the listeners of the readers who
// follow them, and their recount reads the outbox as the message found it,
// though this instance held a copy of it (for an hour) and the message that
// drops copies had not come: on a Redis Cluster the author's message
// (sharded) and the invalidate channel's (classic) travel on different
// connections, and the first may come first.
func TestAuthorMessageDropsTheOutboxCopy(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.LocalCacheTTL = time.Hour })
	ctx := context.Background()
	reader, star := celebrityWorld(t, te)
	post := te.post(star, "second")
	te.settle()
	// The post leaves the outbox before the reader reads it (so no read
	// folds it into their inbox), and this instance copies the outbox
	// without it.
	if n, err := te.redis.ZRem(ctx, te.keys.Outbox(star), strconv.FormatInt(post, 10)).Result(); err != nil || n != 1 {
		t.Fatalf("the post left the outbox: %d, %v", n, err)
	}
	newOutboxVersion(t, te, star)
	te.cache.OnResubscribed() // forgets every local copy, as after a reconnection
	holdsCopy(t, te, reader)
	counts, _ := te.unreadCounts(reader)
	if n := <-counts; n != 1 {
		t.Fatalf("first count %d, want 1 (the celebrity's post left in the outbox)", n)
	}
	// The post comes back, and only the author's channel says so.
	readdWithoutMessage(t, te, star, post)
	if err := te.redis.Publish(ctx, te.keys.AuthorChannel(star), livemsg.Change().Encode()).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-counts:
		if n != 2 {
			t.Fatalf("count %d after the celebrity's change, want 2", n)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatalf("no count after the celebrity's change: the recount read the stale copy of the outbox")
	}
}

// readdWithoutMessage puts author's post back into their outbox as the
// outbox's add script does (the member, its add sequence, the raised
// version), with no message to the instances.
func readdWithoutMessage(t *testing.T, te *testEngine, author, post int64) {
	t.Helper()
	ctx := context.Background()
	seq := newOutboxVersion(t, te, author)
	member := strconv.FormatInt(post, 10)
	pipe := te.redis.TxPipeline()
	pipe.ZAdd(ctx, te.keys.Outbox(author), redis.Z{Score: float64(post), Member: member})
	pipe.ZAdd(ctx, te.keys.OutboxAdds(author), redis.Z{Score: float64(seq), Member: member})
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// newOutboxVersion raises author's outbox's version, as every writer of an
// outbox does in the script of its change (these tests change it by hand,
// to leave out the message that drops the copies), and returns its count.
func newOutboxVersion(t *testing.T, te *testEngine, author int64) int64 {
	t.Helper()
	ctx := context.Background()
	v, err := te.redis.Get(ctx, te.keys.OutboxVersion(author)).Result()
	if err != nil {
		t.Fatalf("the outbox's version: %v", err)
	}
	epoch, n, ok := strings.Cut(v, ":")
	seq, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil {
		t.Fatalf("the outbox's version %q", v)
	}
	seq++
	if err := te.redis.Set(ctx, te.keys.OutboxVersion(author), epoch+":"+strconv.FormatInt(seq, 10), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	return seq
}
