// Package home builds the home connection: the viewer's feed with entries
// of other kinds inserted at a fixed rhythm (promoted posts, suggested
// users), and the operator's and the viewer's changes of those.
package home

import (
	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/timeline"
)

// Mixer mixes the inserted entries into the viewer's feed.
type Mixer struct {
	d     *deps.Deps
	cache *cache.Tiers
	reads *timeline.Reads
}

// New mixes into the feeds reads reads.
func New(d *deps.Deps, c *cache.Tiers, reads *timeline.Reads) *Mixer {
	return &Mixer{d: d, cache: c, reads: reads}
}
