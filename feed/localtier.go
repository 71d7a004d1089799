package feed

// The local tier is the first of the cache tiers (DESIGN.md, "Cache
// tiers"): an in-process copy of the users and posts that pages show, above
// the Redis copies and MySQL.
//
// It is built on otter (github.com/maypok86/otter/v2), chosen by
// BenchmarkLocalTierLibrary (bench/localtier): two goroutines on the
// 2-core box reading a zipf(1.01) key set of 1,000,000 keys with values of
// 300 bytes, each cache bounded to 100,000 entries' worth, filling what they
// miss:
//
//	otter                 814 ns/op  hit ratio 0.918  0 allocs/op  bounds by weight, expires after write
//	ristretto            1024 ns/op  hit ratio 0.908  0 allocs/op  bounds by cost, TTL; drops sets under load
//	golang-lru expirable 1190 ns/op  hit ratio 0.899  0 allocs/op  bounds entries only; one mutex
//
// otter is the fastest and keeps the most hits, and it is the only one of
// the three whose writes are synchronous and exact: ristretto applies sets
// through a buffer that may drop them and may apply a set after a later
// delete, which an invalidation cannot allow; the expirable LRU has no
// byte bound and starts a goroutine per cache that nothing stops.
//
// otter bounds by entries or by weight, not both; the tier bounds both by
// weighing each entry at least LocalCacheMaxBytes/LocalCacheMaxEntries, so
// that a total weight within LocalCacheMaxBytes is also within
// LocalCacheMaxEntries entries.

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/prometheus/client_golang/prometheus"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/models"
)

// localTier is one kind of value (users, posts) cached in this process by
// id. A nil *localTier is the tier turned off: every lookup misses and
// every fill goes below.
type localTier[V any] struct {
	kind    string
	cache   *otter.Cache[int64, V]
	hits    prometheus.Counter
	misses  prometheus.Counter
	fillDur prometheus.Observer

	// mu guards flights and epoch. epoch counts drops: a fill that began
	// before a drop neither primes the cache nor is joined by readers
	// that come after the drop, so a reader never gets, from a fill, a
	// value older than a change this instance has heard of.
	mu      sync.Mutex
	flights map[int64]*flight[V]
	epoch   uint64
}

// flight is one fill of one key in progress; done closes when it ends.
type flight[V any] struct {
	done  chan struct{}
	epoch uint64
	value V
	found bool
	err   error
}

// newLocalTier makes a tier of at most maxEntries entries and maxBytes
// bytes (as size weighs them), each kept for ttl after it was written; nil
// (off) when maxEntries is not positive.
func newLocalTier[V any](kind string, maxEntries int, maxBytes int64, ttl time.Duration, size func(V) int, m *metrics.Metrics) *localTier[V] {
	if maxEntries <= 0 {
		return nil
	}
	floor := max(maxBytes/int64(maxEntries), 1)
	return &localTier[V]{
		kind: kind,
		cache: otter.Must(&otter.Options[int64, V]{
			MaximumWeight: uint64(maxBytes),
			Weigher: func(_ int64, v V) uint32 {
				return uint32(min(max(int64(size(v)), floor), 1<<31))
			},
			ExpiryCalculator: otter.ExpiryWriting[int64, V](ttl),
		}),
		hits:    m.CacheLookups.WithLabelValues(metrics.TierLocal, kind, "hit"),
		misses:  m.CacheLookups.WithLabelValues(metrics.TierLocal, kind, "miss"),
		fillDur: m.CacheFillSeconds.WithLabelValues(metrics.TierLocal, kind),
		flights: map[int64]*flight[V]{},
	}
}

// cached returns the values of ids held in the tier, without I/O. Only
// hits are counted: a miss is counted by the getMany that fills it.
func (t *localTier[V]) cached(ids []int64) map[int64]V {
	if t == nil {
		return nil
	}
	out := make(map[int64]V, len(ids))
	for _, id := range ids {
		if v, ok := t.cache.GetIfPresent(id); ok {
			out[id] = v
		}
	}
	t.hits.Add(float64(len(out)))
	return out
}

