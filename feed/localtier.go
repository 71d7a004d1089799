package feed

import (
	"github.com/maypok86/otter/v2"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
)

// localTiers are the engine's local tiers.
type localTiers struct {
	// outboxes holds celebrities' outboxes by author (see outboxtier.go).
	outboxes *cache.Tier[*outboxCopy]
	// celebrities is the celebrity set as this instance last read it.
	celebrities *celebrityGuess
	// followees holds, by reader, this instance's copy of their followee
	// set with the version it was read at (see followeeCopy); nil when
	// the local tiers are off.
	followees *otter.Cache[int64, followeeCopy]
}

func newLocalTiers(cfg config.Config, m *metrics.Metrics) localTiers {
	t := localTiers{
		outboxes:    cache.NewTier(metrics.KindOutbox, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, outboxCopyBytes, m),
		celebrities: &celebrityGuess{},
	}
	if cfg.LocalCacheMaxEntries > 0 {
		floor := max(cfg.LocalCacheMaxBytes/int64(cfg.LocalCacheMaxEntries), 1)
		t.followees = otter.Must(&otter.Options[int64, followeeCopy]{
			MaximumWeight: uint64(cfg.LocalCacheMaxBytes),
			Weigher: func(_ int64, c followeeCopy) uint32 {
				return uint32(min(max(int64(100+len(c.version)+8*len(c.ids)), floor), 1<<31))
			},
		})
	}
	return t
}

// followeeCopy is a reader's followee set (sorted ids, the marker left
// out) as read at version, the token its last writer set beside it. A read
// sends the version with its reader-state script and uses the ids only
// when the script answers that the set is still at that version: every
// writer of the set replaces the token in the same script, and a token is
// random, never one an earlier set had, so a copy is never taken for a set
// that changed, was dropped or was rebuilt. It needs no expiry and no
// invalidation message: each read asks Redis, so a change made on another
// instance is seen by the next read. The ids are shared by the reads that
// use the copy, and never changed.
type followeeCopy struct {
	version string
	ids     []int64
}

// followeeCopy returns this instance's copy of reader's followee set; the
// zero copy (version "") when there is none.
func (t localTiers) followeeCopy(reader int64) followeeCopy {
	if t.followees == nil {
		return followeeCopy{}
	}
	c, _ := t.followees.GetIfPresent(reader)
	return c
}

// keepFolloweeCopy stores c as reader's copy, unless it has no version
// (the version key was missing: nothing could confirm the copy).
func (t localTiers) keepFolloweeCopy(reader int64, c followeeCopy) {
	if t.followees == nil || c.version == "" {
		return
	}
	t.followees.Set(reader, c)
}
