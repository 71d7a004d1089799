package models

import (
	"errors"
	"strings"
	"testing"
)

// The longest id NodeID makes fits MaxNodeIDBytes; a longer string is
// refused before it is decoded.
func TestNodeIDLengthCap(t *testing.T) {
	for _, kind := range []string{KindUser, KindPost} {
		if id := NodeID(kind, 1<<63-1); len(id) > MaxNodeIDBytes {
			t.Errorf("the %s id of the largest key is %d bytes, over MaxNodeIDBytes %d", kind, len(id), MaxNodeIDBytes)
		}
	}
	if _, _, err := ParseNodeID(NodeID(KindPost, 7) + strings.Repeat("A", MaxNodeIDBytes)); !errors.Is(err, ErrBadNodeID) {
		t.Fatalf("an id over MaxNodeIDBytes: %v", err)
	}
}
