package fanout

import (
	"context"
	"strconv"
	"time"

	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/redisx"

	"github.com/redis/go-redis/v9"
)

// The dispatcher moves committed outbox events (written in the same MySQL
// transaction as their change) to the fan-out stream, oldest first. It
// marks them dispatched only after Redis took them, so a crash or a Redis
// outage delays events but never drops one; one that is sent twice is
// harmless, as every handler is idempotent. One instance at a time
// dispatches, holding a lease in Redis; any instance may take it over.
const (
	dispatchBatch       = 200
	dispatchIdlePoll    = 50 * time.Millisecond
	dispatchErrorPause  = 250 * time.Millisecond // about a Redis Cluster client's slot map reload, so a failover's promotion is noticed soon
	dispatcherLeaseTTL  = 10 * time.Second
	dispatchedRetention = 24 * time.Hour // dispatched events are purged after this
	streamMaxLen        = 1_000_000      // a backstop: the stream is capped at about this many entries even when a group stalls (see streamtrim.go)
)

// Poke wakes this instance's dispatcher after a commit, so that events
// leave at once instead of at the next poll.
// The relay is woken too: a commit may have left it a half to apply.
func (st *Stream) Poke() {
	for _, c := range []chan struct{}{st.pokes, st.relays} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

var renewDispatcherLease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') and 1 or 0`)

// runDispatcher dispatches while it holds the lease, until ctx ends; the
// lease holder also purges old dispatched events and trims the stream.
func (st *Stream) runDispatcher(ctx context.Context) {
	token := redisx.NewToken()
	lease := st.d.Keys.DispatcherLease()
	defer st.d.Redis.Eval(context.WithoutCancel(ctx), `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, []string{lease}, token)
	var leaseUntil time.Time
	var lastPurge, lastTrim time.Time
	failing := false // the last dispatch failed: warned once, not again until it succeeds
	for ctx.Err() == nil {
		if time.Until(leaseUntil) < dispatcherLeaseTTL/2 {
			held, err := renewDispatcherLease.Run(ctx, st.d.Redis, []string{lease}, token, dispatcherLeaseTTL.Milliseconds()).Int()
			if err != nil || held == 0 {
				deps.Pause(ctx, dispatchErrorPause)
				continue
			}
			leaseUntil = time.Now().Add(dispatcherLeaseTTL)
		}
		n, err := st.dispatchOnce(ctx)
		if err != nil {
			if ctx.Err() == nil && !failing {
				st.d.Log.Warn("dispatch outbox events; retrying", "err", err)
			}
			failing = true
			deps.Pause(ctx, dispatchErrorPause)
			continue
		}
		if failing {
			failing = false
			st.d.Log.Info("dispatching outbox events again")
		}
		if time.Since(lastPurge) > time.Hour {
			lastPurge = time.Now()
			if err := st.d.Store.PurgeDispatched(ctx, time.Now().Add(-dispatchedRetention)); err != nil {
				st.d.Log.Warn("purge dispatched outbox events", "err", err)
			}
		}
		if time.Since(lastTrim) >= st.d.Cfg.StreamTrimInterval {
			lastTrim = time.Now()
			st.trimStreamOnce(ctx)
		}
		if n < dispatchBatch {
			select {
			case <-ctx.Done():
			case <-st.pokes:
			case <-time.After(dispatchIdlePoll):
			}
		}
	}
}

// dispatchOnce moves one batch of events to the stream.
func (st *Stream) dispatchOnce(ctx context.Context) (int, error) {
	events, err := st.d.Store.PendingEvents(ctx, dispatchBatch)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	spans := st.startDispatchSpans(ctx, events)
	ids := make([]int64, len(events))
	entries := make([][]any, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
		entries[i] = spans.streamValues(i, []any{"event", strconv.FormatInt(ev.ID, 10), "kind", ev.Kind, "payload", ev.Payload})
	}
	// Marked only once a replica holds them too (see streamappend.go): a
	// master that dies with them unreplicated must not leave them marked.
	err = st.appendStream(ctx, entries)
	spans.end(err)
	if err != nil {
		return 0, err
	}
	// Counted once the stream holds them, before they are marked: whoever
	// sees the outbox empty then also sees them counted.
	st.d.Metrics.Dispatched.Add(float64(len(events)))
	if err := st.d.Store.MarkDispatched(ctx, ids, st.d.Now().UTC()); err != nil {
		return 0, err
	}
	return len(events), nil
}

// pause sleeps for d or until ctx ends.
func (st *Stream) pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
