package feed

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// Faults: Redis going away and coming back empty, a worker dying with a
// message in hand, a server restarting with events pending, and Redis losing
// every key. None of them may lose or corrupt a feed.

// ftPending lists the committed events not yet dispatched.
func ftPending(t testing.TB, st *store.Store) []models.OutboxEvent {
	t.Helper()
	events, err := st.PendingEvents(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// ftHasEvent says whether events hold one of kind about post (or any, for 0).
func ftHasEvent(events []models.OutboxEvent, kind string, post int64) bool {
	for _, ev := range events {
		if ev.Kind != kind {
			continue
		}
		var p models.PostEventPayload
		if post == 0 || (json.Unmarshal([]byte(ev.Payload), &p) == nil && p.PostID == post) {
			return true
		}
	}
	return false
}

// 10. With Redis gone, reads are served from MySQL (still right) and writes
// still commit, their events waiting; when Redis comes back empty, the
// backlog is dispatched and every feed is right again.
func TestRedisDownFallsBackToPull(t *testing.T) {
	t.Parallel()
	server := testenv.StartRedis(t)
	st := newTestStore(t)
	// openRedis's settings (api/app.go): short timeouts, so a read falls back quickly.
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:        []string{server.Addr()},
		DialTimeout:  500 * time.Millisecond,
		ReadTimeout:  500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond,
	})
	t.Cleanup(func() { rdb.Close() })
	testenv.CheckSlots(t, rdb)
	te := startTestEngine(t, st, rdb, testenv.Name("t")+":", func(c *config.Config) { c.InboxCap = 20 })
	m := ftModel{newRefModel()}

	reader := te.user("reader")
	a, b, c, x := te.user("author_a"), te.user("author_b"), te.user("author_c"), te.user("stranger")
	m.follow(te, reader, a)
	m.follow(te, reader, b)
	for range 3 {
		m.post(te, a, "a")
		m.post(te, b, "b")
	}
	m.repost(te, b, m.post(te, x, "x"))
	cp := m.post(te, c, "c, followed while Redis is down")
	te.settle()
	inboxReads := lcReads(te, metrics.ReadInbox) + lcReads(te, metrics.ReadRebuild)
	lcCheckFeeds(t, te, "Redis up", reader)
	if lcReads(te, metrics.ReadInbox)+lcReads(te, metrics.ReadRebuild) == inboxReads {
		t.Fatal("the reads with Redis up did not use the inbox")
	}

	server.Kill()
	fallbacks := lcReads(te, metrics.ReadPullFallback)
	if got, want := te.readFeed(reader, 3), te.pulledFeed(reader); !slices.EqualFunc(got, want, feedItemEqual) {
		t.Fatalf("feed with Redis down:\n got %v\nwant %v", got, want)
	}
	if lcReads(te, metrics.ReadPullFallback) == fallbacks {
		t.Fatal("reads with Redis down did not count as pull_fallback")
	}

	// Writes still commit; their events wait in the outbox.
	fresh := m.post(te, a, "posted while Redis is down")
	m.follow(te, reader, c)
	rx := m.repost(te, a, m.post(te, x, "x2"))
	pending := ftPending(t, st)
	if !ftHasEvent(pending, models.EventPostCreated, fresh) || !ftHasEvent(pending, models.EventPostCreated, rx) ||
		!ftHasEvent(pending, models.EventFollowed, 0) {
		t.Fatalf("with Redis down the outbox holds %d pending events, without the post, repost and follow just made", len(pending))
	}
	want := te.pulledFeed(reader)
	if lcFind(t, want, fresh).Key != fresh || lcFind(t, want, cp).Key != cp {
		t.Fatalf("the pulled feed misses the writes made while Redis was down: %v", want)
	}
	fallbacks = lcReads(te, metrics.ReadPullFallback)
	if got := te.readFeed(reader, 100); !slices.EqualFunc(got, want, feedItemEqual) {
		t.Fatalf("feed with Redis down, after writes:\n got %v\nwant %v", got, want)
	}
	if lcReads(te, metrics.ReadPullFallback) == fallbacks {
		t.Fatal("the read after the writes did not fall back")
	}
	if !ftHasEvent(ftPending(t, st), models.EventPostCreated, fresh) {
		t.Fatal("the post's event left the outbox while Redis was down")
	}

	// Redis comes back, empty.
	dispatched := lcCount(te.metrics.Dispatched)
	server.Start()
	waitForRedis(t, rdb)
	te.settle()
	if n := len(ftPending(t, st)); n != 0 {
		t.Fatalf("%d events still pending after Redis came back", n)
	}
	if got := lcCount(te.metrics.Dispatched) - dispatched; got < float64(len(pending)) {
		t.Fatalf("%v events dispatched after Redis came back, want at least the %d of the backlog", got, len(pending))
	}
	fallbacks = lcReads(te, metrics.ReadPullFallback)
	lcCheckFeeds(t, te, "Redis back", reader)
	if lcReads(te, metrics.ReadPullFallback) != fallbacks {
		t.Fatal("reads still fall back to MySQL after Redis came back")
	}
	// The inbox lives again and fan-out reaches it.
	later := m.post(te, b, "after the outage")
	te.settle()
	lcWantScore(t, te, reader, later, later)
	lcCheckFeeds(t, te, "after the outage", reader)
	m.check(t, te, "after the outage", reader)
}

