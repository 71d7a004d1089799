// Package subscriptions serves the live streams of a viewer: their unread
// count (the red dot) and the entries entering their feed, from the
// messages of this instance's hub.
package subscriptions

import (
	"feedservice/feed/internal/deps"
	"feedservice/feed/live"
	"feedservice/feed/timeline"
)

// Listeners are the live streams of this instance.
type Listeners struct {
	d        *deps.Deps
	hub      *live.Hub
	reads    *timeline.Reads
	inboxes  *timeline.Inboxes
	outboxes *timeline.Outboxes
}

// New serves live streams from hub's messages.
func New(d *deps.Deps, hub *live.Hub, reads *timeline.Reads, x *timeline.Inboxes, o *timeline.Outboxes) *Listeners {
	return &Listeners{d: d, hub: hub, reads: reads, inboxes: x, outboxes: o}
}
