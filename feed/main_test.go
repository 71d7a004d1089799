package feed

import (
	"testing"

	"go.uber.org/goleak"

	"feedservice/internal/testenv"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// engine a test starts must stop everything it started. The one exception
// are the prepared statement stores dbresolver makes for each pool of a
// store with read replicas (gorm's internal LRU: "done channel is never
// closed"), whose goroutines nothing can stop. The template database the
// tests' databases are copied from (storetest.MySQL) is dropped once they
// have run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.DropTemplatesAfter(m), goleak.IgnoreAnyFunction(testenv.GormStatementStoreGoroutine))
}
