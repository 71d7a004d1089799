package feed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// engine a test starts must stop everything it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
