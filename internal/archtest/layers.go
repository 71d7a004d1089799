// Package archtest holds the tests that guard the shape of the whole
// module: which package may import which (layers below, checked by
// TestPackageLayering), the package diagram of docs/architecture.md, and
// the Lua scripts' use of their KEYS.
package archtest

// A layer is a set of packages that may import the packages of every layer
// below it, and none of their own layer or above.
type layer struct {
	name     string
	packages []string // import paths relative to the module: "feed/apperr"; "." is the module's root package
}

// layers is the module's import layering, lowest first. Every package of
// the module is in exactly one layer; a new package is added here in the
// layer its imports call for.
//
// An entry for a package that does not exist is allowed and unused.
var layers = []layer{
	{"leaves of the module", []string{
		"models",                     // gorm entities and GraphQL model types
		"store/migrate",              // the schema's versioned steps and the sharded layout's making, which store runs
		"internal/slot",              // Redis Cluster's hash slots
		"graph/model",                // generated GraphQL types
		"internal/fastexec",          // runtime of the fast GraphQL executor
		"web",                        // the embedded React app
		"internal/testenv/testrun",   // record of what test processes make
		"internal/testenv/testjson",  // go test -json read for people, with its timings
		"internal/gqlclient",         // GraphQL client of the tests, bench and soak
		"internal/feedmodel",         // reference model of the home feed, for tests
		"internal/throttle",          // spacing of repeated warnings
		"internal/apperr",            // the errors clients are shown, with their codes
		"internal/fastexec/difftest", // test-only
		"bench/localtier",            // test-only
		"internal/archtest",          // test-only: this package
	}},
	{"storage, and helpers over the leaves", []string{
		"store",
		"internal/viewer", // who a request acts for
		"internal/testenv",
		"internal/serverproc",
		"internal/fastexec/plugin",
		"playground",
	}},
	{"helpers over storage: feed's settings, key names, metrics, Redis helpers and ids; the API's rate limits and persisted queries", []string{
		"feed/config",
		"feed/internal/keyspace",
		"feed/internal/metrics",
		"feed/internal/redisx",
		"feed/ids",
		"feed/auth",
		"internal/ratelimit",
		"internal/apq",
		"store/storetest", // test support: a database with the store's schema, copied from a template
	}},
	{"feed: shared resources, paging, the rules of user-written text", []string{
		"feed/internal/deps",
		"feed/paging",
		"feed/text",
	}},
	{"feed: live messages, read replicas, page jumps", []string{
		"feed/livemsg",
		"feed/replicas",
		"feed/jumps",
		"feed/internal/depstest", // test support: a package's own Deps
	}},
	{"feed: cache tiers", []string{"feed/cache"}},
	{"feed: the pull path (home feeds read from MySQL), the celebrity set, the copies of users' lists", []string{
		"feed/pull",
		"feed/celebrities",
		"feed/lists",
	}},
	{"feed: the authors' outboxes and this instance's copies of the celebrities'", []string{"feed/outbox"}},
	{"feed: the read model (inboxes, the merged page)", []string{"feed/timeline"}},
	{"feed: fan-out, home feed, live streams (the hub and the subscriptions)", []string{
		"feed/fanout",
		"feed/home",
		"feed/live",
	}},
	{"feed: the engine's facade", []string{"feed"}},
	{"loaders and schema", []string{
		"dataloader",
		"graph",
	}},
	{"resolvers", []string{"resolvers"}},
	{"the server's settings", []string{"api/settings"}},
	{"the GraphQL extensions of /query", []string{"api/extensions"}},
	{"the websocket transport of /query", []string{"api/sockets"}},
	{"HTTP", []string{"api"}},
	{"programs", []string{
		".", // the server
		"bench",
		"bench/jumps",
		"soak",
		"internal/fastexec/cmd/gqlgen",
		"internal/testenv/cmd/testctl",
	}},
}

// sameLayerImports are the imports within one layer that are allowed, as
// "importer imports imported". Keep it empty: an import within a layer
// means the layer should be split.
var sameLayerImports = map[string]bool{}
