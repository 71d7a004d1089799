package feed

import (
	"testing"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/slot"
)

// Every key of one user shares a slot, so each script and transaction over
// them stays in one; different users spread over the slots.
func TestUserKeysShareASlot(t *testing.T) {
	k := keyspace.New("t0123:")
	slots := map[int]bool{}
	for id := int64(1); id <= 1000; id++ {
		own := []string{k.Inbox(id), k.InboxSources(id), k.InboxTemp(id), k.InboxSourcesTemp(id), k.RebuildLock(id),
			k.Outbox(id), k.OutboxTemp(id), k.OutboxLock(id), k.OutboxVersion(id), k.Following(id), k.FollowingTemp(id)}
		for _, key := range own[1:] {
			if slot.Of(key) != slot.Of(own[0]) {
				t.Fatalf("%s and %s are in different slots", own[0], key)
			}
		}
		slots[slot.Of(own[0])] = true
	}
	if len(slots) < 900 {
		t.Fatalf("1000 users share %d slots: the hash tag does not spread them", len(slots))
	}
}
