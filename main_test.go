package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests, or, started by BenchmarkRedDotDelivery with
// DELIVERY_CHILD=1, the benchmark's websocket clients in a process of
// their own.
func TestMain(m *testing.M) {
	if os.Getenv("DELIVERY_CHILD") == "1" {
		if err := runDeliveryClients(); err != nil {
			fmt.Fprintln(os.Stderr, "delivery clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