// getMany returns the values of ids (absent where load finds none): the
// tier's, then load's for the rest, in one call of load for the keys no
// other reader is filling. A key being filled by another reader is waited
// for, not loaded again, so a hot key is loaded once per instance however
// many readers ask. What load returns primes the tier.
//
// The fills are singleflight per key, as golang.org/x/sync/singleflight
// does it for one key; singleflight.Group itself is not used because it
// takes one key per call, which would turn a page's batch into a load per
// entry.
func (t *localTier[V]) getMany(ctx context.Context, ids []int64, load func(context.Context, []int64) (map[int64]V, error)) (map[int64]V, error) {
	if t == nil {
		return load(ctx, ids)
	}
	out := make(map[int64]V, len(ids))
	var missing []int64
	asked := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if asked[id] {
			continue
		}
		asked[id] = true
		if v, ok := t.cache.GetIfPresent(id); ok {
			out[id] = v
		} else {
			missing = append(missing, id)
		}
	}
	t.hits.Add(float64(len(out)))
	if len(missing) == 0 {
		return out, nil
	}
	t.misses.Add(float64(len(missing)))

	t.mu.Lock()
	epoch := t.epoch
	var mine []int64
	owned := map[int64]*flight[V]{}
	joined := map[int64]*flight[V]{}
	for _, id := range missing {
		if f := t.flights[id]; f != nil && f.epoch == epoch {
			joined[id] = f
			continue
		}
		f := &flight[V]{done: make(chan struct{}), epoch: epoch}
		t.flights[id] = f
		owned[id] = f
		mine = append(mine, id)
	}
	t.mu.Unlock()

	if len(mine) > 0 {
		start := time.Now()
		got, err := load(ctx, mine)
		t.fillDur.Observe(time.Since(start).Seconds())
		t.mu.Lock()
		prime := err == nil && t.epoch == epoch
		for id, f := range owned {
			f.value, f.found = got[id]
			f.err = err
			if t.flights[id] == f {
				delete(t.flights, id)
			}
			if f.found {
				out[id] = f.value
				if prime {
					t.cache.Set(id, f.value)
				}
			}
			close(f.done)
		}
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}

	var again []int64
	for id, f := range joined {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		switch {
		case f.err != nil:
			again = append(again, id) // the filler's failure (its context, say) need not be this reader's
		case f.found:
			out[id] = f.value
		}
	}
	if len(again) > 0 {
		got, err := load(ctx, again)
		if err != nil {
			return nil, err
		}
		for id, v := range got {
			out[id] = v
		}
	}
	return out, nil
}

// drop forgets ids, and makes the fills in progress neither prime the tier
// nor serve later readers.
func (t *localTier[V]) drop(ids []int64) {
	if t == nil || len(ids) == 0 {
		return
	}
	t.mu.Lock()
	t.epoch++
	for _, id := range ids {
		t.cache.Invalidate(id)
	}
	t.mu.Unlock()
}

// dropAll forgets every entry, as drop does ids.
func (t *localTier[V]) dropAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.epoch++
	t.cache.InvalidateAll()
	t.mu.Unlock()
}

// stop ends the cache's clean-up goroutine.
func (t *localTier[V]) stop() {
	if t != nil {
		t.cache.StopAllGoroutines()
	}
}

// localTiers are the engine's local tiers.
type localTiers struct {
	users *localTier[*models.User]
	posts *localTier[*models.Post]
	// outboxes holds celebrities' outboxes by author (see outboxtier.go).
	outboxes *localTier[*outboxCopy]
	// celebrities is the celebrity set as this instance last read it.
	celebrities *celebrityGuess
	// followees holds, by reader, this instance's copy of their followee
	// set with the version it was read at (see followeeCopy); nil when
	// the local tiers are off.
	followees *otter.Cache[int64, followeeCopy]
}

func newLocalTiers(cfg config.Config, m *metrics.Metrics) localTiers {
	t := localTiers{
		users:       newLocalTier(metrics.KindUser, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, userBytes, m),
		posts:       newLocalTier(metrics.KindPost, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, postBytes, m),
		outboxes:    newLocalTier(metrics.KindOutbox, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, outboxCopyBytes, m),
		celebrities: &celebrityGuess{},
	}
	if cfg.LocalCacheMaxEntries > 0 {
		floor := max(cfg.LocalCacheMaxBytes/int64(cfg.LocalCacheMaxEntries), 1)
		t.followees = otter.Must(&otter.Options[int64, followeeCopy]{
			MaximumWeight: uint64(cfg.LocalCacheMaxBytes),
			Weigher: func(_ int64, c followeeCopy) uint32 {
				return uint32(min(max(int64(100+len(c.version)+8*len(c.ids)), floor), 1<<31))
			},
		})
	}
	return t
}

// followeeCopy is a reader's followee set (sorted ids, the marker left
// out) as read at version, the token its last writer set beside it. A read
// sends the version with its reader-state script and uses the ids only
// when the script answers that the set is still at that version: every
// writer of the set replaces the token in the same script, and a token is
// random, never one an earlier set had, so a copy is never taken for a set
// that changed, was dropped or was rebuilt. It needs no expiry and no
// invalidation message: each read asks Redis, so a change made on another
// instance is seen by the next read. The ids are shared by the reads that
// use the copy, and never changed.
type followeeCopy struct {
	version string
	ids     []int64
}

