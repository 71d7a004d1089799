package api

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"feedservice/internal/testenv"
)

// TestMain runs the tests, or, started by BenchmarkRedDotDelivery with
// DELIVERY_CHILD=1, the benchmark's websocket clients in a process of
// their own. The tests fail when a goroutine outlives them: each server a
// test starts must stop everything it started, but for the prepared
// statement stores dbresolver makes for a store with read replicas (gorm's
// internal LRU, whose goroutine nothing can stop: "done channel is never
// closed"). The template database the tests' databases are copied from
// (storetest.MySQL) is dropped once they have run. A goroutine counts as leaked when it is still there
// leakPatience after the tests: go-redis probes a dead node's address
// (a killed cluster node) once a second, and a probe begun just before
// its client closed sleeps out its second before it sees the close.
func TestMain(m *testing.M) {
	if os.Getenv("DELIVERY_CHILD") == "1" {
		if err := runDeliveryClients(); err != nil {
			fmt.Fprintln(os.Stderr, "delivery clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := testenv.DropTemplatesAfter(m).Run()
	if serverBinary.dir != "" {
		os.RemoveAll(serverBinary.dir)
	}
	if code == 0 {
		if err := findLeaks(goleak.IgnoreAnyFunction(testenv.GormStatementStoreGoroutine)); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakPatience is how long a goroutine may outlive the tests before it
// counts as leaked.
const leakPatience = 3 * time.Second

// findLeaks is goleak.Find, asked again until leakPatience has passed.
func findLeaks(opts ...goleak.Option) error {
	deadline := time.Now().Add(testenv.Scale(leakPatience))
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
