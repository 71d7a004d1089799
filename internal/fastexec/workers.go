package fastexec

import (
	"slices"
	"sync"
	"time"
)

// Go runs f in a goroutine of its own, at once, as `go f()` does, but on
// a goroutine that ran such a function before when one is idle. gqlgen
// gives each element of a list of objects a new goroutine, whose stack
// starts small and is grown and copied, often twice, as the element's
// fields are resolved: on the feed page that is a fifth of the CPU. A
// worker keeps its grown stack for the next element. A worker idle for
// WorkerIdle ends.
func Go(f func()) {
	workers.mu.Lock()
	if n := len(workers.idle); n > 0 {
		w := workers.idle[n-1]
		workers.idle = workers.idle[:n-1]
		workers.mu.Unlock()
		w.tasks <- f
		return
	}
	workers.mu.Unlock()
	go (&worker{tasks: make(chan func(), 1)}).run(f)
}

// WorkerIdle is how long a worker waits for work before it ends.
const WorkerIdle = time.Second

var workers struct {
	mu   sync.Mutex
	idle []*worker // last in, first out: the most recently used stacks
}

type worker struct{ tasks chan func() }

func (w *worker) run(f func()) {
	idle := time.NewTimer(WorkerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // let what the task holds go while the worker waits
		workers.mu.Lock()
		workers.idle = append(workers.idle, w)
		workers.mu.Unlock()
		idle.Reset(WorkerIdle)
		select {
		case f = <-w.tasks:
		case <-idle.C:
			if w.retire() {
				return
			}
			f = <-w.tasks // Go took it off the idle list just now: its task is on the way
		}
	}
}

// retire takes w off the idle list, unless Go already did.
func (w *worker) retire() bool {
	workers.mu.Lock()
	defer workers.mu.Unlock()
	for i, x := range workers.idle {
		if x == w {
			workers.idle = slices.Delete(workers.idle, i, i+1)
			return true
		}
	}
	return false
}
