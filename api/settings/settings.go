// Package settings holds every setting of the server: its flag, its
// environment variable and its default, read once at start (Parse), listed
// by -h (WriteFlags), checked, logged, and built into the engine's
// configuration (Settings.Engine).
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"feedservice/dataloader"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/ratelimit"
	"feedservice/store"
)

// Defaults and bounds of the server's own settings (the engine's are in
// feed/config).
const (
	// DefaultWebsocketInitTimeout is how long a websocket may stay open
	// without a connection_init by default.
	DefaultWebsocketInitTimeout = 10 * time.Second
	// DefaultWebsocketPing is how often the server pings a websocket client
	// by default; a client silent for twice that is dropped.
	DefaultWebsocketPing = 20 * time.Second
	// DefaultMaxQueryTokens caps the tokens of a GraphQL document by
	// default. Validating a document's overlapping fields costs the square
	// of its fields: 10,000 repeated fields took a minute of CPU uncapped.
	DefaultMaxQueryTokens = 2000
	// DefaultMaxQueryComplexity is the most an operation may cost by
	// default: a field costs 1 plus its children; a connection costs 1 plus
	// first (or last, or the default page size) times its children; a text
	// field by its size (resolvers.TextBytesPerUnit). The app's feed page of
	// 100 costs about 8,600; friends of friends at 100 x 100
	// costs 30,000.
	DefaultMaxQueryComplexity = 10000
	// DefaultMaxQueryDepth is how deep fields may nest by default; GraphiQL's
	// introspection query is 15 deep.
	DefaultMaxQueryDepth = 20
	// DefaultMaxQueryFields is how many fields an operation may select by
	// default, counted with every fragment spread expanded: GraphiQL's
	// introspection query selects 230 and the app's feed page 41. Past it
	// the expansion, not the document, is large: sixty fragments that each
	// spread the one before twice are 2^60 fields, and gqlgen's complexity
	// walk would visit every one.
	DefaultMaxQueryFields = 1000
	// DefaultMaxBatchOperations is how many operations one batched request
	// may carry by default.
	DefaultMaxBatchOperations = 10
	// DefaultMutationRate is each viewer's (or signed-out IP's) budget of
	// mutations by default.
	DefaultMutationRate = "120/1m"
	// DefaultAuthRate is each client IP's budget of signUp and logIn by
	// default: enough for a household behind one address, too few to guess
	// passwords.
	DefaultAuthRate = "20/1m"
	// DefaultPersistedQueryTTL is how long a persisted query is kept after it
	// was last sent in full, by default.
	DefaultPersistedQueryTTL = 24 * time.Hour
	// DefaultRedisPoolSize is how many pooled Redis connections (per node on
	// a cluster) requests and fan-out work share by default. Each fan-out
	// worker gets one more on top, which its blocking stream read holds, so
	// idle workers never take a connection requests need.
	DefaultRedisPoolSize = 50
	// DefaultRedisPoolTimeout is how long a Redis call waits for a free
	// pooled connection by default; past it the call fails, and a read falls
	// back to MySQL.
	DefaultRedisPoolTimeout = time.Second
	// MaxRepostListMax bounds -repost-list-max: a post's copy with this many
	// reposts listed is some 100 KB, read whole on every page that shows it.
	MaxRepostListMax = 10_000
	// MaxFoldsRunning bounds -folds-running: more folds at once than
	// Redis's connections an instance keeps would queue for them.
	MaxFoldsRunning = 1_000
	// MaxRebuildsRunning bounds -rebuilds-running: each running rebuild
	// holds a MySQL connection and a Redis one.
	MaxRebuildsRunning = 1_000
	// DefaultGOGC is the garbage collector's target (-gogc, GOGC) the server
	// runs with when none is set: the heap may grow to five times what is
	// live before a collection, where Go's own default is twice. A warm page
	// allocates about 480 KB (mostly gqlgen's per-field work) over a live
	// heap of a few tens of MB, so at Go's default the collector ran some
	// twenty times a second under load and took about a third of the CPU;
	// at 400 the in-process page benchmark serves 1.5x the pages (see
	// docs/performance.md). GOMEMLIMIT, which Go also reads, still caps the
	// heap where memory is tight.
	DefaultGOGC = 400
	// MinGOGC and MaxGOGC bound -gogc: below 50 the collector runs almost
	// all the time; above 10,000 a burst of garbage can grow the heap a
	// hundredfold before it runs. GOGC=off is refused: it lets the heap
	// grow without bound.
	MinGOGC = 50
	MaxGOGC = 10_000
)

// Settings is every setting of the server; each has a flag and an
// environment variable, and the environment gives the default of the flag.
type Settings struct {
	Addr     string
	DataDir  string
	MySQLDSN string
	// MySQLReplicaDSNs are the read replicas of MySQLDSN (parsed from the
	// comma list MYSQL_REPLICA_DSNS); ReplicaMaxLag how far behind one may
	// serve the reads that may lag (see store/replicas.go).
	MySQLReplicaDSNs []string
	ReplicaMaxLag    time.Duration
	// MySQLShardDSNs are the data nodes under MySQLDSN when it is a
	// MariaDB head with the Spider engine (MYSQL_SHARD_DSNS; see
	// store/shards.go): migrate makes the sharded layout over them.
	MySQLShardDSNs []string
	// RelayAppliedRetention is how long a data node keeps the id of a
	// relay change it applied once the change is gone
	// (RELAY_APPLIED_RETENTION; see store/relay.go's relayApplied).
	RelayAppliedRetention time.Duration
	// CopyFromDSN is the one database shard-copy copies into the sharded
	// layout of MySQLDSN and MySQLShardDSNs (COPY_FROM_DSN).
	CopyFromDSN    string
	RedisAddr      string
	GraphiQL       bool
	AllowedOrigins string
	Seed           bool

	// Config is the engine's settings: their flags write into it, and
	// Engine hands it to the engine, with the three whose 0 means "none"
	// here mapped to the engine's negative. Its TokenSecret is the one
	// given (TOKEN_SECRET), empty when the server keeps its own.
	feedconfig.Config

	GOGC             int
	OperatorToken    string
	WebsocketPing    time.Duration
	WebsocketInit    time.Duration
	LoaderWait       time.Duration
	RedisPoolSize    int
	RedisPoolTimeout time.Duration

	Introspection      bool
	MaxQueryComplexity int
	MaxQueryDepth      int
	MaxBatchOperations int
	MutationRate       ratelimit.Rate
	AuthRate           ratelimit.Rate
	TrustedProxies     []netip.Prefix
	PersistedQueryTTL  time.Duration
	MaxQueryTokens     int
	MaxQueryFields     int

	// TraceTrustedCallers are the peers whose traceparent header a request's
	// span continues (api/tracing.go); any other caller's is only linked.
	TraceTrustedCallers []netip.Prefix

	ClientLimits // timeouts, connection and cache caps, the metrics listener
}

