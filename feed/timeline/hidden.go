package timeline

import (
	"context"
	"feedservice/feed/pull"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
)

// A block or mute changes which of the entries an inbox holds count, and
// where: an entry a muted followee brought first moves to its next
// arrival, an entry by a muted author leaves, and an unmute brings them
// back in their places, below the inbox's floor too. Rather than rework
// the inbox entry by entry (and for an unmute, find every repost of the
// unmuted user's posts by any followee), the change drops the reader's
// inbox and followee set (Reset): the next read rebuilds both from MySQL
// through the reader's new view. Blocks and mutes are rare beside reads;
// a rebuild is one cold read.

// resetScript drops the inbox KEYS[1], its sources KEYS[2], the followee
// set KEYS[4] and its version KEYS[5], unless a rebuild holds the lock
// KEYS[3] (then it answers rebuilding: the rebuild may have read MySQL
// before the caller's commit).
var resetScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5])
return 1`)

// Reset drops reader's inbox and followee set after a commit that changed
// what their feed hides, waiting out a running rebuild (which might have
// read MySQL before that commit) and then dropping what it built. A rebuild
// that starts afterwards reads the commit.
func (ib *Inboxes) Reset(ctx context.Context, reader int64) error {
	k := ib.d.Keys
	keys := []string{k.Inbox(reader), k.InboxSources(reader), k.RebuildLock(reader), k.Following(reader), k.FollowingVersion(reader)}
	for {
		n, err := resetScript.Run(ctx, ib.d.Redis, keys).Int()
		if err != nil || n != rebuilding {
			return err
		}
		if err := redisx.WaitForUnlock(ctx, ib.d.Redis, keys[2], redisx.RebuildLockTTL, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// sightScript answers, for the ids ARGV, whether the followee set KEYS[1]
// holds each as a followee and then each as a hidden user: SMISMEMBER of
// the ids followed by the hidden members; nil when the set is missing.
var sightScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local members = {}
for i = 1, #ARGV do
  members[i] = ARGV[i]
  members[#ARGV + i] = 'h' .. ARGV[i]
end
return redis.call('SMISMEMBER', KEYS[1], unpack(members))`)

// Sight answers, for each of ids, whether reader's feed counts through
// them (followed and not hidden) and whether it hides their posts: from
// the followee set in one round trip when it exists, else from MySQL.
func (ib *Inboxes) Sight(ctx context.Context, reader int64, ids []int64) (counted, hidden map[int64]bool, err error) {
	counted, hidden = make(map[int64]bool, len(ids)), map[int64]bool{}
	if len(ids) == 0 {
		return counted, hidden, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = strconv.FormatInt(id, 10)
	}
	hits, err := sightScript.Run(ctx, ib.d.Redis, []string{ib.d.Keys.Following(reader)}, args...).Int64Slice()
	if err == nil && len(hits) == 2*len(ids) {
		for i, id := range ids {
			if hits[len(ids)+i] == 1 {
				hidden[id] = true
			} else if hits[i] == 1 {
				counted[id] = true
			}
		}
		return counted, hidden, nil
	}
	ib.d.Metrics.FollowingFallback.Inc()
	followees, hides, err := ib.d.Store.FeedView(ctx, reader)
	if err != nil {
		return nil, nil, err
	}
	view := pull.NewView(followees, hides)
	for _, id := range ids {
		switch {
		case view.Hides(id):
			hidden[id] = true
		case view.Counts(id):
			counted[id] = true
		}
	}
	return counted, hidden, nil
}

// hiddenStateScript answers {inbox exists, followee set exists, the set
// holds member ARGV[1]} for the inbox KEYS[1] and the set KEYS[2].
var hiddenStateScript = redis.NewScript(`
return {redis.call('EXISTS', KEYS[1]), redis.call('EXISTS', KEYS[2]), redis.call('SISMEMBER', KEYS[2], ARGV[1])}`)

// ResetIfStale resets reader's inbox (see Reset) unless their followee set
// already says what MySQL's primary says of whether their feed hides
// other's posts, or they have neither inbox nor set. The stream event of a
// block or mute runs it: the mutation reset the inbox after its commit,
// and a set built since then agrees, so the inbox is reset again only
// when that step was lost (the process died after the commit). It reports
// whether it reset.
//
// bounded is for the other side of a block: the reset is then
// ResetOther's, at most one per BlockResetInterval.
func (ib *Inboxes) ResetIfStale(ctx context.Context, reader, other int64, bounded bool) (bool, error) {
	k := ib.d.Keys
	vals, err := hiddenStateScript.Run(ctx, ib.d.Redis, []string{k.Inbox(reader), k.Following(reader)}, hiddenPrefix+strconv.FormatInt(other, 10)).Int64Slice()
	if err != nil {
		return false, err
	}
	if len(vals) != 3 {
		return false, fmt.Errorf("hidden state: %v", vals)
	}
	inbox, set, member := vals[0] == 1, vals[1] == 1, vals[2] == 1
	if !inbox && !set {
		return false, nil
	}
	if set {
		hides, err := ib.d.Store.Hides(ctx, reader, other)
		if err != nil || hides == member {
			return false, err
		}
	}
	if bounded {
		return ib.ResetOther(ctx, reader, other)
	}
	return true, ib.Reset(ctx, reader)
}
