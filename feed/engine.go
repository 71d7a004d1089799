// Package feed is the service's engine: accounts, relations, posts and the
// home feed, over the store (MySQL) and Redis. It knows nothing of GraphQL.
// Its Engine is the facade the API calls; the work is done by the packages
// below it (docs/architecture.md, "Packages").
package feed

import (
	"context"
	"errors"
	"feedservice/feed/pull"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/auth"
	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/feed/home"
	"feedservice/feed/ids"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/jumps"
	"feedservice/feed/lists"
	"feedservice/feed/live"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/replicas"
	"feedservice/feed/timeline"
	"feedservice/internal/throttle"
	"feedservice/models"
	"feedservice/store"
)

// Engine carries out every action of the API.
type Engine struct {
	d     *deps.Deps
	cfg   config.Config
	store *store.Store
	redis redis.UniversalClient
	keys  keyspace.Keys
	ids   *ids.IDGenerator
	log   *slog.Logger
	now   func() time.Time

	metrics  *metrics.Metrics
	pub      *livemsg.Publisher
	rep      *replicas.Router
	cache    *cache.Tiers
	pull     *pull.Feeds
	inboxes  *timeline.Inboxes
	outboxes *outbox.Outboxes
	jumps    *jumps.Lists
	stream   *fanout.Stream
	reads    *timeline.Reads
	lists    *lists.Copies
	home     *home.Mixer
	subs     *live.Streams // set by Start

	running sync.WaitGroup
	stopped sync.Once // the local tiers' clean-up goroutines, by Close
	hub     *live.Hub // live subscriptions; set by Start
	// cacheWarn spaces the warnings of failed cache reads and writes.
	cacheWarn throttle.Throttle

	tokens    *auth.Tokens
	passwords *auth.Passwords
	// logOuts is told of every log-out (WatchLogOuts); nil tells no one.
	logOuts LogOutWatcher
}

// New starts an engine. It leases an id node number from Redis unless one is
// configured; the lease lives until ctx ends.
func New(ctx context.Context, cfg config.Config, st *store.Store, rdb redis.UniversalClient, log *slog.Logger) (*Engine, error) {
	if len(cfg.TokenSecret) < 32 {
		return nil, fmt.Errorf("token secret must be at least 32 bytes")
	}
	cfg = cfg.WithDefaults()
	e := &Engine{cfg: cfg, store: st, redis: rdb, keys: keyspace.New(cfg.KeyPrefix), log: log, now: deps.NowMillis, metrics: metrics.New(),
		cacheWarn: throttle.Throttle{Every: cfg.RateLimitWarnInterval}}
	node := cfg.NodeID
	if node < 0 {
		var err error
		if node, err = ids.LeaseNode(ctx, rdb, e.keys.IDNode, log); err != nil {
			return nil, fmt.Errorf("lease id node: %w", err)
		}
	}
	gen, err := ids.NewIDGenerator(node)
	if err != nil {
		return nil, err
	}
	e.ids = gen
	e.d = &deps.Deps{Cfg: cfg, Store: st, Redis: rdb, Keys: e.keys, Log: log, Metrics: e.metrics, Now: e.now, IDs: gen, WarnRedis: e.warnCache}
	e.pub = livemsg.NewPublisher(rdb, e.keys, log)
	e.rep = replicas.New(st, rdb, e.keys, e.warnCache)
	e.cache = cache.New(e.d, e.pub, e.rep)
	e.pull = pull.NewFeeds(e.d, e.cache)
	e.inboxes = timeline.NewInboxes(e.d, e.cache, e.rep, e.pull)
	e.outboxes = outbox.New(e.d, e.cache)
	e.jumps = jumps.New(e.d)
	e.lists = lists.New(e.d, e.cache)
	e.stream = fanout.New(e.d, e.pub, e.cache, e.inboxes, e.outboxes, e.jumps, e.lists)
	e.reads = timeline.NewReads(e.d, e.rep, e.cache, e.pull, e.inboxes, e.outboxes)
	e.home = home.New(e.d, e.cache, e.reads)
	e.tokens = auth.NewTokens(cfg.TokenSecret, cfg.TokenTTL, e.now)
	if e.passwords, err = auth.NewPasswords(cfg.BcryptCost, e.metrics.PasswordHashes); err != nil {
		return nil, err
	}
	if cfg.Mode != config.ModePull || cfg.FanoutWorkers > 0 {
		e.stream.EnsureGroup(ctx)
	}
	log.Info("engine ready", "idNode", node)
	return e, nil
}

// Start runs the live-update hub, the dispatcher and the fan-out workers
// until ctx ends.
func (e *Engine) Start(ctx context.Context) {
	e.hub = live.NewHub(ctx, e.d, e.cache.OnInvalidation, e.cache.OnResubscribed, e.outboxes.DropCopy)
	e.subs = live.NewStreams(e.d, e.hub, e.reads, e.inboxes, e.outboxes)
	e.goRun(ctx, e.hub.Run)
	e.stream.Start(ctx, e.goRun)
	if e.cfg.BlockResetInterval > 0 {
		e.goRun(ctx, e.runDueBlockResets)
	}
	e.goRun(ctx, func(ctx context.Context) {
		<-ctx.Done()
		e.Close()
	})
}

// Close ends what New started: the clean-up goroutines of the local
// tiers. Start's context ending closes the engine too; an engine never
// started (an instance that only answers requests) needs Close. It is
// safe to call more than once.
func (e *Engine) Close() {
	e.stopped.Do(func() {
		e.cache.Stop()
		e.outboxes.Stop()
		e.lists.Stop()
		e.inboxes.Stop()
	})
}

// Wait blocks until everything Start started has stopped, and the writes
// of rebuilt inboxes that reads left to the background are done.
func (e *Engine) Wait() {
	e.running.Wait()
	e.inboxes.Wait()
}

func (e *Engine) goRun(ctx context.Context, fn func(context.Context)) {
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		fn(ctx)
	}()
}

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

// warnCache logs a failure of Redis that a read or write survives (the
// deps' WarnRedis), at most once per RateLimitWarnInterval with the count
// of those held back. A cancelled context is not logged.
func (e *Engine) warnCache(msg string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the caller gave up, not Redis: no operator's news
	}
	if ok, suppressed := e.cacheWarn.Take(time.Now()); ok {
		e.log.Warn(msg, "err", err, "suppressed", suppressed)
	}
}

// CachedUsers returns the users of ids that this instance holds in its
// local tier, without I/O, for callers that would otherwise wait to batch
// a load (the dataloaders). The values are shared: read them only.
func (e *Engine) CachedUsers(ids []int64) map[int64]*models.User { return e.cache.CachedUsers(ids) }

// CachedPosts is CachedUsers for posts, deleted ones included.
func (e *Engine) CachedPosts(ids []int64) map[int64]*models.Post { return e.cache.CachedPosts(ids) }

// WaitIdle waits for the inboxes' background writes and until every
// committed change has gone through the fan-out
// and the read replicas (see fanout.Stream.WaitIdle): tests and benchmarks
// read feeds "after the workers settle".
func (e *Engine) WaitIdle(ctx context.Context) error {
	e.inboxes.Wait()
	return e.stream.WaitIdle(ctx)
}

// IsUnavailable says whether err is MySQL that could not be reached or went
// away mid-statement, rather than a fault of the request or of the code:
// the client may retry (UNAVAILABLE).
func IsUnavailable(err error) bool { return store.IsUnavailable(err) }
