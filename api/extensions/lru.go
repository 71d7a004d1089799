package extensions

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// BoundedLRU is a graphql.Cache bounded in entries and in bytes, as size
// counts each: past either cap the least recently added or used go first.
// With a ttl, an entry not added again within it is a miss. gqlgen's own
// lru counts entries only, so a thousand documents of a megabyte each
// would all be kept.
type BoundedLRU[T any] struct {
	maxEntries, maxBytes int
	ttl                  time.Duration // 0: entries do not expire
	size                 func(key string, value T) int

	mu    sync.Mutex
	order *list.List // of *lruEntry[T], most recent first
	byKey map[string]*list.Element
	bytes int
}

type lruEntry[T any] struct {
	key   string
	value T
	size  int
	added time.Time
}

// NewBoundedLRU is a cache of at most maxEntries entries and maxBytes bytes,
// as size counts each, whose entries expire after ttl (0: never).
func NewBoundedLRU[T any](maxEntries, maxBytes int, ttl time.Duration, size func(string, T) int) *BoundedLRU[T] {
	return &BoundedLRU[T]{maxEntries: maxEntries, maxBytes: maxBytes, ttl: ttl, size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get is the value kept under key, and makes it the most recently used.
func (c *BoundedLRU[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		var zero T
		return zero, false
	}
	e := el.Value.(*lruEntry[T])
	if c.ttl > 0 && time.Since(e.added) > c.ttl {
		c.remove(el)
		var zero T
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

// Contains reports whether key is kept (and not expired), without making it
// the most recently used.
func (c *BoundedLRU[T]) Contains(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	return ok && (c.ttl <= 0 || time.Since(el.Value.(*lruEntry[T]).added) <= c.ttl)
}

// Add keeps value under key, unless it alone is over the byte cap.
func (c *BoundedLRU[T]) Add(_ context.Context, key string, value T) {
	size := c.size(key, value)
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[T]{key: key, value: value, size: size, added: time.Now()})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *BoundedLRU[T]) remove(el *list.Element) {
	e := c.order.Remove(el).(*lruEntry[T])
	delete(c.byKey, e.key)
	c.bytes -= e.size
}

// Len is how many entries and bytes the cache holds.
func (c *BoundedLRU[T]) Len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
