package home

import (
	"context"
	"feedservice/feed/pull"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/replicas"
	"feedservice/feed/timeline"
	"feedservice/models"
)

// TestDismissalBeatsAConcurrentWorkOut: a viewer's suggestions being worked
// out from MySQL while a dismissal commits (their answer may lack it) are
// not kept: the dismissal moves the viewer's count first, and the set is
// written only at the count read before MySQL. Without the count the
// stale set was kept, and the dismissed suggestion came back for a whole
// HOME_CANDIDATES_TTL.
func TestDismissalBeatsAConcurrentWorkOut(t *testing.T) {
	t.Parallel()
	m, rdb := newTestMixer(t)
	ctx := context.Background()
	viewer, suggested := testUser(t, m, "viewer"), testUser(t, m, "suggested")
	key, epochKey := m.d.Keys.HomeCandidates(viewer), m.d.Keys.HomeEpoch(viewer)
	member := packKind(kindSuggested, suggested)
	keep := func(epoch string) {
		t.Helper()
		args := []any{epoch, int64(60_000), 0, 0, 2.0, member}
		if err := keepInsertsScript.Run(ctx, rdb, []string{key, epochKey}, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() bool {
		t.Helper()
		_, err := rdb.ZScore(ctx, key, strconv.FormatInt(member, 10)).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return err == nil
	}

	// A work-out that read the count (none yet) and then MySQL ...
	before, err := rdb.Get(ctx, epochKey).Result()
	if err != redis.Nil {
		t.Fatalf("setup: a count before any dismissal: %q %v", before, err)
	}
	// ... while the viewer dismisses the suggestion ...
	if err := m.DismissHomeEntry(ctx, viewer, true, suggested); err != nil {
		t.Fatal(err)
	}
	// ... does not keep what it found.
	keep("")
	if kept() {
		t.Fatal("a set worked out before the dismissal was kept after it: the dismissed suggestion would show again")
	}
	// A work-out that starts after the dismissal keeps its set.
	now, err := rdb.Get(ctx, epochKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	keep(now)
	if !kept() {
		t.Fatal("a set worked out after the dismissal, at the current count, was not kept")
	}
	// And the engine's own read never offers the dismissed user again.
	rdb.Del(ctx, key)
	cands, err := m.candidates(ctx, viewer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.packed == member {
			t.Fatal("the dismissed suggestion is offered again")
		}
	}
}

// newTestMixer is a Mixer over the engine's lower parts, on a MariaDB
// database and a Redis key prefix of the test's own.
func newTestMixer(t *testing.T) (*Mixer, redis.UniversalClient) {
	t.Helper()
	d := depstest.New(t, config.Config{HomeInsertEvery: 5})
	rdb := d.Redis
	rep := replicas.New(d.Store, d.Redis, d.Keys, d.WarnRedis)
	c := cache.New(d, livemsg.NewPublisher(d.Redis, d.Keys, d.Log), rep)
	f := pull.NewFeeds(d, c)
	x := timeline.NewInboxes(d, c, rep, f)
	o := outbox.New(d, c)
	t.Cleanup(func() { c.Stop(); o.Stop() })
	return New(d, c, timeline.NewReads(d, rep, c, f, x, o)), rdb
}

// testUser creates a user called name and returns their id.
func testUser(t *testing.T, m *Mixer, name string) int64 {
	t.Helper()
	now := m.d.Now()
	u := &models.User{ID: m.d.IDs.Next(), Username: name, DisplayName: name, PasswordHash: "x", CreatedAt: now, LastActiveAt: now}
	if err := m.d.Store.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}