// Parse reads the flags of args, with the environment under them, and
// returns the words of args that are not flags (a command), in order: flags
// may stand before and after them. -h or --help is flag.ErrHelp, with
// nothing printed (WriteFlags lists the flags). An environment value that
// does not parse is an error, not the default.
func Parse(args []string) (Settings, []string, error) {
	var s Settings
	var env environment
	fs, text := newFlagSet(&s, &env)
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return s, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := s.readText(text); err != nil {
		return s, nil, err
	}
	if len(env.errs) > 0 {
		return s, nil, errors.Join(env.errs...)
	}
	return s, words, s.check()
}

// commonFlags are the settings a newcomer reaches for first, in the order
// -h lists them above the others: where the server listens and keeps its
// data, the two backends, the shared secret, the feed mode and the demo
// graph.
var commonFlags = []string{"addr", "data", "mysql-dsn", "redis-addr", "token-secret", "feed-mode", "seed", "metrics-addr"}

// WriteFlags writes every flag with its environment variable and default
// (the environment's value, when set), as -h shows them: the common ones
// first, then the others in alphabetical order.
func WriteFlags(w io.Writer) {
	fs, _ := newFlagSet(new(Settings), new(environment))
	rest := flag.NewFlagSet("other", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(commonFlags, f.Name) {
			rest.Var(f.Value, f.Name, f.Usage)
		}
	})
	fmt.Fprint(w, "\nCommon settings:\n")
	for _, name := range commonFlags {
		// One flag set each, since PrintDefaults sorts by name.
		one := flag.NewFlagSet(name, flag.ContinueOnError)
		f := fs.Lookup(name)
		one.Var(f.Value, f.Name, f.Usage)
		one.SetOutput(w)
		one.PrintDefaults()
	}
	fmt.Fprint(w, "\nEvery other setting:\n")
	rest.SetOutput(w)
	rest.PrintDefaults()
}

// textSettings are the settings whose flags are read as text and parsed
// after the flags (readText): lists and rates.
type textSettings struct {
	replicaDSNs, shardDSNs, mutationRate, authRate, trustedProxies, traceTrustedCallers *string
}

