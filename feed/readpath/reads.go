// Package readpath reads home feeds: the page of push and hybrid modes
// merged from the reader's inbox and the outboxes of the celebrities they
// follow, checked against the posts and the followee set and repaired in
// place, with MySQL below the window those hold (and for all of pull
// mode); and the unread count from the reader's read marker.
package readpath

import (
	"feedservice/feed/cache"
	"feedservice/feed/inbox"
	"feedservice/feed/internal/deps"
	"feedservice/feed/outbox"
	"feedservice/feed/pull"
	"feedservice/feed/replicas"
)

// Reads reads home feeds.
type Reads struct {
	d        *deps.Deps
	rep      *replicas.Router
	cache    *cache.Tiers
	pull     *pull.Feeds
	inboxes  *inbox.Inboxes
	outboxes *outbox.Outboxes
}

// New reads feeds from the given parts.
func New(d *deps.Deps, rep *replicas.Router, c *cache.Tiers, f *pull.Feeds, x *inbox.Inboxes, o *outbox.Outboxes) *Reads {
	return &Reads{d: d, rep: rep, cache: c, pull: f, inboxes: x, outboxes: o}
}
