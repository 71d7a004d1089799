// Package timeline is the read model of the home feed: each reader's
// inbox (their recent entries in Redis, with the sources that brought them,
// and their followee set beside it), and the page merged from it, from the
// outboxes of the celebrities the reader follows (package outbox) and from
// MySQL's (package pull: the whole feed in pull mode, and below the window
// the inboxes hold in the other modes) in merge.go, checked against the
// posts and the followee set and repaired in place; and the unread count
// from the reader's read marker.
// The fan-out changes inboxes through Inboxes; reads go through Reads.
package timeline

import (
	"feedservice/feed/config"
	"feedservice/feed/pull"
	"sync"
	"sync/atomic"

	"github.com/maypok86/otter/v2"

	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/replicas"
)

// Reads reads home feeds.
type Reads struct {
	d        *deps.Deps
	rep      *replicas.Router
	cache    *cache.Tiers
	pull     *pull.Feeds
	inboxes  *Inboxes
	outboxes *outbox.Outboxes
}

// NewReads reads feeds from the given parts.
func NewReads(d *deps.Deps, rep *replicas.Router, c *cache.Tiers, f *pull.Feeds, x *Inboxes, o *outbox.Outboxes) *Reads {
	return &Reads{d: d, rep: rep, cache: c, pull: f, inboxes: x, outboxes: o}
}

// Inboxes are the readers' inboxes and followee sets.
type Inboxes struct {
	d     *deps.Deps
	pub   *livemsg.Publisher // announces the entries that batches of added sources changed
	cache *cache.Tiers
	rep   *replicas.Router
	pull  *pull.Feeds
	// followees holds, by reader, this instance's copy of their followee
	// set with the version it was read at (see FolloweeCopy); nil when the
	// local tiers are off.
	followees *otter.Cache[int64, FolloweeCopy]
	// pruned is when (Unix ns) this instance last pruned each shard of the
	// index of active inboxes (see ActiveAmong).
	pruned [keyspace.ActiveInboxShards]atomic.Int64
	// activeUntil holds, by reader, the time (Unix ms) the index of active
	// inboxes last gave them on this instance (see ActiveAmong); nil when
	// the local tiers are off.
	activeUntil *otter.Cache[int64, int64]
	// writes are the rebuilds and the folds left to the background (see
	// rebuildLater and foldLater); rebuilds are those of returning
	// readers' inboxes, waiting or running.
	writes   sync.WaitGroup
	rebuilds rebuildLine
	// folds holds, by reader, what this instance folded into their inbox
	// (see fold.go); nil when the local tiers are off, and then nothing is
	// folded.
	folds *otter.Cache[int64, foldMarks]
	// folding holds the readers whose fold runs; foldSlots has a token for
	// each running fold (Config.FoldsRunning at most).
	folding   sync.Map
	foldSlots chan struct{}
}

// NewInboxes keeps inboxes in d's Redis, rebuilt from MySQL through f (reading
// replicas as rep allows, and posts through c).
func NewInboxes(d *deps.Deps, c *cache.Tiers, rep *replicas.Router, f *pull.Feeds) *Inboxes {
	x := &Inboxes{d: d, pub: livemsg.NewPublisher(d.Redis, d.Keys, d.Log), cache: c, rep: rep, pull: f, foldSlots: make(chan struct{}, d.Cfg.FoldsRunning),
		rebuilds: rebuildLine{queued: map[int64]bool{}, max: MaxWaitingRebuilds}}
	cfg := d.Cfg
	if cfg.LocalCacheMaxEntries > 0 {
		x.activeUntil = otter.Must(&otter.Options[int64, int64]{MaximumSize: activeUntilEntries})
		if cfg.Mode == config.ModeHybrid {
			x.folds = otter.Must(&otter.Options[int64, foldMarks]{MaximumSize: activeUntilEntries})
		}
		floor := max(cfg.LocalCacheMaxBytes/int64(cfg.LocalCacheMaxEntries), 1)
		x.followees = otter.Must(&otter.Options[int64, FolloweeCopy]{
			MaximumWeight: uint64(cfg.LocalCacheMaxBytes),
			Weigher: func(_ int64, c FolloweeCopy) uint32 {
				return uint32(min(max(int64(100+len(c.Version)+8*len(c.IDs)+8*len(c.Hidden)), floor), 1<<31))
			},
		})
	}
	return x
}
