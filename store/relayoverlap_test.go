package store

import (
	"context"
	"testing"
	"time"
)

// Two relays may run at once: the lease lapses in the middle of a batch,
// or Redis loses its key, and a second instance takes it. The second then
// applies changes from its own read, which the first may have applied and
// deleted meanwhile, together with the changes after them from the same
// node. Such a change applied again changes nothing, even when the
// target's user changed the relation in between. The target node keeps
// the ids of the changes it applied for the retention (PruneRelayApplied
// removes them only past it, and never while the change is pending on
// its node, however old).
func TestShardedMySQLRelayOverlappingRelaysApplyEachHalfOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 12) // users 1-12, user n on node n mod 4
	must := func(what string) func(bool, error) {
		return func(changed bool, err error) {
			t.Helper()
			if err != nil || !changed {
				t.Fatalf("%s: changed %v, %v", what, changed, err)
			}
		}
	}
	// Two follows from node 1 to node 2: two changes of one node for one
	// target node, which a relay applies in their order.
	must("follow 1 -> 2")(s.Follow(ctx, 1, 2, 101, at))
	must("follow 5 -> 6")(s.Follow(ctx, 5, 6, 102, at))
	stale := pendingRelays(t, s) // the second relay's read
	if len(stale) != 2 {
		t.Fatalf("%d halves pending, want 2", len(stale))
	}
	applyRelays(t, s) // the first relay applies and deletes both
	must("2 removes follower 1")(s.RemoveFollower(ctx, 2, 1, 103, at))
	applyRelays(t, s)
	checkBothSides(t, s)
	before := relayTables(t, s, 0)
	for _, c := range stale {
		if err := s.applyChange(ctx, c); err != nil {
			t.Fatalf("the second relay applies change %d: %v", c.ID, err)
		}
	}
	if diff := tablesDiff(before, relayTables(t, s, 0)); diff != "" {
		t.Errorf("the second relay's stale changes, applied again, changed:\n%s", diff)
	}
	checkBothSides(t, s)
	if ok, err := s.Follows(ctx, 1, 2); err != nil || ok {
		t.Errorf("1 follows 2 after 2 removed the follower and a second relay applied the follow again: %v, %v", ok, err)
	}

	// Pruning: nothing within the retention.
	if n, err := s.PruneRelayApplied(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d within the retention: %v", n, err)
	}
	// A change applied whose relay stopped before deleting it stays
	// pending on its node; past the retention its row goes only once the
	// change is gone.
	must("follow 9 -> 10")(s.Follow(ctx, 9, 10, 103, at))
	held := pendingRelays(t, s)
	if len(held) != 1 {
		t.Fatalf("%d halves pending, want 1", len(held))
	}
	if err := s.applyOnTarget(ctx, held[0]); err != nil {
		t.Fatal(err)
	}
	var rows int64
	if err := s.db.Model(&relayApplied{}).Count(&rows).Error; err != nil {
		t.Fatal(err)
	}
	s.relayAppliedRetention = time.Millisecond
	time.Sleep(10 * time.Millisecond)
	n, err := s.PruneRelayApplied(ctx)
	if err != nil || n != int(rows)-1 {
		t.Fatalf("pruned %d of %d past the retention, want all but the pending change's: %v", n, rows, err)
	}
	before = relayTables(t, s, held[0].ID)
	applyRelays(t, s) // finds it applied: deletes it, changes nothing
	if diff := tablesDiff(before, relayTables(t, s, held[0].ID)); diff != "" {
		t.Errorf("a change applied before, its row kept while pending, applied again changed:\n%s", diff)
	}
	checkBothSides(t, s)
	time.Sleep(10 * time.Millisecond)
	if n, err := s.PruneRelayApplied(ctx); err != nil || n != 1 {
		t.Errorf("pruned %d once the change was gone, want 1: %v", n, err)
	}
}

// ApplyRelays applies nothing once its context is done: its caller gives
// it the lease's end, which bounds how late a half it read is applied.
func TestShardedMySQLRelayStopsAtItsDeadline(t *testing.T) {
	t.Parallel()
	s, _ := openSharded(t)
	at := relationStore(t, s, 4)
	if _, err := s.Follow(context.Background(), 1, 2, 101, at); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if n, err := s.ApplyRelays(ctx, 100); n != 0 || err == nil {
		t.Errorf("ApplyRelays past its deadline applied %d, %v; want none and the deadline's error", n, err)
	}
	if len(pendingRelays(t, s)) != 1 {
		t.Error("the half did not stay pending")
	}
}