// newFlagSet registers every setting's flag on a new flag set, writing into
// c, each with its environment variable's value (or the default) as its
// default; env keeps the values that do not parse. Parse errors are
// returned, not printed.
func newFlagSet(c *Settings, env *environment) (*flag.FlagSet, textSettings) {
	fs := flag.NewFlagSet("feedservice", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var text textSettings
	text.replicaDSNs, text.shardDSNs = c.backendFlags(fs, env)
	text.trustedProxies = c.clientFlags(fs, env)
	text.traceTrustedCallers = fs.String("trace-trusted-callers", env.text("TRACE_TRUSTED_CALLERS", ""), "comma list of caller IPs or CIDRs whose traceparent header a request's trace continues, sampling decision included; anyone else's is linked, not followed; empty: no one (TRACE_TRUSTED_CALLERS)")
	c.feedFlags(fs, env)
	c.fanoutFlags(fs, env)
	c.cacheFlags(fs, env)
	c.homeFlags(fs, env)
	c.websocketFlags(fs, env)
	text.mutationRate, text.authRate = c.requestFlags(fs, env)
	c.ClientLimits.flags(fs, env)
	return fs, text
}

// backendFlags registers where the server listens and keeps its data: the
// address, the data directory, MySQL and its replicas, Redis. It returns
// the replica and data node lists, read as text.
func (c *Settings) backendFlags(fs *flag.FlagSet, env *environment) (replicaDSNs, shardDSNs *string) {
	addr := env.text("ADDR", "")
	if addr == "" {
		addr = "127.0.0.1:8080"
		if port := os.Getenv("PORT"); port != "" {
			addr = ":" + port
		}
	}
	fs.StringVar(&c.Addr, "addr", addr, "listen address (ADDR; PORT alone listens on :PORT)")
	fs.StringVar(&c.DataDir, "data", env.text("DATA_DIR", "./data"), "directory of the embedded database and generated secret (DATA_DIR)")
	env.secret(fs, &c.MySQLDSN, "MYSQL_DSN", "mysql-dsn", "MySQL DSN, e.g. user:pass@tcp(host:3306)/feed; empty: embedded SQLite under -data (MYSQL_DSN)")
	replicaDSNs, shardDSNs = new(string), new(string)
	env.secret(fs, replicaDSNs, "MYSQL_REPLICA_DSNS", "mysql-replica-dsns", "comma list of MariaDB read replicas of -mysql-dsn (GTID replication), for the reads that may lag; empty: every read on the primary (MYSQL_REPLICA_DSNS)")
	fs.DurationVar(&c.ReplicaMaxLag, "replica-max-lag", env.duration("REPLICA_MAX_LAG", store.DefaultReplicaMaxLag), "how far behind the primary the replicas may be and still serve reads; further behind, reads go to the primary (REPLICA_MAX_LAG)")
	fs.StringVar(&c.RedisAddr, "redis-addr", env.text("REDIS_ADDR", ""), "Redis host:port, or a comma list of Redis Cluster nodes (any few; the rest are discovered); empty: in-process Redis (REDIS_ADDR)")
	fs.IntVar(&c.RedisPoolSize, "redis-pool-size", env.int("REDIS_POOL_SIZE", DefaultRedisPoolSize), "pooled Redis connections (per cluster node) for requests and fan-out work; each fan-out worker gets one more for its blocking read (REDIS_POOL_SIZE)")
	fs.DurationVar(&c.RedisPoolTimeout, "redis-pool-timeout", env.duration("REDIS_POOL_TIMEOUT", DefaultRedisPoolTimeout), "how long a Redis call waits for a free pooled connection before it fails and a read falls back to MySQL (REDIS_POOL_TIMEOUT)")
	fs.StringVar(&c.KeyPrefix, "key-prefix", env.text("KEY_PREFIX", ""), "prefix of every Redis key (KEY_PREFIX)")
	fs.IntVar(&c.NodeID, "node-id", env.int("NODE_ID", -1), "this instance's id node number 0-31; -1 leases a free one from Redis (NODE_ID)")
	env.secret(fs, shardDSNs, "MYSQL_SHARD_DSNS", "mysql-shards", "comma list of the MariaDB data nodes under -mysql-dsn when it is a head with the Spider engine: migrate makes the sharded layout over them; a head so migrated needs them no more; empty: one database (MYSQL_SHARD_DSNS)")
	fs.DurationVar(&c.RelayAppliedRetention, "relay-applied-retention", env.duration("RELAY_APPLIED_RETENTION", store.DefaultRelayAppliedRetention), "sharded layout: how long a data node keeps the id of a relay change it applied once the change is gone, so that a second relay running at once does not apply it again; at least "+store.MinRelayAppliedRetention.String()+" (RELAY_APPLIED_RETENTION)")
	env.secret(fs, &c.CopyFromDSN, "COPY_FROM_DSN", "copy-from", "for shard-copy: the DSN of the one MySQL database it copies into the sharded layout of -mysql-dsn and -mysql-shards, e.g. user:pass@tcp(old:3306)/feed (COPY_FROM_DSN)")
	return replicaDSNs, shardDSNs
}

// clientFlags registers who may use the server and how: tokens and
// passwords, browser origins, proxies, the operator's token, GraphiQL and
// the demo graph. It returns the trusted proxies, read as text.
func (c *Settings) clientFlags(fs *flag.FlagSet, env *environment) (trustedProxies *string) {
	env.secretBytes(fs, &c.TokenSecret, "TOKEN_SECRET", "token-secret", "secret that signs bearer tokens, 32+ bytes; empty: generated once under -data (TOKEN_SECRET)")
	fs.DurationVar(&c.TokenTTL, "token-ttl", env.duration("TOKEN_TTL", feedconfig.DefaultTokenTTL), "how long a bearer token is valid (TOKEN_TTL)")
	fs.IntVar(&c.BcryptCost, "bcrypt-cost", env.int("BCRYPT_COST", feedconfig.DefaultBcryptCost), "bcrypt work factor of password hashes (BCRYPT_COST)")
	fs.BoolVar(&c.GraphiQL, "graphiql", env.bool("GRAPHIQL", true), "serve GraphiQL at / (GRAPHIQL)")
	fs.BoolVar(&c.Introspection, "introspection", env.bool("INTROSPECTION", true), "answer introspection queries (__schema, __type); GraphiQL needs them (INTROSPECTION)")
	fs.StringVar(&c.AllowedOrigins, "allowed-origins", env.text("ALLOWED_ORIGINS", ""), "comma list of browser origins (scheme://host[:port]) allowed on websockets besides the server's own, and cross-origin (CORS) on /query; * for any, without credentials; empty: none (ALLOWED_ORIGINS)")
	trustedProxies = fs.String("trusted-proxies", env.text("TRUSTED_PROXIES", ""), "comma list of proxy IPs or CIDRs whose X-Forwarded-For is believed (TRUSTED_PROXIES)")
	env.secret(fs, &c.OperatorToken, "OPERATOR_TOKEN", "operator-token", "secret that operators send as X-Operator-Token to promote posts; empty: no one may (OPERATOR_TOKEN)")
	fs.BoolVar(&c.Seed, "seed", false, "load the demo graph before serving")
	return trustedProxies
}

// feedFlags registers how feeds are built and read: the feed mode, the
// celebrity threshold, the inboxes, page jumps and followee reads.
func (c *Settings) feedFlags(fs *flag.FlagSet, env *environment) {
	c.Mode = feedconfig.Mode(env.text("FEED_MODE", string(feedconfig.DefaultMode)))
	fs.Var(modeValue{&c.Mode}, "feed-mode", "how feeds are built: pull, push or hybrid (FEED_MODE)")
	fs.IntVar(&c.CelebrityFollowers, "celebrity-followers", env.int("CELEBRITY_FOLLOWERS", feedconfig.DefaultCelebrityFollowers), "followers from which an author's posts are merged at read time, not fanned out (CELEBRITY_FOLLOWERS)")
	fs.IntVar(&c.InboxCap, "inbox-cap", env.int("INBOX_CAP", feedconfig.DefaultInboxCap), "entries an inbox keeps (INBOX_CAP)")
	fs.DurationVar(&c.InboxTTL, "inbox-ttl", env.duration("INBOX_TTL", feedconfig.DefaultInboxTTL), "how long an unread inbox lives (INBOX_TTL)")
	fs.IntVar(&c.JumpCacheFollowers, "jump-cache-followers", env.int("JUMP_CACHE_FOLLOWERS", feedconfig.DefaultJumpCacheFollowers), "list length from which page jumps read a copy of the list in Redis, not MySQL's offset index (JUMP_CACHE_FOLLOWERS)")
	fs.DurationVar(&c.JumpCacheTTL, "jump-cache-ttl", env.duration("JUMP_CACHE_TTL", feedconfig.DefaultJumpCacheTTL), "how long a list's copy for page jumps lives after the last jump (JUMP_CACHE_TTL)")
	fs.IntVar(&c.MaxUnreadCount, "max-unread-count", env.int("MAX_UNREAD_COUNT", feedconfig.DefaultMaxUnreadCount), fmt.Sprintf("the most the unread count (the red dot) says; counting stops there, 1 to %d (MAX_UNREAD_COUNT)", feedconfig.UnreadCountCeiling))
	fs.IntVar(&c.MaxListsPerUser, "max-lists-per-user", env.int("MAX_LISTS_PER_USER", feedconfig.DefaultMaxListsPerUser), fmt.Sprintf("the most lists one user may keep, 1 to %d (MAX_LISTS_PER_USER)", feedconfig.ListsPerUserCeiling))
	fs.IntVar(&c.MaxListMembers, "max-list-members", env.int("MAX_LIST_MEMBERS", feedconfig.DefaultMaxListMembers), fmt.Sprintf("the most members one list may hold, 1 to %d (MAX_LIST_MEMBERS)", feedconfig.ListMembersCeiling))
	fs.IntVar(&c.FollowingReadMax, "following-read-max", env.int("FOLLOWING_READ_MAX", feedconfig.DefaultFollowingReadMax), "followees a feed read takes whole from Redis; more are asked per page (FOLLOWING_READ_MAX)")
}

// fanoutFlags registers the fan-out of new posts to inboxes: task size,
// workers, the fan-out stream and its dispatcher.
func (c *Settings) fanoutFlags(fs *flag.FlagSet, env *environment) {
	fs.IntVar(&c.FanoutBatchSize, "fanout-batch", env.int("FANOUT_BATCH", feedconfig.DefaultFanoutBatchSize), "followers per fan-out task (FANOUT_BATCH)")
	fs.IntVar(&c.FanoutWorkers, "fanout-workers", env.int("FANOUT_WORKERS", feedconfig.DefaultFanoutWorkers), "fan-out workers on this instance; 0 for an API-only instance (FANOUT_WORKERS)")
	fs.DurationVar(&c.StreamTrimInterval, "stream-trim-interval", env.duration("STREAM_TRIM_INTERVAL", feedconfig.DefaultStreamTrimInterval), "how often the dispatching instance drops the fan-out stream's acknowledged entries (STREAM_TRIM_INTERVAL)")
	fs.IntVar(&c.StreamReplicas, "stream-replicas", env.int("STREAM_REPLICAS", feedconfig.DefaultStreamReplicas), "replicas of the fan-out stream's Redis master that must hold an entry before the event counts as dispatched (all of them when it has fewer; 0 waits for none), so that a failover loses none (STREAM_REPLICAS)")
	fs.DurationVar(&c.StreamReplicaTimeout, "stream-replica-timeout", env.duration("STREAM_REPLICA_TIMEOUT", feedconfig.DefaultStreamReplicaTimeout), "how long an append to the fan-out stream waits for those replicas before it fails and is tried again (STREAM_REPLICA_TIMEOUT)")
	fs.BoolVar(&c.Dispatch, "dispatch", env.bool("DISPATCH", true), "run the outbox dispatcher on this instance (one instance dispatches at a time) (DISPATCH)")
}

// cacheFlags registers the cache tiers (the local copies, the Redis copies
// of posts and users), with the loader wait, the rate-limit warning
// interval and the garbage collector's target that stand among them.
func (c *Settings) cacheFlags(fs *flag.FlagSet, env *environment) {
	fs.DurationVar(&c.LoaderWait, "loader-wait", env.duration("LOADER_WAIT", dataloader.DefaultWait), "how long a query's batch loaders gather keys before each batch, at most 50ms (LOADER_WAIT)")
	fs.IntVar(&c.LocalCacheMaxEntries, "local-cache-max-entries", env.int("LOCAL_CACHE_MAX_ENTRIES", feedconfig.DefaultLocalCacheMaxEntries), "users (and, apart, posts) this instance keeps in memory; 0 turns the local tier off (LOCAL_CACHE_MAX_ENTRIES)")
	fs.Int64Var(&c.LocalCacheMaxBytes, "local-cache-max-bytes", int64(env.int("LOCAL_CACHE_MAX_BYTES", feedconfig.DefaultLocalCacheMaxBytes)), "bytes of users (and, apart, of posts) this instance keeps in memory (LOCAL_CACHE_MAX_BYTES)")
	fs.DurationVar(&c.LocalCacheTTL, "local-cache-ttl", env.duration("LOCAL_CACHE_TTL", feedconfig.DefaultLocalCacheTTL), "how long a local copy of a user or post serves before it is read again: the staleness bound of an instance that missed an invalidation (LOCAL_CACHE_TTL)")
	fs.DurationVar(&c.RateLimitWarnInterval, "rate-limit-warn-interval", env.duration("RATE_LIMIT_WARN_INTERVAL", feedconfig.DefaultRateLimitWarnInterval), "least time between two warnings that rate limits went unchecked because Redis failed; the ones between are counted in the next (RATE_LIMIT_WARN_INTERVAL)")
	fs.DurationVar(&c.PostCacheTTL, "post-cache-ttl", env.duration("POST_CACHE_TTL", feedconfig.DefaultPostCacheTTL), "how long the Redis copy of a post lives after it was written (POST_CACHE_TTL)")
	fs.IntVar(&c.FoldsRunning, "folds-running", env.int("FOLDS_RUNNING", feedconfig.DefaultFoldsRunning), "the most folds of celebrities' posts into readers' inboxes one instance runs at once, after the hybrid pages that merged them; a page that finds none free folds nothing (FOLDS_RUNNING)")
	fs.IntVar(&c.RebuildsRunning, "rebuilds-running", env.int("REBUILDS_RUNNING", feedconfig.DefaultRebuildsRunning), "the most rebuilds of returning readers' inboxes one instance runs at once in the background, after their pages answered from MySQL; the rest wait their turn (REBUILDS_RUNNING)")
	fs.IntVar(&c.RebuildDepth, "rebuild-depth", env.int("REBUILD_DEPTH", feedconfig.DefaultRebuildDepth), "the entries the rebuild of a returning reader's inbox writes, its newest (the fan-out fills it up to -inbox-cap; the pages below read MySQL); at least 1, and past -inbox-cap a whole inbox (REBUILD_DEPTH)")
	fs.IntVar(&c.RepostListMax, "repost-list-max", env.int("REPOST_LIST_MAX", feedconfig.DefaultRepostListMax), "the most live reposts a post's Redis copy lists, so that warm reads place reposts of old posts without MySQL; a post with more is placed from MySQL (REPOST_LIST_MAX)")
	fs.IntVar(&c.GOGC, "gogc", env.int("GOGC", DefaultGOGC), fmt.Sprintf("the garbage collector's target: a collection runs when the heap has grown by this percentage of what was live after the last one; Go's own GOGC variable, with a default of %d instead of 100, and %d to %d (GOGC)", DefaultGOGC, MinGOGC, MaxGOGC))
	fs.DurationVar(&c.UserCacheTTL, "user-cache-ttl", env.duration("USER_CACHE_TTL", feedconfig.DefaultUserCacheTTL), "how long the Redis copies of a user's info and counts live after they were written (USER_CACHE_TTL)")
}

// homeFlags registers the home connection's promoted posts and suggested
// users.
func (c *Settings) homeFlags(fs *flag.FlagSet, env *environment) {
	fs.IntVar(&c.HomeInsertEvery, "home-insert-every", env.int("HOME_INSERT_EVERY", feedconfig.DefaultHomeInsertEvery), "every Nth entry of the home connection is a promoted post or a suggested user; 0 for none, else 2-100 (HOME_INSERT_EVERY)")
	fs.DurationVar(&c.BlockResetInterval, "block-reset-interval", env.duration("BLOCK_RESET_INTERVAL", feedconfig.DefaultBlockResetInterval), "how often blocks and unblocks by others may reset a user's inbox, at most; 0 resets at each (BLOCK_RESET_INTERVAL)")
	fs.DurationVar(&c.HomeCandidatesTTL, "home-candidates-ttl", env.duration("HOME_CANDIDATES_TTL", feedconfig.DefaultHomeCandidatesTTL), "how long a viewer's suggested users are kept in Redis before they are worked out again (HOME_CANDIDATES_TTL)")
}

// websocketFlags registers the websocket's timers: the keep-alive ping and
// the wait for connection_init.
func (c *Settings) websocketFlags(fs *flag.FlagSet, env *environment) {
	fs.DurationVar(&c.WebsocketPing, "ws-ping", env.duration("WS_PING_INTERVAL", DefaultWebsocketPing), "websocket keep-alive ping interval; a client silent for twice that is dropped (WS_PING_INTERVAL)")
	fs.DurationVar(&c.WebsocketInit, "ws-init-timeout", env.duration("WS_INIT_TIMEOUT", DefaultWebsocketInitTimeout), "how long a websocket may stay open without connection_init (WS_INIT_TIMEOUT)")
}

// requestFlags registers what one request may ask: the document limits,
// batches, persisted queries and rates. It returns the two rates, read as
// text.
func (c *Settings) requestFlags(fs *flag.FlagSet, env *environment) (mutationRate, authRate *string) {
	fs.IntVar(&c.MaxQueryComplexity, "max-query-complexity", env.int("MAX_QUERY_COMPLEXITY", DefaultMaxQueryComplexity), "the most an operation may cost; a connection costs first times its fields (MAX_QUERY_COMPLEXITY)")
	fs.IntVar(&c.MaxQueryDepth, "max-query-depth", env.int("MAX_QUERY_DEPTH", DefaultMaxQueryDepth), "how deep fields of an operation may nest (MAX_QUERY_DEPTH)")
	fs.IntVar(&c.MaxBatchOperations, "max-batch-operations", env.int("MAX_BATCH_OPERATIONS", DefaultMaxBatchOperations), "operations one batched request may carry (MAX_BATCH_OPERATIONS)")
	mutationRate = fs.String("mutation-rate", env.text("MUTATION_RATE", DefaultMutationRate), "mutations per viewer, or per IP when signed out, as count/period; off for none (MUTATION_RATE)")
	authRate = fs.String("auth-rate", env.text("AUTH_RATE", DefaultAuthRate), "signUp and logIn per client IP, as count/period; off for none (AUTH_RATE)")
	fs.DurationVar(&c.PersistedQueryTTL, "persisted-query-ttl", env.duration("PERSISTED_QUERY_TTL", DefaultPersistedQueryTTL), "how long a persisted query is kept after it was last sent in full (PERSISTED_QUERY_TTL)")
	fs.IntVar(&c.MaxQueryTokens, "max-query-tokens", env.int("MAX_QUERY_TOKENS", DefaultMaxQueryTokens), "most tokens of a GraphQL document; larger is refused before validation (MAX_QUERY_TOKENS)")
	fs.IntVar(&c.MaxQueryFields, "max-query-fields", env.int("MAX_QUERY_FIELDS", DefaultMaxQueryFields), "most fields an operation may select, counted with its fragments expanded (MAX_QUERY_FIELDS)")
	return mutationRate, authRate
}

// readText parses the settings that the flags read as text.
func (c *Settings) readText(text textSettings) error {
	var err error
	if c.MutationRate, err = ratelimit.ParseRate(*text.mutationRate); err != nil {
		return fmt.Errorf("-mutation-rate: %w", err)
	}
	if c.AuthRate, err = ratelimit.ParseRate(*text.authRate); err != nil {
		return fmt.Errorf("-auth-rate: %w", err)
	}
	if _, err := parseOrigins(c.AllowedOrigins); err != nil {
		return fmt.Errorf("-allowed-origins: %w", err)
	}
	if c.TrustedProxies, err = parsePrefixes(*text.trustedProxies); err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	if c.TraceTrustedCallers, err = parsePrefixes(*text.traceTrustedCallers); err != nil {
		return fmt.Errorf("-trace-trusted-callers: %w", err)
	}
	if c.MySQLReplicaDSNs, err = parseReplicaDSNs(*text.replicaDSNs, c.MySQLDSN); err != nil {
		return fmt.Errorf("-mysql-replica-dsns (MYSQL_REPLICA_DSNS): %w", err)
	}
	if c.MySQLShardDSNs, err = parseShardDSNs(*text.shardDSNs, c.MySQLDSN); err != nil {
		return fmt.Errorf("-mysql-shards (MYSQL_SHARD_DSNS): %w", err)
	}
	return nil
}

// check refuses settings out of their range: a limit at 0 would switch it
// off, a duration at 0 would spin.
func (c Settings) check() error {
	if _, err := feedconfig.ParseMode(string(c.Mode)); err != nil {
		return err
	}
	for name, n := range map[string]int{"redis-pool-size": c.RedisPoolSize, "celebrity-followers": c.CelebrityFollowers, "inbox-cap": c.InboxCap, "rebuild-depth": c.RebuildDepth, "fanout-batch": c.FanoutBatchSize, "following-read-max": c.FollowingReadMax, "jump-cache-followers": c.JumpCacheFollowers,
		"max-query-complexity": c.MaxQueryComplexity, "max-query-depth": c.MaxQueryDepth, "max-batch-operations": c.MaxBatchOperations,
		"max-query-tokens": c.MaxQueryTokens, "max-query-fields": c.MaxQueryFields, "local-cache-max-bytes": int(min(c.LocalCacheMaxBytes, 1<<40))} {
		if n < 1 {
			return fmt.Errorf("-%s must be at least 1", name)
		}
	}
	for name, n := range map[string]int{"fanout-workers": c.FanoutWorkers, "stream-replicas": c.StreamReplicas, "local-cache-max-entries": c.LocalCacheMaxEntries} {
		if n < 0 {
			return fmt.Errorf("-%s cannot be negative", name)
		}
	}
	for name, d := range map[string]time.Duration{"redis-pool-timeout": c.RedisPoolTimeout, "stream-trim-interval": c.StreamTrimInterval, "stream-replica-timeout": c.StreamReplicaTimeout,
		"rate-limit-warn-interval": c.RateLimitWarnInterval, "replica-max-lag": c.ReplicaMaxLag, "home-candidates-ttl": c.HomeCandidatesTTL,
		"post-cache-ttl": c.PostCacheTTL, "user-cache-ttl": c.UserCacheTTL, "local-cache-ttl": c.LocalCacheTTL} {
		if d <= 0 {
			return fmt.Errorf("-%s must be more than 0", name)
		}
	}
	if err := c.ClientLimits.check(); err != nil {
		return err
	}
	if c.RelayAppliedRetention < store.MinRelayAppliedRetention {
		return fmt.Errorf("-relay-applied-retention must be at least %s", store.MinRelayAppliedRetention)
	}
	if c.BlockResetInterval < 0 {
		return fmt.Errorf("-block-reset-interval cannot be negative")
	}
	if c.HomeInsertEvery != 0 && (c.HomeInsertEvery < 2 || c.HomeInsertEvery > feedconfig.MaxHomeInsertEvery) {
		return fmt.Errorf("-home-insert-every must be 0 or 2 to %d", feedconfig.MaxHomeInsertEvery)
	}
	if c.MaxUnreadCount < 1 || c.MaxUnreadCount > feedconfig.UnreadCountCeiling {
		return fmt.Errorf("-max-unread-count must be 1 to %d", feedconfig.UnreadCountCeiling)
	}
	if c.MaxListsPerUser < 1 || c.MaxListsPerUser > feedconfig.ListsPerUserCeiling {
		return fmt.Errorf("-max-lists-per-user must be 1 to %d", feedconfig.ListsPerUserCeiling)
	}
	if c.MaxListMembers < 1 || c.MaxListMembers > feedconfig.ListMembersCeiling {
		return fmt.Errorf("-max-list-members must be 1 to %d", feedconfig.ListMembersCeiling)
	}
	if c.FoldsRunning < 1 || c.FoldsRunning > MaxFoldsRunning {
		return fmt.Errorf("-folds-running must be 1 to %d", MaxFoldsRunning)
	}
	if c.RebuildsRunning < 1 || c.RebuildsRunning > MaxRebuildsRunning {
		return fmt.Errorf("-rebuilds-running must be 1 to %d", MaxRebuildsRunning)
	}
	if c.RepostListMax < 1 || c.RepostListMax > MaxRepostListMax {
		return fmt.Errorf("-repost-list-max must be 1 to %d", MaxRepostListMax)
	}
	if c.GOGC < MinGOGC || c.GOGC > MaxGOGC {
		return fmt.Errorf("-gogc (GOGC) must be %d to %d", MinGOGC, MaxGOGC)
	}
	// A brace in the prefix would be the hash tag of every key, and put all
	// of them in one Redis Cluster slot (see feed/internal/keyspace/keys.go).
	if strings.ContainsAny(c.KeyPrefix, "{}") {
		return fmt.Errorf("-key-prefix %q must not contain { or }: on Redis Cluster every key would share one slot", c.KeyPrefix)
	}
	if c.LoaderWait <= 0 || c.LoaderWait > dataloader.MaxWait {
		return fmt.Errorf("-loader-wait must be more than 0 and at most %s", dataloader.MaxWait)
	}
	return nil
}

// Summary is the first line of the start-up log: the common settings
// alone, short enough to read at a glance (the "settings" line after it
// has every one).
func (c Settings) Summary() []any {
	mysql, redis := "embedded SQLite in "+c.DataDir, "embedded in-process Redis"
	if c.MySQLDSN != "" {
		mysql = "MYSQL_DSN"
	}
	if c.RedisAddr != "" {
		redis = c.RedisAddr
	}
	return []any{"addr", c.Addr, "mysql", mysql, "redis", redis, "feedMode", c.Mode, "metricsAddr", c.MetricsAddr}
}

// Describe lists every setting for the start-up log, each under its
// field's name: secrets only as set or unset, durations in the syntax the
// flags take (168h, 10m, 50ms), not in nanoseconds.
// TestSettingsLineNamesEverySetting fails when a field of Settings is missing.
func (c Settings) Describe() []any {
	isSet := func(s string) string {
		if s == "" {
			return "unset"
		}
		return "set"
	}
	mysql, redis := isSet(c.MySQLDSN), c.RedisAddr
	if c.MySQLDSN == "" {
		mysql = "embedded SQLite in " + c.DataDir
	}
	if redis == "" {
		redis = "embedded in-process Redis"
	}
	settings := append([]any{
		"addr", c.Addr, "dataDir", c.DataDir, "mysqlDSN", mysql, "mysqlReplicaDSNs", len(c.MySQLReplicaDSNs), "mysqlShardDSNs", len(c.MySQLShardDSNs), "relayAppliedRetention", c.RelayAppliedRetention, "copyFromDSN", isSet(c.CopyFromDSN), "replicaMaxLag", c.ReplicaMaxLag,
		"redisAddr", redis, "redisPoolSize", c.RedisPoolSize, "redisPoolTimeout", c.RedisPoolTimeout, "keyPrefix", c.KeyPrefix, "nodeID", c.NodeID,
		"tokenSecret", isSet(string(c.TokenSecret)), "tokenTTL", c.TokenTTL, "bcryptCost", c.BcryptCost, "graphiql", c.GraphiQL, "introspection", c.Introspection,
		"allowedOrigins", c.AllowedOrigins, "trustedProxies", fmt.Sprint(c.TrustedProxies), "traceTrustedCallers", fmt.Sprint(c.TraceTrustedCallers), "operatorToken", isSet(c.OperatorToken), "seed", c.Seed,
		"feedMode", c.Mode, "celebrityFollowers", c.CelebrityFollowers, "inboxCap", c.InboxCap, "inboxTTL", c.InboxTTL,
		"jumpCacheFollowers", c.JumpCacheFollowers, "jumpCacheTTL", c.JumpCacheTTL, "followingReadMax", c.FollowingReadMax, "maxUnreadCount", c.MaxUnreadCount, "maxListsPerUser", c.MaxListsPerUser, "maxListMembers", c.MaxListMembers,
		"fanoutBatch", c.FanoutBatchSize, "fanoutWorkers", c.FanoutWorkers, "streamTrimInterval", c.StreamTrimInterval, "streamReplicas", c.StreamReplicas, "streamReplicaTimeout", c.StreamReplicaTimeout, "dispatch", c.Dispatch,
		"loaderWait", c.LoaderWait, "localCacheMaxEntries", c.LocalCacheMaxEntries, "localCacheMaxBytes", c.LocalCacheMaxBytes, "localCacheTTL", c.LocalCacheTTL,
		"rateLimitWarnInterval", c.RateLimitWarnInterval, "postCacheTTL", c.PostCacheTTL, "repostListMax", c.RepostListMax, "foldsRunning", c.FoldsRunning, "rebuildsRunning", c.RebuildsRunning, "rebuildDepth", c.RebuildDepth, "gogc", c.GOGC,
		"userCacheTTL", c.UserCacheTTL, "homeInsertEvery", c.HomeInsertEvery, "homeCandidatesTTL", c.HomeCandidatesTTL, "blockResetInterval", c.BlockResetInterval,
		"websocketPing", c.WebsocketPing, "websocketInit", c.WebsocketInit, "maxQueryComplexity", c.MaxQueryComplexity, "maxQueryDepth", c.MaxQueryDepth,
		"maxBatchOperations", c.MaxBatchOperations, "mutationRate", formatRate(c.MutationRate), "authRate", formatRate(c.AuthRate),
		"persistedQueryTTL", c.PersistedQueryTTL, "maxQueryTokens", c.MaxQueryTokens, "maxQueryFields", c.MaxQueryFields,
	}, c.ClientLimits.describe()...)
	for i, v := range settings {
		if d, ok := v.(time.Duration); ok {
			settings[i] = formatDuration(d)
		}
	}
	return settings
}

// formatRate writes r as the rate flags take it: 120/1m, or off.
func formatRate(r ratelimit.Rate) string {
	if r.Off() {
		return "off"
	}
	return fmt.Sprintf("%d/%s", r.Count, formatDuration(r.Period))
}

// formatDuration writes d as time.Duration.String does, without its zero
// units: 168h, 1h30m, 10m, 20s, 50ms. That is what the duration flags take.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// IsTrustedProxy says whether addr is one of the trusted proxies
// (TRUSTED_PROXIES).
func (c Settings) IsTrustedProxy(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range c.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseReplicaDSNs reads the comma list of replica DSNs: each must parse as
// a MySQL DSN, and replicas need a MySQL primary.
func parseReplicaDSNs(list, primary string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	if primary == "" {
		return nil, errors.New("replicas need -mysql-dsn (MYSQL_DSN): the embedded SQLite has none")
	}
	var out []string
	for i, dsn := range strings.Split(list, ",") {
		dsn = strings.TrimSpace(dsn)
		if dsn == "" {
			return nil, fmt.Errorf("entry %d is empty", i+1)
		}
		if _, err := mysqldriver.ParseDSN(dsn); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		out = append(out, dsn)
	}
	return out, nil
}

// parseShardDSNs reads the comma list of data node DSNs, which need their
// Spider head as the MySQL DSN, in a number the sharded layout takes
// (store.MaxShards); checked here, before anything connects.
func parseShardDSNs(list, head string) ([]string, error) {
	if strings.TrimSpace(list) != "" && head == "" {
		return nil, errors.New("data nodes need -mysql-dsn (MYSQL_DSN), the MariaDB head with the Spider engine over them")
	}
	dsns, err := parseReplicaDSNs(list, head)
	if err != nil || dsns == nil {
		return dsns, err
	}
	if n := len(dsns); n < 2 || store.MaxShards%n != 0 {
		return nil, fmt.Errorf("%d data nodes; the sharded layout takes a number that divides %d, at least 2", n, store.MaxShards)
	}
	return dsns, nil
}

// parseOrigins reads ALLOWED_ORIGINS: "*" or origins as browsers send
// them, scheme://host[:port] with nothing after; an entry with a path or a
// trailing slash would never match, so it is refused at start.
func parseOrigins(s string) ([]string, error) {
	origins := splitList(s)
	for _, o := range origins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
			return nil, fmt.Errorf("%q is not an origin like https://app.example.com or http://localhost:3000", o)
		}
	}
	return origins, nil
}

