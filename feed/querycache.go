package feed

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxPersistedQueryBytes is the longest document the persisted-query cache
// keeps. Real documents are a few kilobytes; a longer one still runs, it is
// just not kept, so nobody fills Redis with megabyte documents.
const MaxPersistedQueryBytes = 16 << 10

// PersistedQueries keeps the documents of automatic persisted queries in
// Redis, by the SHA-256 of their text, so that every instance knows a
// document any of them was sent. It is the cache of gqlgen's
// AutomaticPersistedQuery extension (Get and Add are its graphql.Cache).
type PersistedQueries struct {
	e   *Engine
	ttl time.Duration
}

// PersistedQueries is the persisted-query cache; a kept document lives ttl
// after it was last sent in full.
func (e *Engine) PersistedQueries(ttl time.Duration) *PersistedQueries {
	return &PersistedQueries{e: e, ttl: ttl}
}

// Get is the document of hash. A Redis failure is a miss: the client then
// sends the document in full, which works without Redis.
func (c *PersistedQueries) Get(ctx context.Context, hash string) (string, bool) {
	doc, err := c.e.redis.Get(ctx, c.e.keys.persistedQuery(hash)).Result()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			c.e.log.Warn("persisted query not read: redis failed", "err", err)
		}
		return "", false
	}
	return doc, true
}

// Add keeps doc under hash, which the caller has checked is its SHA-256.
func (c *PersistedQueries) Add(ctx context.Context, hash, doc string) {
	if len(doc) > MaxPersistedQueryBytes {
		return
	}
	if err := c.e.redis.Set(ctx, c.e.keys.persistedQuery(hash), doc, c.ttl).Err(); err != nil {
		c.e.log.Warn("persisted query not kept: redis failed", "err", err)
	}
}
