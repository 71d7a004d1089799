// Package feed is the service's engine: accounts, relations, posts and the
// home feed, over the store (MySQL) and Redis. It knows nothing of GraphQL.
package feed

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/throttle"
	"feedservice/store"
)

// Engine carries out every action of the API.
type Engine struct {
	cfg   config.Config
	store *store.Store
	redis redis.UniversalClient
	keys  keyspace.Keys
	ids   *ids.IDGenerator
	log   *slog.Logger
	now   func() time.Time

	metrics  *metrics.Metrics
	pokes    chan struct{} // wakes the dispatcher after a commit
	instance string        // this instance's name among the fan-out consumers
	running  sync.WaitGroup
	hub      *hub // live subscriptions; set by Start
	// cacheWarn spaces the warnings of failed cache reads and writes.
	cacheWarn throttle.Throttle

	decoy string // a password hash no password matches, for unknown users

	local localTiers // in-process copies of users and posts
	// invalidationSyncs are the SyncInvalidations waiting, by token.
	invalidationSyncs sync.Map
}

// New starts an engine. It leases an id node number from Redis unless one is
// configured; the lease lives until ctx ends.
func New(ctx context.Context, cfg config.Config, st *store.Store, rdb redis.UniversalClient, log *slog.Logger) (*Engine, error) {
	if len(cfg.TokenSecret) < 32 {
		return nil, fmt.Errorf("token secret must be at least 32 bytes")
	}
	cfg = cfg.WithDefaults()
	e := &Engine{cfg: cfg, store: st, redis: rdb, keys: keyspace.New(cfg.KeyPrefix), log: log, now: nowMillis, metrics: metrics.New(),
		pokes: make(chan struct{}, 1), instance: newToken(),
		cacheWarn: throttle.Throttle{Every: cfg.RateLimitWarnInterval}}
	e.local = newLocalTiers(cfg, e.metrics)
	// The decoy is made now, not at the first unknown user's log-in, which
	// would otherwise take two bcrypt runs and stand out.
	decoy, err := e.hashPassword("decoy password, never valid")
	if err != nil {
		return nil, fmt.Errorf("bcrypt decoy: %w", err)
	}
	e.decoy = decoy
	node := cfg.NodeID
	if node < 0 {
		var err error
		if node, err = ids.LeaseNode(ctx, rdb, e.keys, log); err != nil {
			return nil, fmt.Errorf("lease id node: %w", err)
		}
	}
	ids, err := ids.NewIDGenerator(node)
	if err != nil {
		return nil, err
	}
	e.ids = ids
	if cfg.Mode != config.ModePull || cfg.FanoutWorkers > 0 {
		e.ensureGroup(ctx)
	}
	log.Info("engine ready", "idNode", node)
	return e, nil
}

// nowMillis is the time to the millisecond: what MySQL's DATETIME(3) keeps,
// so a time returned by a mutation is the time later reads return.
func nowMillis() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Ready checks that MySQL and Redis both answer.
func (e *Engine) Ready(ctx context.Context) error {
	if err := e.store.Ping(ctx); err != nil {
		return err
	}
	if err := e.redis.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// Registry is the registry of the engine's metrics, for /metrics.
func (e *Engine) Registry() *prometheus.Registry { return e.metrics.Registry }
