package timeline

import (
	"github.com/maypok86/otter/v2"

	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/live"
	"feedservice/feed/replicas"
)

// Inboxes are the readers' inboxes and followee sets.
type Inboxes struct {
	d     *deps.Deps
	pub   *live.Publisher // announces the entries that batches of added sources changed
	cache *cache.Tiers
	rep   *replicas.Router
	pull  *Feeds
	// followees holds, by reader, this instance's copy of their followee
	// set with the version it was read at (see FolloweeCopy); nil when the
	// local tiers are off.
	followees *otter.Cache[int64, FolloweeCopy]
}

// NewInboxes keeps inboxes in d's Redis, rebuilt from MySQL through f (reading
// replicas as rep allows, and posts through c).
func NewInboxes(d *deps.Deps, c *cache.Tiers, rep *replicas.Router, f *Feeds) *Inboxes {
	x := &Inboxes{d: d, pub: live.NewPublisher(d.Redis, d.Keys, d.Log), cache: c, rep: rep, pull: f}
	cfg := d.Cfg
	if cfg.LocalCacheMaxEntries > 0 {
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

// FolloweeCopy is a reader's followee set (sorted ids, the marker left
// out) as read at Version, the token its last writer set beside it. A read
// sends the version with its reader-state script and uses the ids only
// when the script answers that the set is still at that version: every
// writer of the set replaces the token in the same script, and a token is
// random, never one an earlier set had, so a copy is never taken for a set
// that changed, was dropped or was rebuilt. It needs no expiry and no
// invalidation message: each read asks Redis, so a change made on another
// instance is seen by the next read. The ids are shared by the reads that
// use the copy, and never changed.
type FolloweeCopy struct {
	Version string
	IDs     []int64
	Hidden  []int64 // the hidden users named in the set, sorted
}

// FolloweeCopy returns this instance's copy of reader's followee set; the
// zero copy (Version "") when there is none.
func (x *Inboxes) FolloweeCopy(reader int64) FolloweeCopy {
	if x.followees == nil {
		return FolloweeCopy{}
	}
	c, _ := x.followees.GetIfPresent(reader)
	return c
}

// KeepFolloweeCopy stores c as reader's copy, unless it has no version
// (the version key was missing: nothing could confirm the copy).
func (x *Inboxes) KeepFolloweeCopy(reader int64, c FolloweeCopy) {
	if x.followees == nil || c.Version == "" {
		return
	}
	x.followees.Set(reader, c)
}
