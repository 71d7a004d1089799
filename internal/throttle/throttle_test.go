package throttle

import (
	"testing"
	"time"
)

// The throttle's edge: a warning exactly one interval after the last one
// passes, one a nanosecond earlier is held back.
func TestThrottleEdge(t *testing.T) {
	w := Throttle{Every: time.Second}
	t0 := time.Unix(1000, 0)
	for i, step := range []struct {
		at         time.Duration
		ok         bool
		suppressed int
	}{{0, true, 0}, {time.Second - 1, false, 0}, {time.Second, true, 1}, {time.Second, false, 0}, {2*time.Second - 1, false, 0}, {2 * time.Second, true, 2}} {
		if ok, n := w.Take(t0.Add(step.at)); ok != step.ok || n != step.suppressed {
			t.Errorf("step %d at +%s: %v %d, want %v %d", i, step.at, ok, n, step.ok, step.suppressed)
		}
	}
}

// The zero Throttle lets every warning through.
func TestZeroThrottleLetsEveryWarningThrough(t *testing.T) {
	var w Throttle
	now := time.Unix(1000, 0)
	for i := range 3 {
		if ok, n := w.Take(now); !ok || n != 0 {
			t.Errorf("warning %d: %v %d, want true 0", i+1, ok, n)
		}
	}
}
