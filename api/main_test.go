package api

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"feedservice/internal/testenv"
)

// TestMain runs the tests, or, started by BenchmarkRedDotDelivery with
// DELIVERY_CHILD=1, the benchmark's websocket clients in a process of
// their own. The tests fail when a goroutine outlives them: each server a
// test starts must stop everything it started, but for the prepared
// statement stores dbresolver makes for a store with read replicas (gorm's
// internal LRU, whose goroutine nothing can stop: "done channel is never
// closed").
func TestMain(m *testing.M) {
	if os.Getenv("DELIVERY_CHILD") == "1" {
		if err := runDeliveryClients(); err != nil {
			fmt.Fprintln(os.Stderr, "delivery clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(testenv.GormStatementStoreGoroutine))
}
