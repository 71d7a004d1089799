package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond every 10ms until it holds, failing t after 5 seconds
// (scaled by Scale) with what it waited for.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Scale(5 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
