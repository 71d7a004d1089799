package fanout

import (
	"context"
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
// halves wait, in their order, while the other nodes' go on.
const (
	relayBatch      = 200
	relayIdlePoll   = 50 * time.Millisecond
	relayErrorPause = 250 * time.Millisecond
)

// runRelay applies the relay's halves while it holds the lease, until ctx
// ends, and wakes the dispatcher for the events they wrote.
func (st *Stream) runRelay(ctx context.Context) {
	token := redisx.NewToken()
	lease := st.d.Keys.RelayLease()
	defer st.d.Redis.Eval(context.WithoutCancel(ctx), `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, []string{lease}, token)
	var leaseUntil time.Time
	failing := false // warned once, not again until a round succeeds
	for ctx.Err() == nil {
		if time.Until(leaseUntil) < dispatcherLeaseTTL/2 {
			held, err := renewDispatcherLease.Run(ctx, st.d.Redis, []string{lease}, token, dispatcherLeaseTTL.Milliseconds()).Int()
			if err != nil || held == 0 {
				deps.Pause(ctx, relayErrorPause)
				continue
			}
			leaseUntil = time.Now().Add(dispatcherLeaseTTL)
		}
		n, err := st.d.Store.ApplyRelays(ctx, relayBatch)
		if n > 0 {
			select {
			case st.pokes <- struct{}{}:
			default:
			}
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
		if n < relayBatch {
			select {
			case <-ctx.Done():
			case <-st.relays:
			case <-time.After(relayIdlePoll):
			}
		}
	}
}
