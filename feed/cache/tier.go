package cache

// The local tier is the first of the cache tiers (docs/architecture.md,
// "Cache tiers"): an in-process copy of the users and posts that pages show, above
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
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/prometheus/client_golang/prometheus"

	"feedservice/feed/internal/metrics"
)

// Tier is one kind of value (users, posts) cached in this process by
// id. A nil *Tier is the tier turned off: every lookup misses and
// every fill goes below.
type Tier[V any] struct {
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

// NewTier makes a tier of at most maxEntries entries and maxBytes
// bytes (as size weighs them), each kept for ttl after it was written; nil
// (off) when maxEntries is not positive.
func NewTier[V any](kind string, maxEntries int, maxBytes int64, ttl time.Duration, size func(V) int, m *metrics.Metrics) *Tier[V] {
	if maxEntries <= 0 {
		return nil
	}
	floor := max(maxBytes/int64(maxEntries), 1)
	return &Tier[V]{
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

// Cached returns the values of ids held in the tier, without I/O. Only
// hits are counted: a miss is counted by the GetMany that fills it.
func (t *Tier[V]) Cached(ids []int64) map[int64]V {
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

// GetMany returns the values of ids (absent where load finds none): the
// tier's, then load's for the rest, in one call of load for the keys no
// other reader is filling. A key being filled by another reader is waited
// for, not loaded again, so a hot key is loaded once per instance however
// many readers ask. What load returns primes the tier.
//
// The fills are singleflight per key, as golang.org/x/sync/singleflight
// does it for one key; singleflight.Group itself is not used because it
// takes one key per call, which would turn a page's batch into a load per
// entry.
func (t *Tier[V]) GetMany(ctx context.Context, ids []int64, load func(context.Context, []int64) (map[int64]V, error)) (map[int64]V, error) {
	if t == nil {
		return load(ctx, ids)
	}
	out, missing := t.lookUp(ids)
	if len(missing) == 0 {
		return out, nil
	}
	epoch, owned, joined := t.claim(missing, out)
	if len(owned) > 0 {
		if err := t.fill(ctx, load, epoch, owned, out); err != nil {
			return nil, err
		}
	}
	if len(joined) > 0 {
		if err := t.await(ctx, load, joined, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lookUp returns the values of ids the tier holds, and the ids it misses
// (each once), counting both.
func (t *Tier[V]) lookUp(ids []int64) (out map[int64]V, missing []int64) {
	out = make(map[int64]V, len(ids))
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
	t.misses.Add(float64(len(missing)))
	return out, missing
}

// claim starts a fill of each of missing that no reader is filling since
// the last drop (owned), and joins the fills of the others (joined). A key
// that a fill primed since lookUp missed it goes to out instead: a fill
// primes the tier and ends its flight under t.mu, so without this look a
// reader that missed just before a fill ended would load the key again.
func (t *Tier[V]) claim(missing []int64, out map[int64]V) (epoch uint64, owned, joined map[int64]*flight[V]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	epoch = t.epoch
	owned, joined = map[int64]*flight[V]{}, map[int64]*flight[V]{}
	for _, id := range missing {
		if v, ok := t.cache.GetIfPresent(id); ok {
			out[id] = v
			continue
		}
		if f := t.flights[id]; f != nil && f.epoch == epoch {
			joined[id] = f
			continue
		}
		f := &flight[V]{done: make(chan struct{}), epoch: epoch}
		t.flights[id] = f
		owned[id] = f
	}
	return epoch, owned, joined
}

// fill loads the owned keys in one call, hands the values to the readers
// that joined, adds them to out and, unless a drop came meanwhile, primes
// the tier with them.
func (t *Tier[V]) fill(ctx context.Context, load func(context.Context, []int64) (map[int64]V, error), epoch uint64, owned map[int64]*flight[V], out map[int64]V) error {
	mine := make([]int64, 0, len(owned))
	for id := range owned {
		mine = append(mine, id)
	}
	start := time.Now()
	got, err := load(ctx, mine)
	t.fillDur.Observe(time.Since(start).Seconds())
	t.mu.Lock()
	defer t.mu.Unlock()
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
	return err
}

// await waits for the fills other readers own and adds their values to
// out; the keys whose fill failed are loaded again, here: the filler's
// failure (its context, say) need not be this reader's.
func (t *Tier[V]) await(ctx context.Context, load func(context.Context, []int64) (map[int64]V, error), joined map[int64]*flight[V], out map[int64]V) error {
	var again []int64
	for id, f := range joined {
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case f.err != nil:
			again = append(again, id)
		case f.found:
			out[id] = f.value
		}
	}
	if len(again) == 0 {
		return nil
	}
	got, err := load(ctx, again)
	if err != nil {
		return err
	}
	for id, v := range got {
		out[id] = v
	}
	return nil
}

// Drop forgets ids, and makes the fills in progress neither prime the tier
// nor serve later readers.
func (t *Tier[V]) Drop(ids []int64) {
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

// DropAll forgets every entry, as Drop does ids.
func (t *Tier[V]) DropAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.epoch++
	t.cache.InvalidateAll()
	t.mu.Unlock()
}

// Stop ends the cache's clean-up goroutine.
func (t *Tier[V]) Stop() {
	if t != nil {
		t.cache.StopAllGoroutines()
	}
}
