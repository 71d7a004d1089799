package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"feedservice/api/extensions"
	"feedservice/api/settings"
	"feedservice/api/sockets"
	"feedservice/feed"
	"feedservice/graph"
	"feedservice/internal/ratelimit"
	"feedservice/internal/throttle"
	"feedservice/resolvers"
	"feedservice/store"
)

// Limits of the server that are not settings.
const (
	// maxRequestBodyBytes caps an HTTP request body.
	maxRequestBodyBytes = 1 << 20
	// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
	shutdownGrace = 20 * time.Second
	// maxSubscriptionsPerConnection caps the live subscriptions of one websocket.
	maxSubscriptionsPerConnection = 10
	// maxConnectionsPerUser caps one user's websockets on one instance.
	maxConnectionsPerUser = 10
	// queryCacheSize is how many parsed documents the server keeps.
	queryCacheSize = 1000
	// redisDialTimeout and redisIOTimeout bound every Redis call, so that a
	// feed read falls back to MySQL quickly when Redis is away.
	redisDialTimeout = time.Second
	redisIOTimeout   = 500 * time.Millisecond
	// redisClusterStateReload is the most time a Redis Cluster client uses
	// its map of slots to masters before a command reloads it (CLUSTER
	// SLOTS, in the background). go-redis reloads at once on a MOVED
	// answer, but a dead master answers nothing: without this the client
	// would keep dialling it for go-redis's default of 60s after its
	// replica took over. One reload a second costs one small command.
	redisClusterStateReload = time.Second
)

// app is the state of one server instance, built once at start and handed
// to everything that needs it.
type app struct {
	cfg     settings.Settings
	log     *slog.Logger
	store   *store.Store
	redis   redis.UniversalClient
	engine  *feed.Engine
	limiter *ratelimit.Limiter // spends the budgets of the rate limits (limits.go)
	// sockets are the sessions of the open websockets (api/sockets).
	sockets sockets.Sessions
	// operations bounds the operations in flight (inflight.go).
	operations *operationGate
	answers    *answerBudget
	metrics    *serverMetrics
	// tracer makes the spans (tracing.go); nil when tracing is off.
	tracer trace.TracerProvider
	// websockets are the open sockets, closed with 1001 on shutdown.
	websockets sockets.Conns
	// untrustedForwarding spaces the warnings of X-Forwarded-For sent by
	// a peer that is not a trusted proxy (clientIP).
	untrustedForwarding throttle.Throttle
	// subscriptionLoaderSets counts the loader sets a subscription's events
	// made (they are made on a field's first load; a count event makes
	// none): TestUnreadCountEventsMakeNoLoaders reads it.
	subscriptionLoaderSets atomic.Int64
	// resolvers answer the GraphQL schema's fields; the page benchmarks swap
	// them for ones that answer from memory, to measure the layer above.
	resolvers graph.ResolverRoot
	// gqlgenExecutor runs every operation on gqlgen's own executor instead
	// of the fast one (graph.NewFastExecutableSchema); the page benchmarks
	// set it to compare the two in one run.
	gqlgenExecutor bool
	// gqlgenTransports answers GET and POST with gqlgen's own transports
	// instead of extensions.GET and POST; TestTransportsAnswerAsGqlgens
	// compares the two.
	gqlgenTransports bool
	// parsedDocuments is gqlgen's cache of parsed and validated documents.
	parsedDocuments *extensions.BoundedLRU[*ast.QueryDocument]
	// refusals are the subjects the complexity budget refused lately,
	// whose queries wait for their price before they run.
	refusals *extensions.RecentRefusals
	closers  []func()
	// engineCtx is what the engine runs under once startEngine started it.
	engineCtx     context.Context
	engineStarted bool
}

// newApp opens the database (migrating it) and Redis, and starts the engine.
// What it starts lives until ctx ends or close is called. onStore, when
// given, sees the store before anything runs on it (tests count queries).
func newApp(ctx context.Context, cfg settings.Settings, log *slog.Logger, onStore ...func(*store.Store)) (*app, error) {
	a, err := openApp(ctx, cfg, log, onStore...)
	if err != nil {
		return nil, err
	}
	a.startEngine()
	return a, nil
}

