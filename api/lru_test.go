package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBoundedLRU: the caps of entries and bytes hold at their edge, the
// least recently used go first, an entry over the byte cap alone is not
// kept, and one past the ttl is a miss.
func TestBoundedLRU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	size := func(_, v string) int { return len(v) }
	c := newBoundedLRU(3, 10, 0, size)
	c.Add(ctx, "a", "aaaa")
	c.Add(ctx, "b", "bbb")
	c.Add(ctx, "c", "ccc") // 10 bytes: at the cap
	if n, b := c.len(); n != 3 || b != 10 {
		t.Fatalf("at the caps: %d entries, %d bytes", n, b)
	}
	c.Get(ctx, "a") // a is the most recently used now
	c.Add(ctx, "d", "d")
	if _, ok := c.Get(ctx, "b"); ok {
		t.Errorf("the least recently used was kept past the entry cap")
	}
	if _, ok := c.Get(ctx, "a"); !ok {
		t.Errorf("a recently used entry was dropped")
	}
	c.Add(ctx, "e", "eeeeee") // 4+3+1+6 = 14 > 10: c, then d go
	if n, b := c.len(); n != 2 || b != 10 {
		t.Errorf("past the byte cap: %d entries, %d bytes", n, b)
	}
	c.Add(ctx, "big", strings.Repeat("x", 11))
	if _, ok := c.Get(ctx, "big"); ok {
		t.Errorf("an entry over the byte cap alone was kept")
	}
	short := newBoundedLRU(3, 10, 20*time.Millisecond, size)
	short.Add(ctx, "a", "a")
	time.Sleep(30 * time.Millisecond)
	if _, ok := short.Get(ctx, "a"); ok {
		t.Errorf("an entry past the ttl was found")
	}
}

// TestParsedDocumentsBytes: many distinct valid documents, each long with
// a comment the token limit does not count, leave the cache of parsed
// documents within QUERY_CACHE_MAX_BYTES (gqlgen's lru kept a thousand of
// them, whatever their length).
func TestParsedDocumentsBytes(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 10
	s := newTestServer(t, backendEmbedded, func(c *config) { c.QueryCacheMaxBytes = maxBytes })
	comment := "# " + strings.Repeat("x", 16<<10) + "\n"
	for i := range 40 {
		s.anon().mustDo(t, fmt.Sprintf("%squery Q%d { __typename }", comment, i), nil, nil)
	}
	if n, b := s.app.parsedDocuments.len(); b > maxBytes || n == 0 {
		t.Errorf("the parsed documents hold %d bytes in %d entries; the cap is %d", b, n, maxBytes)
	}
}