// ftStreamPending is the fan-out group's count of read, unacknowledged messages.
func ftStreamPending(t testing.TB, te *testEngine) *redis.XPending {
	t.Helper()
	p, err := te.redis.XPending(context.Background(), te.keys.Stream(), fanout.Group).Result()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ftInboxState is everything a reader's inbox holds.
type ftInboxState struct {
	Entries []redis.Z
	Sources map[string]string
}

func ftInbox(t testing.TB, te *testEngine, reader int64) ftInboxState {
	t.Helper()
	ctx := context.Background()
	entries, err := te.redis.ZRangeWithScores(ctx, te.keys.Inbox(reader), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	sources, err := te.redis.HGetAll(ctx, te.keys.InboxSources(reader)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return ftInboxState{Entries: entries, Sources: sources}
}

func (s ftInboxState) equal(o ftInboxState) bool {
	if !slices.Equal(s.Entries, o.Entries) || len(s.Sources) != len(o.Sources) {
		return false
	}
	for k, v := range s.Sources {
		if w, ok := o.Sources[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// 11. A message a worker read and never acknowledged (it died) is claimed
// by another worker after its claim time (fanout.ClaimAfter, shortened
// here for the test's engines) and handled; handling a task twice leaves
// the inboxes as once did.
func TestWorkerKilledMidTaskIsReclaimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	claimSoon := func(d *deps.Deps) { d.FanoutClaimAfter = 300 * time.Millisecond }

	t.Run("reclaimed", func(t *testing.T) {
		env := lcNewEnv(t)
		// An instance that dispatches but runs no worker: messages wait in the stream.
		te := startTunedTestEngine(t, env.st, env.rdb, env.prefix, claimSoon, func(c *config.Config) { c.FanoutWorkers = 0; c.Mode = config.ModePush })
		m := ftModel{newRefModel()}
		author := te.user("author")
		readers := []int64{te.user("reader1"), te.user("reader2"), te.user("reader3")}
		for _, r := range readers {
			m.follow(te, r, author) // three followers: the post fans out in two tasks
			te.readFeed(r, 5)       // active
		}
		p := m.post(te, author, "handled by a worker that dies")
		deadline := time.Now().Add(testenv.Scale(10 * time.Second))
		for len(ftPending(t, env.st)) > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the dispatcher did not move the events to the stream")
			}
			time.Sleep(5 * time.Millisecond)
		}

		// The dead worker reads every message and never acknowledges.
		streams, err := te.redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: fanout.Group, Consumer: "dead", Streams: []string{te.keys.Stream(), ">"}, Count: 100, Block: -1,
		}).Result()
		if err != nil {
			t.Fatal(err)
		}
		taken, hasPost := 0, false
		for _, s := range streams {
			for _, m := range s.Messages {
				taken++
				if m.Values["kind"] == models.EventPostCreated && strings.Contains(m.Values["payload"].(string), strconv.FormatInt(p, 10)) {
					hasPost = true
				}
			}
		}
		if !hasPost {
			t.Fatalf("the dead worker's %d messages do not include the post's event", taken)
		}
		if pend := ftStreamPending(t, te); pend.Count != int64(taken) || pend.Consumers["dead"] != int64(taken) {
			t.Fatalf("pending %+v, want %d messages held by the dead worker", pend, taken)
		}
		for _, r := range readers {
			lcWantScore(t, te, r, p, 0)
		}

		// A live instance with workers takes the messages over.
		te2 := startTunedTestEngine(t, env.st, env.rdb, env.prefix, claimSoon, func(c *config.Config) { c.Mode = config.ModePush })
		deadline = time.Now().Add(testenv.Scale(15 * time.Second))
		for {
			pend := ftStreamPending(t, te2)
			done := pend.Count == 0
			for _, r := range readers {
				_, ok := lcScore(t, te2, r, p)
				done = done && ok
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the dead worker's messages were not reclaimed: pending %+v", pend)
			}
			time.Sleep(10 * time.Millisecond)
		}
		te2.settle()
		for _, r := range readers {
			lcWantScore(t, te2, r, p, p)
		}
		lcCheckFeeds(t, te2, "after the reclaim", readers...)
		m.check(t, te2, "after the reclaim", readers...)
	})

	t.Run("idempotent", func(t *testing.T) {
		te := newTestEngine(t, func(c *config.Config) { c.Dispatch = false; c.FanoutWorkers = 0; c.InboxCap = 20 })
		a, b := te.user("author_a"), te.user("author_b")
		readers := []int64{te.user("reader1"), te.user("reader2")}
		for _, r := range readers {
			te.follow(r, a)
			te.follow(r, b)
		}
		te.post(a, "before")
		for _, r := range readers {
			te.readFeed(r, 5) // active
		}
		// Events stay in the outbox: the test runs the tasks itself.
		p := te.post(a, "p")
		rp := te.repost(b, p)
		tasks := []fanout.Task{
			{Op: fanout.OpAdd, Post: p, Author: a, User: a, Event: p, Readers: readers},
			{Op: fanout.OpAdd, Post: p, Author: a, User: b, Event: rp, Readers: readers},
			{Op: fanout.OpRemove, Post: p, Author: a, User: a, Event: p, Readers: readers},
			{Op: fanout.OpDrop, Post: p, User: a, Readers: readers},
			{Op: fanout.OpBackfill, User: b, Readers: readers},
		}
		for _, tk := range tasks {
			before := map[int64]ftInboxState{}
			for _, r := range readers {
				before[r] = ftInbox(t, te, r)
			}
			if err := te.stream.RunTask(ctx, tk); err != nil {
				t.Fatalf("task %+v: %v", tk, err)
			}
			once := map[int64]ftInboxState{}
			for _, r := range readers {
				once[r] = ftInbox(t, te, r)
				if once[r].equal(before[r]) {
					t.Fatalf("task %+v changed nothing in the inbox of %d; the test wants a task that does", tk, r)
				}
			}
			if err := te.stream.RunTask(ctx, tk); err != nil {
				t.Fatalf("task %+v again: %v", tk, err)
			}
			for _, r := range readers {
				if twice := ftInbox(t, te, r); !twice.equal(once[r]) {
					t.Fatalf("task %+v run twice changed the inbox of %d:\n once %+v\ntwice %+v", tk, r, once[r], twice)
				}
			}
		}
		// After the backfill of b, p is back through b's repost alone.
		for _, r := range readers {
			lcWantScore(t, te, r, p, rp)
			if got, want := lcSources(t, te, r, p), lcSrc(b, rp); got != want {
				t.Fatalf("sources of p: %q, want %q", got, want)
			}
		}
	})
}

// 12. A server stopped with events pending loses none: the next instance
// dispatches them all and the inboxes catch up.
func TestServerRestartLosesNothing(t *testing.T) {
	t.Parallel()
	env := lcNewEnv(t)
	te := env.start(t, func(c *config.Config) { c.Dispatch = false; c.InboxCap = 20 })
	reader, other := te.user("reader"), te.user("other")
	a, b, c := te.user("author_a"), te.user("author_b"), te.user("author_c")
	te.follow(reader, a)
	te.follow(reader, b)
	te.follow(other, b)
	te.follow(other, c)
	te.post(a, "before")
	te.readFeed(reader, 5) // both readers are active
	te.readFeed(other, 5)

	var made []int64
	for i := range 3 {
		made = append(made, te.post(a, "a"), te.post(b, "b"), te.post(c, "c"))
		if i == 1 {
			made = append(made, te.repost(b, made[len(made)-1])) // c's post, into reader's feed
		}
	}
	te.deletePost(a, made[3])
	te.follow(reader, c)
	te.unfollow(other, b)
	if n := len(ftPending(t, env.st)); n < 10 {
		t.Fatalf("%d events pending before the stop, want the writes' events waiting", n)
	}
	te.stop()
	pending := len(ftPending(t, env.st))

	te2 := env.start(t, func(c *config.Config) { c.InboxCap = 20 })
	te2.settle()
	if n := len(ftPending(t, env.st)); n != 0 {
		t.Fatalf("%d events still pending after the restart", n)
	}
	if got := lcCount(te2.metrics.Dispatched); got < float64(pending) {
		t.Fatalf("the new instance dispatched %v events, want the %d left pending", got, pending)
	}
	// The inboxes caught up by fan-out, not by a rebuild.
	for _, r := range []int64{reader, other} {
		for _, it := range te2.pulledFeed(r) {
			lcWantScore(t, te2, r, it.Post, it.Key)
		}
	}
	lcWantScore(t, te2, reader, made[3], 0)
	lcCheckFeeds(t, te2, "after the restart", reader, other)
	if got := lcCount(te2.metrics.Rebuilds); got != 0 {
		t.Fatalf("the inboxes were rebuilt %v times after the restart; they should have caught up by fan-out", got)
	}
}

// ftFlushPrefix deletes every key of the test's prefix, as a Redis that
// lost its data (never FLUSHALL: other tests share this Redis).
func ftFlushPrefix(t testing.TB, te *testEngine) int {
	t.Helper()
	n, err := testenv.DeletePrefix(context.Background(), te.redis, te.cfg.KeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// 13. Losing every key rebuilds everything on demand: inboxes, the
// celebrities set, outboxes and the fan-out group.
func TestFlushAllRebuildsEverything(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.InboxCap = 20 }) // hybrid, CelebrityFollowers 3
	ctx := context.Background()
	star, a, b := te.user("star"), te.user("author_a"), te.user("author_b")
	f := []int64{te.user("fan1"), te.user("fan2"), te.user("fan3")}
	for _, r := range f {
		te.follow(r, star) // three followers: a celebrity
	}
	te.follow(f[0], a)
	te.follow(f[1], a)
	te.follow(f[2], b)
	te.follow(f[0], b)
	for _, r := range f {
		te.readFeed(r, 5)
	}
	for range 2 {
		te.post(star, "s")
		te.post(a, "a")
		te.post(b, "b")
	}
	te.repost(a, te.post(star, "s2"))
	te.repost(b, te.post(a, "a2"))
	te.settle()
	lcCheckFeeds(t, te, "before the flush", f...)
	if !te.redis.SIsMember(ctx, te.keys.Celebrities(), star).Val() {
		t.Fatal("the star is not a celebrity before the flush")
	}

	if n := ftFlushPrefix(t, te); n == 0 {
		t.Fatal("no keys to flush")
	}
	rebuilds := lcCount(te.metrics.Rebuilds)
	lcCheckFeeds(t, te, "after the flush", f...)
	if got := lcCount(te.metrics.Rebuilds) - rebuilds; got != float64(len(f)) {
		t.Fatalf("%v inbox rebuilds after the flush, want one per reader (%d)", got, len(f))
	}
	for _, r := range f {
		if !lcExists(t, te, te.keys.Inbox(r)) {
			t.Fatalf("the inbox of %d was not rebuilt", r)
		}
	}
	if !te.redis.SIsMember(ctx, te.keys.Celebrities(), star).Val() {
		t.Fatal("the celebrities set was not rebuilt with the star")
	}
	// This instance's local copy of the star's outbox serves its pages
	// until the tier revalidates it (LOCAL_CACHE_TTL); the next page after
	// that finds Redis's copy gone and rebuilds it.
	testenv.WaitFor(t, "the star's outbox to be rebuilt once the local copy is revalidated", func() bool {
		te.readFeed(f[0], 5)
		return lcExists(t, te, te.keys.Outbox(star))
	})

	// New posts fan out again: the stream and its group come back.
	pa, ps := te.post(a, "after the flush"), te.post(star, "after the flush")
	te.settle()
	groups, err := te.redis.XInfoGroups(ctx, te.keys.Stream()).Result()
	if err != nil || !slices.ContainsFunc(groups, func(g redis.XInfoGroup) bool { return g.Name == fanout.Group }) {
		t.Fatalf("fan-out groups after the flush: %v (%v)", groups, err)
	}
	lcWantScore(t, te, f[0], pa, pa)
	lcWantScore(t, te, f[1], pa, pa)
	if _, err := te.redis.ZScore(ctx, te.keys.Outbox(star), strconv.FormatInt(ps, 10)).Result(); err != nil {
		t.Fatalf("the star's new post is not in the rebuilt outbox: %v", err)
	}
	lcCheckFeeds(t, te, "new posts after the flush", f...)
}

// ftModel records what a fault test did in the reference model
// (model_test.go), so that the test ends with the check of
// TestEngineMatchesModel: nothing lost, nothing extra.
type ftModel struct{ *refModel }

func (m ftModel) post(te *testEngine, author int64, body string) int64 {
	id := te.post(author, body)
	m.refModel.post(author, id)
	return id
}

func (m ftModel) repost(te *testEngine, user, post int64) int64 {
	id := te.repost(user, post)
	m.refModel.repost(te.t, user, post, id)
	return id
}

func (m ftModel) follow(te *testEngine, follower, followee int64) {
	te.follow(follower, followee)
	m.refModel.follow(follower, followee)
}

// check reads each reader's whole feed in small and large pages and compares
// it with the model's.
func (m ftModel) check(t testing.TB, te *testEngine, stage string, readers ...int64) {
	t.Helper()
	te.settle()
	checkFeeds(t, te, stage, "the reference model", m.feed, readers...)
}

// waitForRedis waits until rdb reaches its restarted server again: the
// client may hold on to its last dial error for a moment.
func waitForRedis(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the engine's client does not reach the restarted Redis")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
