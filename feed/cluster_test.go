package feed

import (
	"testing"

	"feedservice/internal/slot"
)

// Every key of one user shares a slot, so each script and transaction over
// them stays in one; different users spread over the slots.
func TestUserKeysShareASlot(t *testing.T) {
	k := keys{prefix: "t0123:"}
	slots := map[int]bool{}
	for id := int64(1); id <= 1000; id++ {
		own := []string{k.inbox(id), k.inboxSources(id), k.inboxTemp(id), k.inboxSourcesTemp(id), k.rebuildLock(id),
			k.outbox(id), k.outboxTemp(id), k.outboxLock(id), k.following(id), k.followingTemp(id)}
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
