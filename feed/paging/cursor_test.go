package paging

import (
	"strings"
	"testing"

	"feedservice/internal/apperr"
)

// The longest cursor EncodeCursor makes fits MaxCursorBytes; a longer
// string is refused before it is decoded, and its refusal quotes at most
// apperr.MaxQuotedBytes of it.
func TestCursorLengthCap(t *testing.T) {
	for _, kind := range CursorKinds {
		if c := EncodeCursor(kind, 1<<63-1); len(c) > MaxCursorBytes {
			t.Errorf("the %s cursor of the largest key is %d bytes, over MaxCursorBytes %d", kind, len(c), MaxCursorBytes)
		}
	}
	long := EncodeCursor(CursorFeed, 42) + strings.Repeat("A", 1_000_000)
	_, err := DecodeCursor(CursorFeed, long)
	if apperr.CodeOf(err) != apperr.CodeBadUserInput || len(err.Error()) > 200 {
		t.Fatalf("a cursor of %d bytes: %v, %d bytes of message", len(long), apperr.CodeOf(err), len(err.Error()))
	}
}