// Origins is ALLOWED_ORIGINS as a list: "*", or origins as browsers send
// them (checked by Parse).
func (c Settings) Origins() []string { return splitList(c.AllowedOrigins) }

// splitList is the entries of a comma list, trimmed, without empty ones.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parsePrefixes reads a comma list of IPs and CIDRs.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range splitList(s) {
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		addr, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP nor a CIDR", part)
		}
		addr = addr.Unmap()
		out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
	}
	return out, nil
}

// TuneRuntime applies the runtime settings (the garbage collector's
// target) to this process, and returns what undoes it. The server calls it
// when it starts serving; the page benchmarks do too, to measure the
// server as it runs.
func (c Settings) TuneRuntime() (restore func()) {
	old := debug.SetGCPercent(c.GOGC)
	return func() { debug.SetGCPercent(old) }
}

// environment reads the settings' environment variables, and keeps the
// values that do not parse: a typo in a setting stops the server instead of
// being replaced by the default.
type environment struct{ errs []error }

// text is the variable's value, or def when it is not set.
// secret registers the flag of a secret setting (a token, or a DSN that
// may hold a password) with its environment variable's value under it:
// -h shows whether it is set, never the value.
func (e *environment) secret(fs *flag.FlagSet, p *string, name, flagName, usage string) {
	*p = e.text(name, "")
	fs.Var(secretValue{p}, flagName, usage)
}

