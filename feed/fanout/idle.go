package fanout

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/deps"
)

// WaitIdle waits until every committed change has gone through: no outbox
// event waits, the fan-out group has read and acknowledged every message
// (tasks included), and the read replicas have applied every commit (up to
// settleReplicaWait, which a stopped replica takes whole). Tests and
// benchmarks use it to read feeds once the workers are idle.
func (st *Stream) WaitIdle(ctx context.Context) error {
	for {
		settled, err := st.settled(ctx)
		if err != nil {
			return err
		}
		if settled {
			_, err := st.d.Store.CatchUp(ctx, settleReplicaWait)
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

// settleReplicaWait bounds how long WaitIdle waits for each replica.
const settleReplicaWait = 500 * time.Millisecond

func (st *Stream) settled(ctx context.Context) (bool, error) {
	n, _, err := st.d.Store.OutboxLag(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	last, err := st.d.Redis.XRevRangeN(ctx, st.d.Keys.Stream(), "+", "-", 1).Result()
	if err != nil || len(last) == 0 {
		return err == nil, err
	}
	groups, err := st.d.Redis.XInfoGroups(ctx, st.d.Keys.Stream()).Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return false, err
	}
	for _, g := range groups {
		if g.Name == Group {
			return g.LastDeliveredID == last[0].ID && g.Pending == 0, nil
		}
	}
	return false, nil
}
