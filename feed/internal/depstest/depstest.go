// Package depstest makes the engine's shared resources (deps.Deps) for the
// tests of one feed package, on a MariaDB database and a Redis key prefix
// of the test's own, so that a package's tests build its parts without the
// engine.
package depstest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
	"feedservice/store"
)

// New is a Deps with cfg (its defaults filled in, its KeyPrefix the
// test's) over a migrated database and a Redis key prefix of the test's
// own, both removed when the test ends.
func New(t testing.TB, cfg config.Config) *deps.Deps {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{MySQLDSN: testenv.MySQL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rdb, prefix := testenv.Redis(t)
	cfg.KeyPrefix = prefix
	return Over(t, cfg.WithDefaults(), st, rdb)
}

// Over is a Deps with cfg over st and rdb: a second instance's, sharing
// the first one's data.
func Over(t testing.TB, cfg config.Config, st *store.Store, rdb redis.UniversalClient) *deps.Deps {
	t.Helper()
	gen, err := ids.NewIDGenerator(0)
	if err != nil {
		t.Fatal(err)
	}
	return &deps.Deps{Cfg: cfg, Store: st, Redis: rdb, Keys: keyspace.New(cfg.KeyPrefix), Log: slog.New(slog.DiscardHandler),
		Metrics: metrics.New(), Now: deps.NowMillis, IDs: gen, WarnRedis: func(string, error) {}}
}
