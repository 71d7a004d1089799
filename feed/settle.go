package feed

import (
	"context"
	"errors"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"

	"github.com/redis/go-redis/v9"
)

// afterCommit runs after a change and its outbox event were committed. It
// wakes the dispatcher, and applies the change to the actor's own inbox at
// once (ownInbox), so that who follows or unfollows sees it on the next
// read. The event does the same again later, harmlessly; a failure here is
// only logged, since the event will do it.
func (e *Engine) afterCommit(ctx context.Context, ownInbox func(context.Context) error) {
	e.poke()
	if ownInbox == nil || e.cfg.Mode == config.ModePull {
		return
	}
	if err := ownInbox(ctx); err != nil {
		e.log.WarnContext(ctx, "apply change to own inbox; the fan-out will", "err", err)
	}
}

// Settle waits until every committed change has gone through: no outbox
// event waits, the fan-out group has read and acknowledged every message
// (tasks included), and the read replicas have applied every commit (up to
// settleReplicaWait, which a stopped replica takes whole). Tests and
// benchmarks use it to read feeds "after the workers settle".
func (e *Engine) Settle(ctx context.Context) error {
	for {
		settled, err := e.settled(ctx)
		if err != nil {
			return err
		}
		if settled {
			_, err := e.store.CatchUp(ctx, settleReplicaWait)
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
			deps.Pause(ctx, settlePoll)
		}
	}
}

const settlePoll = 5e6 // 5ms

// settleReplicaWait bounds how long Settle waits for each replica.
const settleReplicaWait = 500 * time.Millisecond

func (e *Engine) settled(ctx context.Context) (bool, error) {
	n, _, err := e.store.OutboxLag(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	last, err := e.redis.XRevRangeN(ctx, e.keys.Stream(), "+", "-", 1).Result()
	if err != nil || len(last) == 0 {
		return err == nil, err
	}
	groups, err := e.redis.XInfoGroups(ctx, e.keys.Stream()).Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return false, err
	}
	for _, g := range groups {
		if g.Name == fanoutGroup {
			return g.LastDeliveredID == last[0].ID && g.Pending == 0, nil
		}
	}
	return false, nil
}
