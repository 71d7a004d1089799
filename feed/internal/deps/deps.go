// Package deps is the one small set of shared resources every part of the
// engine is made with: settings, MySQL, Redis, key names, log, metrics,
// clock and ids. Each part takes it in its constructor; none reaches
// another part through it.
package deps

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/store"
)

// Deps are the engine's shared resources.
type Deps struct {
	Cfg     config.Config
	Store   *store.Store
	Redis   redis.UniversalClient
	Keys    keyspace.Keys
	Log     *slog.Logger
	Metrics *metrics.Metrics
	// Now is the time to the millisecond (see NowMillis).
	Now func() time.Time
	IDs *ids.IDGenerator
	// WarnRedis logs a failure of Redis that the caller survives (a
	// cache read or write), at most once per Config.RateLimitWarnInterval
	// with the count of those held back: while Redis is away every read
	// would otherwise log one.
	WarnRedis func(msg string, err error)
	// FanoutClaimAfter, when set, is how long a fan-out message may stay
	// unacknowledged before another worker takes it over, in place of
	// fanout.ClaimAfter: tests shorten it for the engines they start.
	FanoutClaimAfter time.Duration
	// InboxTrimEvery, when set, makes one delivery in this many trim its
	// inbox, in place of timeline.InboxTrimEvery: tests lower it for the
	// engines they start, to make trims frequent.
	InboxTrimEvery uint64
}

// NowMillis is the time to the millisecond: what MySQL's DATETIME(3) keeps,
// so a time returned by a mutation is the time later reads return.
func NowMillis() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Pause waits d, or until ctx ends.
func Pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
