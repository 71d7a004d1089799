package feed

import (
	"context"
	"strconv"
	"testing"

	"feedservice/feed/config"

	"github.com/redis/go-redis/v9"
)

// TestDismissalBeatsAConcurrentWorkOut: a viewer's suggestions being worked
// out from MySQL while a dismissal commits (their answer may lack it) are
// not kept: the dismissal moves the viewer's count first, and the set is
// written only at the count read before MySQL. Without the count the
// stale set was kept, and the dismissed suggestion came back for a whole
// HOME_CANDIDATES_TTL.
func TestDismissalBeatsAConcurrentWorkOut(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.HomeInsertEvery = 5 })
	ctx := context.Background()
	viewer, suggested := te.user("viewer"), te.user("suggested")
	key, epochKey := te.keys.HomeCandidates(viewer), te.keys.HomeEpoch(viewer)
	member := packKind(kindSuggested, suggested)
	keep := func(epoch string) {
		t.Helper()
		args := []any{epoch, int64(60_000), 0, 0, 2.0, member}
		if err := keepInsertsScript.Run(ctx, te.redis, []string{key, epochKey}, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() bool {
		t.Helper()
		_, err := te.redis.ZScore(ctx, key, strconv.FormatInt(member, 10)).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return err == nil
	}

	// A work-out that read the count (none yet) and then MySQL ...
	before, err := te.redis.Get(ctx, epochKey).Result()
	if err != redis.Nil {
		t.Fatalf("setup: a count before any dismissal: %q %v", before, err)
	}
	// ... while the viewer dismisses the suggestion ...
	if err := te.DismissHomeEntry(ctx, viewer, true, suggested); err != nil {
		t.Fatal(err)
	}
	// ... does not keep what it found.
	keep("")
	if kept() {
		t.Fatal("a set worked out before the dismissal was kept after it: the dismissed suggestion would show again")
	}
	// A work-out that starts after the dismissal keeps its set.
	now, err := te.redis.Get(ctx, epochKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	keep(now)
	if !kept() {
		t.Fatal("a set worked out after the dismissal, at the current count, was not kept")
	}
	// And the engine's own read never offers the dismissed user again.
	te.redis.Del(ctx, key)
	cands, err := te.homeCandidates(ctx, viewer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.packed == member {
			t.Fatal("the dismissed suggestion is offered again")
		}
	}
}