// secretBytes is secret for a setting kept as bytes.
func (e *environment) secretBytes(fs *flag.FlagSet, p *[]byte, name, flagName, usage string) {
	*p = []byte(e.text(name, ""))
	fs.Var(secretBytesValue{p}, flagName, usage)
}

// secretBytesValue is secretValue for bytes.
type secretBytesValue struct{ b *[]byte }

func (v secretBytesValue) String() string {
	if v.b == nil || len(*v.b) == 0 {
		return ""
	}
	return "set"
}

func (v secretBytesValue) Set(s string) error {
	*v.b = []byte(s)
	return nil
}

// modeValue is the flag.Value of the feed mode; check refuses one that
// is none of the modes.
type modeValue struct{ m *feedconfig.Mode }

func (v modeValue) String() string {
	if v.m == nil {
		return ""
	}
	return string(*v.m)
}

func (v modeValue) Set(s string) error {
	*v.m = feedconfig.Mode(s)
	return nil
}

// secretValue is the flag.Value of a secret: its text is "set" or empty.
type secretValue struct{ s *string }

func (v secretValue) String() string {
	if v.s == nil || *v.s == "" {
		return ""
	}
	return "set"
}

func (v secretValue) Set(s string) error {
	*v.s = s
	return nil
}

func (e *environment) text(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func (e *environment) int(name string, def int) int {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a whole number", name, v))
		return def
	}
	return n
}

func (e *environment) bool(name string, def bool) bool {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not true or false", name, v))
		return def
	}
	return b
}

func (e *environment) duration(name string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a duration like 30s or 168h", name, v))
		return def
	}
	return d
}

// rate reads a rate, count/period or off, or def.
func (e *environment) rate(name, def string) ratelimit.Rate {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		v = def
	}
	r, err := ratelimit.ParseRate(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: %w", name, v, err))
	}
	return r
}
