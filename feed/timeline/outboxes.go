package timeline

import (
	"sync/atomic"

	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/metrics"
)

// Outboxes are the authors' outboxes and the celebrity set.
type Outboxes struct {
	d      *deps.Deps
	cache  *cache.Tiers
	copies *cache.Tier[*Copy] // the celebrities' outboxes, by author; nil when the local tiers are off
	guess  celebrityGuess
}

// NewOutboxes keeps outboxes in d's Redis; its local copies register with c, whose
// invalidation messages drop them.
func NewOutboxes(d *deps.Deps, c *cache.Tiers) *Outboxes {
	cfg := d.Cfg
	o := &Outboxes{d: d, cache: c,
		copies: cache.NewTier(metrics.KindOutbox, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, copyBytes, d.Metrics)}
	c.Register(metrics.KindOutbox, o.copies)
	return o
}

// Stop ends the local copies' clean-up goroutine.
func (o *Outboxes) Stop() { o.copies.Stop() }

// celebrityGuess is the last celebrity set this instance read, for a read
// that must guess its followed celebrities before it learns them (see
// GuessLookups); nil before the first.
type celebrityGuess struct{ ids atomic.Pointer[[]int64] }

// Remember keeps ids as the last celebrity set read.
func (o *Outboxes) Remember(ids []int64) { o.guess.ids.Store(&ids) }

// Copied returns the copies of authors' outboxes this instance holds,
// without I/O.
func (o *Outboxes) Copied(authors []int64) map[int64]*Copy { return o.copies.Cached(authors) }

// DropCopies forgets every copy this instance holds.
func (o *Outboxes) DropCopies() { o.copies.DropAll() }
