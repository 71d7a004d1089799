// Package subscriptions serves the live streams of a viewer: their unread
// count (the red dot) and the entries entering their feed, from the
// messages of this instance's hub.
package subscriptions

import (
	"feedservice/feed/inbox"
	"feedservice/feed/internal/deps"
	"feedservice/feed/live"
	"feedservice/feed/outbox"
	"feedservice/feed/readpath"
)

// Listeners are the live streams of this instance.
type Listeners struct {
	d        *deps.Deps
	hub      *live.Hub
	reads    *readpath.Reads
	inboxes  *inbox.Inboxes
	outboxes *outbox.Outboxes
}

// New serves live streams from hub's messages.
func New(d *deps.Deps, hub *live.Hub, reads *readpath.Reads, x *inbox.Inboxes, o *outbox.Outboxes) *Listeners {
	return &Listeners{d: d, hub: hub, reads: reads, inboxes: x, outboxes: o}
}
