package extensions

import (
	"context"
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
	c := NewBoundedLRU(3, 10, 0, size)
	c.Add(ctx, "a", "aaaa")
	c.Add(ctx, "b", "bbb")
	c.Add(ctx, "c", "ccc") // 10 bytes: at the cap
	if n, b := c.Len(); n != 3 || b != 10 {
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
	if n, b := c.Len(); n != 2 || b != 10 {
		t.Errorf("past the byte cap: %d entries, %d bytes", n, b)
	}
	c.Add(ctx, "big", strings.Repeat("x", 11))
	if _, ok := c.Get(ctx, "big"); ok {
		t.Errorf("an entry over the byte cap alone was kept")
	}
	short := NewBoundedLRU(3, 10, 20*time.Millisecond, size)
	short.Add(ctx, "a", "a")
	time.Sleep(30 * time.Millisecond)
	if _, ok := short.Get(ctx, "a"); ok {
		t.Errorf("an entry past the ttl was found")
	}
}
