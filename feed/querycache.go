package feed

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxPersistedQueryBytes is the longest document the persisted-query cache
// keeps. Real documents are a few kilobytes; a longer one still runs, it is
// just not kept, so nobody fills Redis with megabyte documents.
const MaxPersistedQueryBytes = 16 << 10

// PersistedQueryLimits bound the persisted-query cache: a document lives TTL
// after it was last sent in full, and past MaxEntries documents or MaxBytes
// of them the least recently sent go first.
type PersistedQueryLimits struct {
	TTL        time.Duration
	MaxEntries int
	MaxBytes   int
}

// PersistedQueries keeps the documents of automatic persisted queries in
// Redis, by the SHA-256 of their text, so that every instance knows a
// document any of them was sent. It is the cache of gqlgen's
// AutomaticPersistedQuery extension (Get and Add are its graphql.Cache).
type PersistedQueries struct {
	e      *Engine
	limits PersistedQueryLimits
}

// PersistedQueries is the persisted-query cache within limits.
func (e *Engine) PersistedQueries(limits PersistedQueryLimits) *PersistedQueries {
	return &PersistedQueries{e: e, limits: limits}
}

// Get is the document of hash. A Redis failure is a miss: the client then
// sends the document in full, which works without Redis.
func (c *PersistedQueries) Get(ctx context.Context, hash string) (string, bool) {
	var doc *redis.StringCmd
	var sent *redis.FloatCmd
	_, err := c.e.redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		doc = p.HGet(ctx, c.e.keys.persistedQueries(), hash)
		sent = p.ZScore(ctx, c.e.keys.persistedQueriesSent(), hash)
		return nil
	})
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			c.e.log.Warn("persisted query not read: redis failed", "err", err)
		}
		return "", false
	}
	// A document past its TTL that no Add has swept yet is a miss.
	if time.UnixMilli(int64(sent.Val())).Add(c.limits.TTL).Before(time.Now()) {
		return "", false
	}
	return doc.Val(), true
}

// Add keeps doc under hash, which the caller has checked is its SHA-256,
// and drops what is past the TTL and the least recently sent documents
// beyond the caps.
func (c *PersistedQueries) Add(ctx context.Context, hash, doc string) {
	if len(doc) > MaxPersistedQueryBytes || len(doc) > c.limits.MaxBytes {
		return
	}
	k := c.e.keys
	err := addPersistedQueryScript.Run(ctx, c.e.redis,
		[]string{k.persistedQueries(), k.persistedQueriesSent(), k.persistedQueriesBytes()},
		hash, doc, time.Now().UnixMilli(), c.limits.TTL.Milliseconds(), strconv.Itoa(c.limits.MaxEntries), strconv.Itoa(c.limits.MaxBytes)).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		c.e.log.Warn("persisted query not kept: redis failed", "err", err)
	}
}

// addPersistedQueryScript: KEYS the documents, their last-sent times and
// their byte count; ARGV hash, document, now and TTL in milliseconds, the
// caps of entries and bytes.
var addPersistedQueryScript = redis.NewScript(`
local docs, sent, total = KEYS[1], KEYS[2], KEYS[3]
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxEntries, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local function drop(h)
  local n = redis.call('HSTRLEN', docs, h)
  redis.call('HDEL', docs, h)
  redis.call('ZREM', sent, h)
  if n > 0 then redis.call('DECRBY', total, n) end
end
for _, h in ipairs(redis.call('ZRANGEBYSCORE', sent, '-inf', now - ttl)) do drop(h) end
if redis.call('HSETNX', docs, ARGV[1], ARGV[2]) == 1 then
  redis.call('INCRBY', total, #ARGV[2])
end
redis.call('ZADD', sent, now, ARGV[1])
while redis.call('ZCARD', sent) > maxEntries or tonumber(redis.call('GET', total) or '0') > maxBytes do
  local oldest = redis.call('ZRANGE', sent, 0, 0)[1]
  if not oldest then break end
  drop(oldest)
end
for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, ttl) end
return 0
`)
