package feed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// engine a test starts must stop everything it started. The one exception
// is the expirable LRU of BenchmarkLocalTierLibrary, whose goroutine
// nothing can stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"))
}
