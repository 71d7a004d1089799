package cache

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"feedservice/feed/internal/metrics"
	"feedservice/internal/testenv"
)

// countingLoader loads "value of id" for each id, slowly, counting the keys
// it was asked for.
type countingLoader struct {
	keys  atomic.Int64
	calls atomic.Int64
	delay time.Duration
}

func (l *countingLoader) load(_ context.Context, ids []int64) (map[int64]*string, error) {
	l.calls.Add(1)
	l.keys.Add(int64(len(ids)))
	time.Sleep(l.delay)
	out := make(map[int64]*string, len(ids))
	for _, id := range ids {
		v := fmt.Sprintf("value of %d", id)
		out[id] = &v
	}
	return out, nil
}

func strBytes(s *string) int { return len(*s) }

func newStringTier(t *testing.T, entries int, bytes int64, ttl time.Duration) *Tier[*string] {
	t.Helper()
	tier := NewTier(metrics.KindPost, entries, bytes, ttl, strBytes, metrics.New())
	t.Cleanup(tier.Stop)
	return tier
}

// A hot key is loaded once however many readers ask for it at once, and
// a page's misses are loaded in one batch.
func TestLocalTierFillsOncePerKey(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, time.Minute)
	loader := &countingLoader{delay: 50 * time.Millisecond}
	ids := []int64{1, 2, 3, 4, 5}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			got, err := tier.GetMany(context.Background(), ids, loader.load)
			if err == nil && (len(got) != len(ids) || *got[3] != "value of 3") {
				err = fmt.Errorf("got %d values", len(got))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := loader.keys.Load(); n != int64(len(ids)) {
		t.Fatalf("100 readers of %d keys loaded %d keys in %d calls, want each key once", len(ids), n, loader.calls.Load())
	}
	if got := tier.Cached(ids); len(got) != len(ids) {
		t.Fatalf("the tier holds %d of the %d keys it filled", len(got), len(ids))
	}
}

// A reader that missed its keys just before another reader's fill of them
// ended takes the primed values, and loads nothing: the interleaving that
// made TestLocalTierFillsOncePerKey load 8 keys of 5 on a busy box (a
// reader's look-up missed, the fill primed the tier and ended its flight,
// then the reader found no flight to join and loaded the keys again).
func TestLocalTierMissJustBeforeAFillEndsLoadsNothing(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, time.Minute)
	ids := []int64{1, 2, 3}
	out, missing := tier.lookUp(ids) // this reader misses all three
	if len(missing) != len(ids) {
		t.Fatalf("an empty tier missed %d of %d keys", len(missing), len(ids))
	}
	other := &countingLoader{}
	if _, err := tier.GetMany(context.Background(), ids, other.load); err != nil || other.keys.Load() != int64(len(ids)) {
		t.Fatalf("the other reader's fill: err %v, %d keys loaded", err, other.keys.Load())
	}
	_, owned, joined := tier.claim(missing, out)
	if len(owned) != 0 || len(joined) != 0 {
		t.Fatalf("after the fill ended, the reader claimed %d keys to load and joined %d fills, want none", len(owned), len(joined))
	}
	if len(out) != len(ids) || *out[2] != "value of 2" {
		t.Fatalf("the reader got %d values, want the %d the fill primed", len(out), len(ids))
	}
}

// The tier holds at most its entries and at most its bytes.
func TestLocalTierBounds(t *testing.T) {
	fill := func(tier *Tier[*string], n int, size int) {
		for i := range n {
			v := strings.Repeat("x", size)
			tier.GetMany(context.Background(), []int64{int64(i)}, func(context.Context, []int64) (map[int64]*string, error) {
				return map[int64]*string{int64(i): &v}, nil
			})
		}
		tier.cache.CleanUp()
	}
	byEntries := newStringTier(t, 100, 1<<30, time.Minute)
	fill(byEntries, 1000, 10)
	if n := byEntries.cache.EstimatedSize(); n > 100 || n == 0 {
		t.Fatalf("a tier of 100 entries holds %d", n)
	}
	byBytes := newStringTier(t, 100_000, 10_000, time.Minute)
	fill(byBytes, 1000, 1000)
	if n := byBytes.cache.EstimatedSize(); n > 10 || n == 0 {
		t.Fatalf("a tier of 10,000 bytes holds %d values of 1,000 bytes", n)
	}
}

// A value is loaded again once the tier's TTL has passed since its fill.
func TestLocalTierRevalidatesAfterTTL(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, 100*time.Millisecond)
	loader := &countingLoader{}
	read := func() { tier.GetMany(context.Background(), []int64{7}, loader.load) }
	read()
	read()
	if n := loader.calls.Load(); n != 1 {
		t.Fatalf("two reads within the TTL loaded %d times, want 1", n)
	}
	time.Sleep(200 * time.Millisecond)
	read()
	if n := loader.calls.Load(); n != 2 {
		t.Fatalf("a read after the TTL loaded %d times in all, want 2", n)
	}
}

// A fill that began before a drop does not put its (perhaps older) value
// in the tier.
func TestLocalTierDropDuringFill(t *testing.T) {
	tier := newStringTier(t, 1000, 1<<20, time.Minute)
	started, release := make(chan struct{}), make(chan struct{})
	go tier.GetMany(context.Background(), []int64{9}, func(context.Context, []int64) (map[int64]*string, error) {
		close(started)
		<-release
		old := "old"
		return map[int64]*string{9: &old}, nil
	})
	<-started
	tier.Drop([]int64{9})
	close(release)
	testenv.WaitFor(t, "the first fill to end", func() bool {
		tier.mu.Lock()
		defer tier.mu.Unlock()
		return len(tier.flights) == 0
	})
	loader := &countingLoader{}
	got, err := tier.GetMany(context.Background(), []int64{9}, loader.load)
	if err != nil {
		t.Fatal(err)
	}
	if *got[9] != "value of 9" {
		t.Fatalf("a read after the drop got %q, from the fill that began before it", *got[9])
	}
}
