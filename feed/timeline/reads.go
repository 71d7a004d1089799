// Package timeline is the read model of the home feed: each reader's
// inbox (their recent entries in Redis, with the sources that brought them,
// and their followee set beside it), each author's outbox, the celebrity
// set and this instance's copies of the celebrities' outboxes, the reads of
// MySQL alone (fan-in at read time: the whole feed in pull mode, and below
// the window the inboxes hold in the other modes), and the page merged from
// all of them (merge.go), checked against the posts and the followee set and
// repaired in place; and the unread count from the reader's read marker.
// The fan-out changes inboxes and outboxes through Inboxes and Outboxes;
// reads go through Reads.
package timeline

import (
	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/replicas"
)

// Reads reads home feeds.
type Reads struct {
	d        *deps.Deps
	rep      *replicas.Router
	cache    *cache.Tiers
	pull     *Feeds
	inboxes  *Inboxes
	outboxes *Outboxes
}

// NewReads reads feeds from the given parts.
func NewReads(d *deps.Deps, rep *replicas.Router, c *cache.Tiers, f *Feeds, x *Inboxes, o *Outboxes) *Reads {
	return &Reads{d: d, rep: rep, cache: c, pull: f, inboxes: x, outboxes: o}
}
