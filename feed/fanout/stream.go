// Package fanout carries committed changes to the inboxes: the dispatcher
// moves outbox events (written with each change in MySQL) to a Redis
// stream, and the workers of every instance take its messages in one
// consumer group and apply them (to outboxes, inboxes, followee sets,
// relation lists and the cached copies), running the batches of a big
// fan-out in parallel, and putting a batch that failed on the same stream
// as a task.
package fanout

import (
	"context"
	"fmt"

	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/jumps"
	"feedservice/feed/lists"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/timeline"
)

// Stream is the fan-out: its dispatcher, its workers and their handlers.
type Stream struct {
	d        *deps.Deps
	pub      *livemsg.Publisher
	cache    *cache.Tiers
	inboxes  *timeline.Inboxes
	outboxes *outbox.Outboxes
	jumps    *jumps.Lists
	lists    *lists.Copies // the copies of users' lists, which unfollows and blocks change
	pokes    chan struct{} // wakes the dispatcher after a commit
	relays   chan struct{} // wakes the relay after a commit
	instance string        // this instance's name among the stream's consumers
	// batches holds a token for each fan-out batch this instance runs in
	// parallel (see batchRun): FanoutWorkers at most, whichever events
	// they came from.
	batches chan struct{}
}

// New makes the fan-out of d over the given parts.
func New(d *deps.Deps, pub *livemsg.Publisher, c *cache.Tiers, x *timeline.Inboxes, o *outbox.Outboxes, j *jumps.Lists, l *lists.Copies) *Stream {
	return &Stream{d: d, pub: pub, cache: c, inboxes: x, outboxes: o, jumps: j, lists: l,
		pokes: make(chan struct{}, 1), relays: make(chan struct{}, 1), instance: redisx.NewToken(), batches: make(chan struct{}, max(d.Cfg.FanoutWorkers, 1))}
}

// Start runs, through run (which tracks the goroutines), the dispatcher
// and on the sharded layout the relay (when Config.Dispatch says so),
// Config.FanoutWorkers workers and the lag
// gauges, until ctx ends.
func (st *Stream) Start(ctx context.Context, run func(context.Context, func(context.Context))) {
	if st.d.Cfg.Dispatch {
		run(ctx, st.runDispatcher)
		if st.d.Store.Sharded() {
			run(ctx, st.runRelay)
		}
	}
	for i := range st.d.Cfg.FanoutWorkers {
		consumer := fmt.Sprintf("%s-%d", st.instance, i)
		run(ctx, func(ctx context.Context) { st.runWorker(ctx, consumer) })
	}
	run(ctx, st.watchLag)
}
