package fanout

import (
	"context"
	"errors"
	"time"

	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/redisx"
)

// The relay of the sharded layout: a write between users of two data
// nodes commits on the actor's node with the other node's half, which
// store.ApplyRelays writes there, with the write's outbox events. One
// instance at a time runs it, holding a lease as the dispatcher does. A
// commit pokes it (Poke), so a half is applied at once; a node that does
// not answer is retried every relayErrorPause until it does, and its
// halves wait, in their order, while the other nodes' go on. A round
// ends with the lease: the target nodes keep the ids of the halves
// applied for a time (store.Config.RelayAppliedRetention) that must
// outlast any round, in case a second instance took the lease meanwhile
// and applies the same halves. The holder removes the ids past it every
// relayAppliedPruneInterval.
const (
	relayBatch                = 200
	relayIdlePoll             = 50 * time.Millisecond
	relayErrorPause           = 250 * time.Millisecond
	relayAppliedPruneInterval = time.Minute
)

// runRelay applies the relay's halves while it holds the lease, until ctx
// ends, and wakes the dispatcher for the events they wrote.
func (st *Stream) runRelay(ctx context.Context) {
	token := redisx.NewToken()
	lease := st.d.Keys.RelayLease()
	defer st.d.Redis.Eval(context.WithoutCancel(ctx), `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, []string{lease}, token)
	var leaseUntil, lastPrune time.Time
	failing := false // warned once, not again until a round succeeds
	for ctx.Err() == nil {
		if time.Until(leaseUntil) < dispatcherLeaseTTL/2 {
			asked := time.Now()
			held, err := renewDispatcherLease.Run(ctx, st.d.Redis, []string{lease}, token, dispatcherLeaseTTL.Milliseconds()).Int()
			if err != nil || held == 0 {
				deps.Pause(ctx, relayErrorPause)
				continue
			}
			leaseUntil = asked.Add(dispatcherLeaseTTL)
		}
		round, cancel := context.WithDeadline(ctx, leaseUntil)
		n, err := st.d.Store.ApplyRelays(round, relayBatch)
		cancel()
		if n > 0 {
			select {
			case st.pokes <- struct{}{}:
			default:
			}
		}
		if err != nil && ctx.Err() == nil && errors.Is(round.Err(), context.DeadlineExceeded) {
			continue // the round outlasted the lease: renew it, then go on
		}
		if err != nil {
			if ctx.Err() == nil && !failing {
				st.d.Log.Warn("apply the relay's halves; retrying", "err", err)
			}
			failing = true
			deps.Pause(ctx, relayErrorPause)
			continue
		}
		if failing {
			failing = false
			st.d.Log.Info("the relay's halves apply again")
		}
		if time.Since(lastPrune) >= relayAppliedPruneInterval {
			lastPrune = time.Now()
			if _, err := st.d.Store.PruneRelayApplied(ctx); err != nil && ctx.Err() == nil {
				st.d.Log.Warn("prune the ids of the relay's applied halves", "err", err)
			}
		}
		if n < relayBatch {
			select {
			case <-ctx.Done():
			case <-st.relays:
			case <-time.After(relayIdlePoll):
			}
		}
	}
}
