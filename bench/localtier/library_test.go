package localtier

import (
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/maypok86/otter/v2"
)

// The candidates of the local tier, measured on the load it serves: many
// goroutines reading a skewed (zipf) key set of values of about 300 bytes
// (a user or a post), filling what they miss. Each cache is bounded to
// libBenchEntries entries of a key space libBenchKeys wide; the hit ratio
// is reported beside ns/op. Run with
//
//	go test -run '^$' -bench BenchmarkLocalTierLibrary -benchmem ./bench/localtier
const (
	libBenchKeys    = 1_000_000
	libBenchEntries = 100_000
	libBenchValue   = 300
	libBenchTrace   = 1 << 20
)

// libCache is what the benchmark needs of a candidate.
type libCache interface {
	get(k int64) ([]byte, bool)
	set(k int64, v []byte)
}

type otterCache struct{ c *otter.Cache[int64, []byte] }

func (o otterCache) get(k int64) ([]byte, bool) { return o.c.GetIfPresent(k) }
func (o otterCache) set(k int64, v []byte)      { o.c.Set(k, v) }

type ristrettoCache struct {
	c *ristretto.Cache[int64, []byte]
}

func (r ristrettoCache) get(k int64) ([]byte, bool) { return r.c.Get(k) }
func (r ristrettoCache) set(k int64, v []byte)      { r.c.Set(k, v, int64(len(v))) }

type lruCache struct{ c *expirable.LRU[int64, []byte] }

func (l lruCache) get(k int64) ([]byte, bool) { return l.c.Get(k) }
func (l lruCache) set(k int64, v []byte)      { l.c.Add(k, v) }

func BenchmarkLocalTierLibrary(b *testing.B) {
	trace := make([]int64, libBenchTrace)
	z := rand.NewZipf(rand.New(rand.NewSource(1)), 1.01, 1, libBenchKeys-1)
	for i := range trace {
		trace[i] = int64(z.Uint64())
	}
	value := make([]byte, libBenchValue)
	candidates := []struct {
		name string
		make func() (libCache, func())
	}{
		// otter bounds by a weight (bytes here) and expires after write.
		{"otter", func() (libCache, func()) {
			c := otter.Must(&otter.Options[int64, []byte]{
				MaximumWeight:    libBenchEntries * libBenchValue,
				Weigher:          func(_ int64, v []byte) uint32 { return uint32(len(v)) },
				ExpiryCalculator: otter.ExpiryWriting[int64, []byte](time.Second),
			})
			return otterCache{c}, func() { c.StopAllGoroutines() }
		}},
		// ristretto bounds by a cost (bytes here), expires by TTL, and may
		// drop a set under contention.
		{"ristretto", func() (libCache, func()) {
			c, err := ristretto.NewCache(&ristretto.Config[int64, []byte]{
				NumCounters: 10 * libBenchEntries, MaxCost: libBenchEntries * libBenchValue,
				BufferItems: 64, IgnoreInternalCost: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			return ristrettoCache{c}, c.Close
		}},
		// The expirable LRU bounds entries only, under one mutex.
		{"golang-lru-expirable", func() (libCache, func()) {
			return lruCache{expirable.NewLRU[int64, []byte](libBenchEntries, nil, time.Second)}, func() {}
		}},
	}
	for _, cand := range candidates {
		b.Run(cand.name, func(b *testing.B) {
			c, stop := cand.make()
			defer stop()
			// Warm the cache with one pass of the trace so the ratio is the
			// steady state's.
			for _, k := range trace[:libBenchTrace/4] {
				if _, ok := c.get(k); !ok {
					c.set(k, append([]byte(nil), value...))
				}
			}
			var hits, lookups atomic.Int64
			var seed atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seed.Add(7919)) % libBenchTrace
				var h, n int64
				for pb.Next() {
					k := trace[i%libBenchTrace]
					i++
					n++
					if _, ok := c.get(k); ok {
						h++
						continue
					}
					c.set(k, append([]byte(nil), value...))
				}
				hits.Add(h)
				lookups.Add(n)
			})
			b.ReportMetric(float64(hits.Load())/float64(lookups.Load()), "hit-ratio")
		})
	}
}
