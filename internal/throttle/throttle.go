// Package throttle spaces out a warning that would otherwise come once per
// request, such as one for each Redis call that fails while Redis is away.
package throttle

import (
	"sync"
	"time"
)

// Throttle lets a warning through at most once per Every; the zero value
// lets every one through. It is safe for concurrent use.
type Throttle struct {
	// Every is the least time between two warnings let through.
	Every time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// Take says whether a warning may be written at now, and how many were
// held back since the last one written.
func (w *Throttle) Take(now time.Time) (ok bool, suppressed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.last.IsZero() && now.Sub(w.last) < w.Every {
		w.suppressed++
		return false, 0
	}
	suppressed, w.last, w.suppressed = w.suppressed, now, 0
	return true, suppressed
}
