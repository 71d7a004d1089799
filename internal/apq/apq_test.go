package apq

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv"
)

// newTestCache is a cache over rdb under prefix within limits, logging
// nowhere.
func newTestCache(rdb redis.UniversalClient, prefix string, limits Limits) *Cache {
	return New(rdb, prefix, slog.New(slog.NewTextHandler(io.Discard, nil)), limits)
}

func TestPersistedQueries(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	limits := Limits{TTL: time.Hour, MaxEntries: 100, MaxBytes: 1 << 20}
	cache := newTestCache(rdb, prefix, limits)
	if _, ok := cache.Get(ctx, "h1"); ok {
		t.Fatal("a hash never added was found")
	}
	cache.Add(ctx, "h1", "{ viewer { id } }")
	if doc, ok := newTestCache(rdb, prefix, limits).Get(ctx, "h1"); !ok || doc != "{ viewer { id } }" {
		t.Errorf("on a second instance: %q, %v", doc, ok)
	}
	if ttl := rdb.TTL(ctx, cache.keys.docs()).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL %v, want within (0, 1h]", ttl)
	}
	// At the size limit it is kept; one byte over, it is not (it still runs).
	cache.Add(ctx, "big", strings.Repeat(" ", MaxDocumentBytes))
	cache.Add(ctx, "bigger", strings.Repeat(" ", MaxDocumentBytes+1))
	if _, ok := cache.Get(ctx, "big"); !ok {
		t.Errorf("a document of MaxDocumentBytes was not kept")
	}
	if _, ok := cache.Get(ctx, "bigger"); ok {
		t.Errorf("a document over MaxDocumentBytes was kept")
	}
}

// TestPersistedQueryCaps: past MaxEntries documents, or MaxBytes of them,
// the least recently sent go first; a document past its TTL is a miss.
func TestPersistedQueryCaps(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	k := keys{prefix: prefix}
	doc := func(i int) string { return fmt.Sprintf("{ viewer { id } } # %04d", i) } // 24 bytes each
	kept := func(c *Cache, i int) bool { _, ok := c.Get(ctx, strconv.Itoa(i)); return ok }
	t.Run("entries", func(t *testing.T) {
		rdb.Del(ctx, k.docs(), k.sent(), k.bytes())
		c := newTestCache(rdb, prefix, Limits{TTL: time.Hour, MaxEntries: 10, MaxBytes: 1 << 20})
		for i := range 100 {
			c.Add(ctx, strconv.Itoa(i), doc(i))
		}
		if n := rdb.HLen(ctx, k.docs()).Val(); n != 10 {
			t.Errorf("%d documents kept, want the cap of 10", n)
		}
		if !kept(c, 99) || !kept(c, 90) || kept(c, 89) {
			t.Errorf("not the 10 most recently sent were kept")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		rdb.Del(ctx, k.docs(), k.sent(), k.bytes())
		c := newTestCache(rdb, prefix, Limits{TTL: time.Hour, MaxEntries: 1000, MaxBytes: 5 * len(doc(0))})
		for i := range 100 {
			c.Add(ctx, strconv.Itoa(i), doc(i))
		}
		if n := rdb.HLen(ctx, k.docs()).Val(); n != 5 {
			t.Errorf("%d documents kept, want the 5 that fit in MaxBytes", n)
		}
		if b, _ := rdb.Get(ctx, k.bytes()).Int(); b != 5*len(doc(0)) {
			t.Errorf("byte count %d, want %d", b, 5*len(doc(0)))
		}
		if !kept(c, 99) || !kept(c, 95) || kept(c, 94) {
			t.Errorf("not the 5 most recently sent were kept")
		}
	})
	t.Run("same millisecond", func(t *testing.T) {
		// Sent in one millisecond, hashes in the reverse order of sending:
		// the last five sent are kept, whatever their hashes.
		rdb.Del(ctx, k.docs(), k.sent(), k.bytes())
		c := newTestCache(rdb, prefix, Limits{TTL: time.Hour, MaxEntries: 5, MaxBytes: 1 << 20})
		at := time.Now()
		c.now = func() time.Time { return at }
		hash := func(i int) string { return fmt.Sprintf("%02d", 99-i) }
		for i := range 20 {
			c.Add(ctx, hash(i), doc(i))
		}
		for i := range 20 {
			if _, ok := c.Get(ctx, hash(i)); ok != (i >= 15) {
				t.Errorf("document %d of 20, all sent in one millisecond: kept %v, want %v", i, ok, i >= 15)
			}
		}
	})
	t.Run("TTL", func(t *testing.T) {
		c := newTestCache(rdb, prefix, Limits{TTL: 50 * time.Millisecond, MaxEntries: 10, MaxBytes: 1 << 20})
		c.Add(ctx, "short", doc(0))
		time.Sleep(60 * time.Millisecond)
		if _, ok := c.Get(ctx, "short"); ok {
			t.Errorf("a document past its TTL was found")
		}
	})
}
