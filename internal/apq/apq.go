// Package apq is the cache of automatic persisted queries in Redis: the
// documents of GraphQL operations by the SHA-256 of their text, shared by
// every instance.
package apq

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxDocumentBytes is the longest document the cache keeps. Real documents
// are a few kilobytes; a longer one still runs, it is just not kept, so
// nobody fills Redis with megabyte documents.
const MaxDocumentBytes = 16 << 10

// Limits bound the cache: a document lives TTL after it was last sent in
// full, and past MaxEntries documents or MaxBytes of them the least
// recently sent go first.
type Limits struct {
	TTL        time.Duration
	MaxEntries int
	MaxBytes   int
}

// Cache keeps the documents of automatic persisted queries in Redis, by the
// SHA-256 of their text, so that every instance knows a document any of
// them was sent. It is the cache of gqlgen's AutomaticPersistedQuery
// extension (Get and Add are its graphql.Cache).
type Cache struct {
	redis  redis.UniversalClient
	keys   keys
	log    *slog.Logger
	limits Limits
	now    func() time.Time // time.Now; a test's clock can stand still
}

// New is the cache over rdb within limits, in keys that start with
// keyPrefix.
func New(rdb redis.UniversalClient, keyPrefix string, log *slog.Logger, limits Limits) *Cache {
	return &Cache{redis: rdb, keys: keys{prefix: keyPrefix}, log: log, limits: limits, now: time.Now}
}

// keys names the cache's keys: three keys that share the hash tag {apq},
// so that the script that adds a document and drops the least recently
// sent ones past the Limits touches one Redis Cluster slot. Each has the
// TTL Limits.TTL, refreshed on every add; a document past its own TTL is
// dropped on the next add.
type keys struct{ prefix string }

// docs is a hash: SHA-256 of a document -> its text, each at most
// MaxDocumentBytes, at most MaxEntries of them and MaxBytes in all.
func (k keys) docs() string { return k.prefix + "apq:{apq}:docs" }

// sent is a sorted set of the same hashes scored by when each was last
// sent in full, in Unix milliseconds. Each add scores above every score
// before it (a millisecond later than the latest, when two adds fall in one
// millisecond), so that the least recently sent is the lowest score: a tie
// went by the hashes' order, and could drop the document just sent.
func (k keys) sent() string { return k.prefix + "apq:{apq}:sent" }

// bytes is a string: the bytes of the documents kept.
func (k keys) bytes() string { return k.prefix + "apq:{apq}:bytes" }

// Get is the document of hash. A Redis failure is a miss: the client then
// sends the document in full, which works without Redis.
func (c *Cache) Get(ctx context.Context, hash string) (string, bool) {
	var doc *redis.StringCmd
	var sent *redis.FloatCmd
	_, err := c.redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		doc = p.HGet(ctx, c.keys.docs(), hash)
		sent = p.ZScore(ctx, c.keys.sent(), hash)
		return nil
	})
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			c.log.Warn("persisted query not read: redis failed", "err", err)
		}
		return "", false
	}
	// A document past its TTL that no Add has swept yet is a miss.
	if time.UnixMilli(int64(sent.Val())).Add(c.limits.TTL).Before(c.now()) {
		return "", false
	}
	return doc.Val(), true
}

// Add keeps doc under hash, which the caller has checked is its SHA-256,
// and drops what is past the TTL and the least recently sent documents
// beyond the caps.
func (c *Cache) Add(ctx context.Context, hash, doc string) {
	if len(doc) > MaxDocumentBytes || len(doc) > c.limits.MaxBytes {
		return
	}
	k := c.keys
	err := addScript.Run(ctx, c.redis,
		[]string{k.docs(), k.sent(), k.bytes()},
		hash, doc, c.now().UnixMilli(), c.limits.TTL.Milliseconds(), strconv.Itoa(c.limits.MaxEntries), strconv.Itoa(c.limits.MaxBytes)).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		c.log.Warn("persisted query not kept: redis failed", "err", err)
	}
}

// addScript: KEYS[1] the documents, KEYS[2] their last-sent times and
// KEYS[3] their byte count, each named as KEYS[n] in every call
// (TestLuaScriptsTouchOnlyTheirKEYS); ARGV hash, document, now and TTL in
// milliseconds, the caps of entries and bytes.
var addScript = redis.NewScript(`
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxEntries, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local function drop(h)
  local n = redis.call('HSTRLEN', KEYS[1], h)
  redis.call('HDEL', KEYS[1], h)
  redis.call('ZREM', KEYS[2], h)
  if n > 0 then redis.call('DECRBY', KEYS[3], n) end
end
for _, h in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl)) do drop(h) end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('INCRBY', KEYS[3], #ARGV[2])
end
local at = now
local latest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if latest[2] and tonumber(latest[2]) >= at then at = tonumber(latest[2]) + 1 end
redis.call('ZADD', KEYS[2], at, ARGV[1])
while redis.call('ZCARD', KEYS[2]) > maxEntries or tonumber(redis.call('GET', KEYS[3]) or '0') > maxBytes do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest then break end
  drop(oldest)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return 0
`)
