package timeline

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A block or unblock changes two users' feeds, and Reset drops each one's
// inbox and followee set: the next read rebuilds them (one cold read). The
// actor pays for their own changes, bounded by their mutation rate; the
// other user did nothing, and an actor who toggles a block on them (from
// as many accounts as they can make) would make each of their reads cold.
// So others' changes reset a user's state at most once per
// Config.BlockResetInterval; in between, ResetOther keeps them exact or
// hiding more, never less:
//
//   - A block (the other user's feed now hides the actor) is written into
//     the followee set: the follow the block ended leaves it and the actor
//     becomes hidden (h<id>). Reads already pass over a hidden user's
//     arrivals and posts, and the fan-out stops adding them, as for a
//     follow that ended: the feed is what a rebuild would make.
//   - An unblock (the feed no longer hides the actor) must bring back
//     the reposts of the actor's posts the inbox missed while they were
//     hidden, which only a rebuild finds. It is deferred to the end of the
//     interval (BlockResetsDue, run by RunDueResets); until then the set
//     still hides the actor, so the feed shows less, not more.

// ResetOther settles reader's state after other blocked or unblocked them:
// a Reset if none was made for such a change in the last
// BlockResetInterval (and it reports true), else the bounded change above
// (false).
func (ib *Inboxes) ResetOther(ctx context.Context, reader, other int64) (bool, error) {
	interval := ib.d.Cfg.BlockResetInterval
	if interval <= 0 {
		return true, ib.Reset(ctx, reader)
	}
	claimed, err := ib.d.Redis.SetNX(ctx, ib.d.Keys.BlockReset(reader), "1", interval).Result()
	if err != nil {
		return false, err
	}
	if claimed {
		return true, ib.Reset(ctx, reader)
	}
	ib.d.Metrics.BlockResetsBounded.Inc()
	hides, err := ib.d.Store.Hides(ctx, reader, other)
	if err != nil || !hides {
		return false, ib.deferReset(ctx, reader, err)
	}
	if err := ib.SettleFollowing(ctx, reader, other, false); err != nil {
		return false, err
	}
	if err := ib.setMember(ctx, reader, hiddenPrefix+strconv.FormatInt(other, 10), true); err != nil {
		return false, err
	}
	// An unblock committed since the check finds the member written or
	// writes after it; either way it defers a reset. Checking again here
	// covers one that wrote before this write landed.
	if hides, err = ib.d.Store.Hides(ctx, reader, other); err != nil || !hides {
		return false, ib.deferReset(ctx, reader, err)
	}
	return false, nil
}

// deferReset makes reader's reset due when their BlockReset key expires
// (an earlier due time stays). err, when not nil, is returned after it:
// a check that failed defers too, so the set is right in the end.
func (ib *Inboxes) deferReset(ctx context.Context, reader int64, err error) error {
	ttl, terr := ib.d.Redis.PTTL(ctx, ib.d.Keys.BlockReset(reader)).Result()
	if terr != nil {
		return terr
	}
	due := ib.d.Now().Add(max(ttl, 0))
	if zerr := ib.d.Redis.ZAddNX(ctx, ib.d.Keys.BlockResetsDue(), redis.Z{Score: float64(due.UnixMilli()), Member: reader}).Err(); zerr != nil {
		return zerr
	}
	return err
}

// dueResetsBatch bounds the resets one RunDueResets makes.
const dueResetsBatch = 100

// RunDueResets makes the deferred resets due by now and returns the
// readers reset. Each starts a new BlockResetInterval for its reader. An
// instance takes a reader off the due set before it resets them, so that
// a change deferred meanwhile is added again rather than lost; one that
// fails is put back.
func (ib *Inboxes) RunDueResets(ctx context.Context, now time.Time) ([]int64, error) {
	key := ib.d.Keys.BlockResetsDue()
	members, err := ib.d.Redis.ZRangeByScore(ctx, key, &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: dueResetsBatch,
	}).Result()
	if err != nil {
		return nil, err
	}
	var done []int64
	for _, m := range members {
		reader, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			ib.d.Redis.ZRem(ctx, key, m)
			continue
		}
		if n, err := ib.d.Redis.ZRem(ctx, key, m).Result(); err != nil || n == 0 {
			continue // another instance took it
		}
		if interval := ib.d.Cfg.BlockResetInterval; interval > 0 {
			err = ib.d.Redis.Set(ctx, ib.d.Keys.BlockReset(reader), "1", interval).Err()
		}
		if err == nil {
			err = ib.Reset(ctx, reader)
		}
		if err != nil {
			ib.d.Redis.ZAdd(ctx, key, redis.Z{Score: float64(now.UnixMilli()), Member: reader})
			return done, err
		}
		done = append(done, reader)
	}
	return done, nil
}
