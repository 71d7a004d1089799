// Package depstest makes the engine's shared resources (deps.Deps) for the
// tests of one feed package, on a MariaDB database and a Redis key prefix
// of the test's own, so that a package's tests build its parts without the
// engine; and holds the other helpers the tests of several feed packages
// share.
package depstest

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
	"feedservice/store/storetest"
)

// New is a Deps with cfg (its defaults filled in, its KeyPrefix the
// test's) over a database with the store's schema (storetest.MySQL: a
// copy of one migrated once per test process, which the package's TestMain
// drops at the end) and a Redis key prefix of the test's own, both removed
// when the test ends.
func New(t testing.TB, cfg config.Config) *deps.Deps {
	t.Helper()
	st := Store(t, store.Config{MySQLDSN: storetest.MySQL(t)})
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

// Store opens a store with cfg, migrated, and closes it when the test ends.
func Store(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// IDs are the members of a Redis set or sorted set that are decimal ids
// (others, such as a sentinel, are left out), sorted.
func IDs(members []string) []int64 {
	var ids []int64
	for _, m := range members {
		if id, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// User creates a user called name in MySQL alone and returns their id.
func User(t testing.TB, d *deps.Deps, name string) int64 {
	t.Helper()
	now := d.Now()
	u := &models.User{ID: d.IDs.Next(), Username: name, DisplayName: name, PasswordHash: "x", CreatedAt: now, LastActiveAt: now}
	if err := d.Store.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// Follow makes follower follow followee in MySQL alone.
func Follow(t testing.TB, d *deps.Deps, follower, followee int64) {
	t.Helper()
	if _, err := d.Store.Follow(context.Background(), follower, followee, d.IDs.Next(), d.Now()); err != nil {
		t.Fatal(err)
	}
}

// Post creates a post by author in MySQL alone and returns its id.
func Post(t testing.TB, d *deps.Deps, author int64) int64 {
	t.Helper()
	post := &models.Post{ID: d.IDs.Next(), AuthorID: author, Body: "p", CreatedAt: d.Now()}
	if err := d.Store.CreatePost(context.Background(), post); err != nil {
		t.Fatal(err)
	}
	return post.ID
}
