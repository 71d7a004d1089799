package fanout

import (
	"testing"

	"feedservice/models"
)

// A dropped message is counted under its kind when a handler knows it,
// and under one label whatever unknown kinds a peer writes.
func TestDroppedKindIsBounded(t *testing.T) {
	for _, kind := range append([]string{TaskKind}, models.EventKinds...) {
		if got := droppedKind(kind); got != kind {
			t.Errorf("droppedKind(%q) = %q, want the kind", kind, got)
		}
	}
	for _, kind := range []string{"", "post_created2", "x-unknown"} {
		if got := droppedKind(kind); got != droppedKindUnknown {
			t.Errorf("droppedKind(%q) = %q, want %q", kind, got, droppedKindUnknown)
		}
	}
}