// followeeCopy returns this instance's copy of reader's followee set; the
// zero copy (version "") when there is none.
func (t localTiers) followeeCopy(reader int64) followeeCopy {
	if t.followees == nil {
		return followeeCopy{}
	}
	c, _ := t.followees.GetIfPresent(reader)
	return c
}

// keepFolloweeCopy stores c as reader's copy, unless it has no version
// (the version key was missing: nothing could confirm the copy).
func (t localTiers) keepFolloweeCopy(reader int64, c followeeCopy) {
	if t.followees == nil || c.version == "" {
		return
	}
	t.followees.Set(reader, c)
}

// userBytes and postBytes estimate what a cached value holds in memory:
// its strings, its fixed fields, and the cache's own entry (about 100
// bytes in otter).
func userBytes(u *models.User) int {
	return 250 + len(u.Username) + len(u.UsernameKey) + len(u.DisplayName) + len(u.Bio) + len(u.PasswordHash)
}

func postBytes(p *models.Post) int { return 200 + len(p.Body) + 16*len(p.Reposts) }

// CachedUsers returns the users of ids that this instance holds in its
// local tier, without I/O, for callers that would otherwise wait to batch
// a load (the dataloaders). The values are shared: read them only.
func (e *Engine) CachedUsers(ids []int64) map[int64]*models.User { return e.local.users.cached(ids) }

// CachedPosts is CachedUsers for posts, deleted ones included.
func (e *Engine) CachedPosts(ids []int64) map[int64]*models.Post { return e.local.posts.cached(ids) }

// dropLocal forgets users and posts in this instance's local tier at once,
// and tells the other instances to forget them. A mutation calls it after
// its commit, before it answers. An instance that misses the message keeps
// its copy for LocalCacheTTL at most.
func (e *Engine) dropLocal(ctx context.Context, users, posts []int64) {
	e.local.users.drop(users)
	e.local.posts.drop(posts)
	if msg := invalidation(metrics.KindUser, users); msg != "" {
		e.publish(ctx, e.keys.CacheInvalidateChannel(), msg)
	}
	if msg := invalidation(metrics.KindPost, posts); msg != "" {
		e.publish(ctx, e.keys.CacheInvalidateChannel(), msg)
	}
}

// invalidation is the message naming ids of kind: "user 1 2 3".
func invalidation(kind string, ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	b := []byte(kind)
	for _, id := range ids {
		b = append(b, ' ')
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// parseInvalidation reads a message of invalidation; a malformed id is
// skipped (the bound of the tier still holds for it).
func parseInvalidation(payload string) (kind string, ids []int64) {
	fields := strings.Fields(payload)
	if len(fields) == 0 {
		return "", nil
	}
	for _, f := range fields[1:] {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return fields[0], ids
}

// onInvalidation applies a message of the invalidate channel.
func (e *Engine) onInvalidation(payload string) {
	if token, ok := strings.CutPrefix(payload, invalidationSync); ok {
		if done, ok := e.invalidationSyncs.LoadAndDelete(token); ok {
			close(done.(chan struct{}))
		}
		return
	}
	kind, ids := parseInvalidation(payload)
	switch kind {
	case metrics.KindUser:
		e.local.users.drop(ids)
	case metrics.KindPost:
		e.local.posts.drop(ids)
	case metrics.KindOutbox:
		e.local.outboxes.drop(ids)
	}
}

// onInvalidationsResubscribed forgets every local copy: the hub's
// connection dropped and came back, and the messages sent meanwhile are
// lost, so any copy may be one a message would have dropped.
func (e *Engine) onInvalidationsResubscribed() {
	e.local.users.dropAll()
	e.local.posts.dropAll()
	e.local.outboxes.dropAll()
}

// invalidationSync starts the message SyncInvalidations waits for.
const invalidationSync = "sync "

// SyncInvalidations returns once this instance has applied every
// invalidation message published before the call: it publishes a message
// of its own and waits for it (Redis delivers a channel's messages in the
// order it ran their PUBLISH). Tests use it to read across instances
// "after the messages arrived", as Settle is "after the workers".
func (e *Engine) SyncInvalidations(ctx context.Context) error {
	if e.hub == nil {
		return nil // not started: no local copies to drop by message
	}
	token := newToken()
	done := make(chan struct{})
	e.invalidationSyncs.Store(token, done)
	defer e.invalidationSyncs.Delete(token)
	if err := e.redis.Publish(ctx, e.keys.CacheInvalidateChannel(), invalidationSync+token).Err(); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