// openApp is newApp without starting the engine: no dispatcher, fan-out
// worker or subscription hub runs yet, so nothing is derived in Redis.
func openApp(ctx context.Context, cfg settings.Settings, log *slog.Logger, onStore ...func(*store.Store)) (*app, error) {
	log = withRequestIDLogs(log)
	a := &app{cfg: cfg, log: log, untrustedForwarding: throttle.Throttle{Every: cfg.RateLimitWarnInterval}}
	ok := false
	defer func() {
		if !ok {
			a.close()
		}
	}()
	if cfg.MySQLDSN == "" || len(cfg.TokenSecret) == 0 {
		if err := secureDataDir(cfg.DataDir, cfg.MySQLDSN == ""); err != nil {
			return nil, err
		}
	}
	tp, err := startTracing(ctx)
	if err != nil {
		return nil, err
	}
	if tp != nil {
		a.tracer = tp
		a.closers = append(a.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
			defer cancel()
			tp.Shutdown(ctx)
		})
	}
	st, err := store.Open(ctx, store.Config{MySQLDSN: cfg.MySQLDSN, SQLitePath: filepath.Join(cfg.DataDir, sqliteFile),
		ReplicaDSNs: cfg.MySQLReplicaDSNs, ReplicaMaxLag: cfg.ReplicaMaxLag, ShardDSNs: cfg.MySQLShardDSNs,
		RelayAppliedRetention: cfg.RelayAppliedRetention, TracerProvider: a.tracer})
	if err != nil {
		return nil, err
	}
	a.store = st
	a.closers = append(a.closers, func() { st.Close() })
	for _, f := range onStore {
		f(st)
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range applied {
		log.Info("migrated", "step", m)
	}
	if a.redis, err = openRedis(cfg.RedisAddr, cfg.RedisPool(), &a.closers); err != nil {
		return nil, err
	}
	if a.tracer != nil {
		if err := traceRedis(a.redis, a.tracer); err != nil {
			return nil, fmt.Errorf("redis tracing: %w", err)
		}
	}
	sqlDB, err := st.DB().DB()
	if err != nil {
		return nil, err
	}
	a.metrics = newServerMetrics(sqlDB, a.redis)
	a.operations = &operationGate{maxTotal: cfg.MaxOperationsInFlight, maxPerAddress: cfg.MaxOperationsPerAddress, maxPerViewer: cfg.MaxOperationsPerViewer, metrics: a.metrics}
	a.answers = newAnswerBudget(cfg.MaxResponseBytesInFlight, cfg.MaxResponseBytes, cfg.MaxOperationsPerAddress, cfg.MaxOperationsInFlight)
	secret, err := tokenSecret(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.MySQLDSN == "" || len(cfg.TokenSecret) == 0 {
		// SQLite's -wal and -shm files, and the secret, now exist.
		if err := secureDataFiles(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if len(cfg.TokenSecret) == 0 && cfg.MySQLDSN != "" {
		log.Warn("TOKEN_SECRET is not set: this instance signs tokens with a secret of its own under -data; " +
			"instances behind one load balancer must share TOKEN_SECRET or they refuse each other's tokens")
	}
	if cfg.Introspection && cfg.MySQLDSN != "" {
		// MySQL marks a production set-up; the default suits the embedded
		// one, where GraphiQL's docs need introspection.
		log.Warn("INTROSPECTION is on with MYSQL_DSN set: anyone may read the whole schema; set INTROSPECTION=false (-introspection=false) in production")
	}
	engineCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	a.engineCtx = engineCtx
	a.closers = append(a.closers, stopEngine)
	engineCfg, err := cfg.Engine(secret, a.tracer)
	if err != nil {
		return nil, err
	}
	a.engine, err = feed.New(engineCtx, engineCfg, st, a.redis, log)
	if err != nil {
		return nil, err
	}
	// The limiter's metrics are on the engine's registry, which /metrics
	// serves.
	a.limiter = ratelimit.New(a.redis, cfg.KeyPrefix, a.engine.Registry(), cfg.RateLimitWarnInterval, ratelimit.DefaultFallbackSubjects, log)
	a.sockets = sockets.Sessions{Engine: a.engine, Log: log, MaxPerUser: maxConnectionsPerUser}
	a.engine.WatchLogOuts(&a.sockets)
	a.resolvers = &resolvers.Resolver{Engine: a.engine}
	a.closers = append(a.closers, func() { stopEngine(); a.engine.Wait(); a.engine.Close() })
	ok = true
	return a, nil
}

// startEngine starts the engine's dispatcher, fan-out workers and
// subscription hub, which run until close.
func (a *app) startEngine() {
	a.engine.Start(a.engineCtx)
	a.engineStarted = true
}

// openRedis connects to REDIS_ADDR, or starts the embedded in-process Redis
// when it is empty. One address is a single Redis; a comma list is the seed
// nodes of a Redis Cluster, for a cluster client with the same settings.
//
// The embedded Redis listens on a loopback port, where any local process
// could reach it: it requires a password of 32 random bytes, made at each
// start and known only to this process, so that none can rewrite the
// cached posts or the rate-limit budgets.
func openRedis(addr string, pool settings.RedisPool, closers *[]func()) (redis.UniversalClient, error) {
	var password string
	if addr == "" {
		secret := make([]byte, 32)
		rand.Read(secret)
		password = hex.EncodeToString(secret)
		mr := miniredis.NewMiniRedis()
		mr.RequireAuth(password)
		if err := mr.Start(); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		*closers = append(*closers, mr.Close)
		addr = mr.Addr()
	}
	var addrs []string
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	// Short timeouts: a read that cannot reach Redis falls back to MySQL
	// within the request instead of hanging.
	opt := &redis.UniversalOptions{
		Addrs:         addrs, // several: a *redis.ClusterClient
		Password:      password,
		DialTimeout:   redisDialTimeout,
		ReadTimeout:   redisIOTimeout,
		WriteTimeout:  redisIOTimeout,
		MaxRetries:    1, // one retry, not three: fall back to MySQL quickly
		DialerRetries: 1,
		PoolSize:      pool.Size,
		PoolTimeout:   pool.Timeout,
	}
	var rdb redis.UniversalClient
	if len(addrs) > 1 {
		cluster := opt.Cluster()
		cluster.ClusterStateReloadInterval = redisClusterStateReload
		rdb = redis.NewClusterClient(cluster)
	} else {
		rdb = redis.NewUniversalClient(opt)
	}
	*closers = append(*closers, func() { rdb.Close() })
	return rdb, nil
}

// close stops what newApp started, in reverse order.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
