package timeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
)

// The reader's followee set (see keyspace.Keys.Following) answers, on a warm read,
// what MySQL answered before: which celebrities the reader follows, whether
// an entry's Source is still followed, and viewerIsFollowing. It is exact
// while it exists:
//
//   - A rebuild of the inbox, holding the rebuild lock, deletes the old set,
//     reads the followees from MySQL and swaps the new set in with the
//     inbox. A follow change meanwhile finds no set but the lock, waits for
//     the swap and lands on the new set (the inbox changes do the same).
//   - follow, unfollow and removeFollower change the set after their commit,
//     before they return, so the instance that served them reads its own
//     write at once.
//   - Their stream events set it again from MySQL's answer at that time, so
//     a process that died between the commit and its change leaves the set
//     wrong only for the dispatcher's lag.
//   - Every writer checks MySQL after its write and writes again if the
//     relation changed meanwhile (SettleFollowing), so a write that comes
//     late, after a newer change's, does not stay.
//
// A missing set (evicted, or the reader has no inbox) is MySQL's to answer.
//
// The set also names, as "h<id>", everyone whose posts the reader's feed
// hides (store.FeedView): whom they mute or block, and who blocks them.
// A read learns both in the one round trip it makes for the set, and the
// hidden members live and die with the set: built by the same rebuild,
// changed after each commit of a block or mute (SettleHidden, the same
// way as SettleFollowing), dropped with it.

// followingMarker is the member that makes an empty set exist.
const followingMarker = "~"

// hiddenPrefix starts the members that name hidden users.
const hiddenPrefix = "h"

// changeFollowingScript adds ("add") or removes ARGV[2] in the followee
// set KEYS[1] if it exists; KEYS[2] is the reader's rebuild lock. When the
// set changes, its version KEYS[3] becomes ARGV[3], with the set's TTL.
// Answers like an inbox change: inboxMissing, inboxDone or rebuilding.
var changeFollowingScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
  return 0
end
local n
if ARGV[1] == 'add' then
  n = redis.call('SADD', KEYS[1], ARGV[2])
else
  n = redis.call('SREM', KEYS[1], ARGV[2])
end
if n == 1 then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('SET', KEYS[3], ARGV[3], 'PX', ttl)
  else
    redis.call('SET', KEYS[3], ARGV[3])
  end
end
return 1`)

// readerStateScript is what a read learns of the reader's own keys in one
// round trip: {inbox exists, whole with its floor marker (0 or 1), followee set state, its members
// joined by commas when read whole, the set's version or ""}. KEYS[1]
// inbox, KEYS[2] followee set, KEYS[3] its version; ARGV[1] is
// FollowingReadMax, ARGV[2] the version of this instance's copy of the set
// ("" for none): when it is the set's, the members are not sent. One
// string, not a reply per member, so that a few hundred ids cost one
// allocation to read.
var readerStateScript = redis.NewScript(`
local inbox = redis.call('ZCOUNT', KEYS[1], -1, -1)
local n = redis.call('SCARD', KEYS[2])
if n == 0 then return {inbox, 0, '', ''} end
if n - 1 > tonumber(ARGV[1]) then return {inbox, 2, '', ''} end
local v = redis.call('GET', KEYS[3])
if not v then v = '' end
if v ~= '' and v == ARGV[2] then return {inbox, 3, '', v} end
return {inbox, 1, table.concat(redis.call('SMEMBERS', KEYS[2]), ','), v}`)

// followingAmongScript answers SMISMEMBER of ARGV over the followee set
// KEYS[1], or nil when the set is missing.
var followingAmongScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('SMISMEMBER', KEYS[1], unpack(ARGV))`)

// installFollowingScript swaps the followee set written to KEYS[1] in as
// KEYS[2], if the caller still holds the rebuild lock KEYS[3] (token
// ARGV[1]) and no set came meanwhile; it takes the inbox's (KEYS[4]) TTL,
// else ARGV[2] ms, and frees the lock. The set's version KEYS[5] becomes
// ARGV[3], with the same TTL.
var installFollowingScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('DEL', KEYS[3])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
local ttl = redis.call('PTTL', KEYS[4])
if ttl <= 0 then ttl = ARGV[2] end
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('SET', KEYS[5], ARGV[3], 'PX', ttl)
return 1`)

// followingMembers are the members of a followee set of ids, with the
// hidden users.
func followingMembers(ids, hidden []int64) []any {
	out := make([]any, 0, len(ids)+len(hidden)+1)
	out = append(out, followingMarker)
	for _, id := range ids {
		out = append(out, strconv.FormatInt(id, 10))
	}
	for _, id := range hidden {
		out = append(out, hiddenPrefix+strconv.FormatInt(id, 10))
	}
	return out
}

// parseFollowing reads the comma-joined members of a followee set into
// sorted ids of followees and of hidden users, skipping the marker.
func parseFollowing(joined string) (ids, hidden []int64) {
	var n int64
	digits, hides := false, false
	for i := 0; i <= len(joined); i++ {
		if i < len(joined) && joined[i] >= '0' && joined[i] <= '9' {
			n, digits = n*10+int64(joined[i]-'0'), true
			continue
		}
		if i < len(joined) && joined[i] == hiddenPrefix[0] {
			hides = true
			continue
		}
		if i == len(joined) || joined[i] == ',' {
			switch {
			case digits && hides:
				hidden = append(hidden, n)
			case digits:
				ids = append(ids, n)
			}
			n, digits, hides = 0, false, false
		}
	}
	slices.Sort(ids)
	slices.Sort(hidden)
	return ids, hidden
}

// setFollowing records in follower's followee set, if it exists, whether
// they follow followee, waiting out a running rebuild of their inbox.
func (ib *Inboxes) setFollowing(ctx context.Context, follower, followee int64, follows bool) error {
	return ib.setMember(ctx, follower, strconv.FormatInt(followee, 10), follows)
}

// setMember adds (in) or removes member in reader's followee set, if it
// exists, waiting out a running rebuild of their inbox.
func (ib *Inboxes) setMember(ctx context.Context, reader int64, member string, in bool) error {
	op := "remove"
	if in {
		op = "add"
	}
	keys := []string{ib.d.Keys.Following(reader), ib.d.Keys.RebuildLock(reader), ib.d.Keys.FollowingVersion(reader)}
	version := redisx.NewToken()
	for {
		n, err := changeFollowingScript.Run(ctx, ib.d.Redis, keys, op, member, version).Int()
		if err != nil || n != rebuilding {
			return err
		}
		if err := redisx.WaitForUnlock(ctx, ib.d.Redis, keys[1], redisx.RebuildLockTTL, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// followingSettleRounds bounds the writes of one SettleFollowing: more
// would mean the relation flips between every write and check, and the
// flipping changes' own writers settle it then.
const followingSettleRounds = 3

// SettleFollowing writes follows into follower's followee set, then asks
// MySQL again and writes its answer until the two agree. A writer may
// stall between learning the relation (its commit, or its read of MySQL)
// and writing it, and write after a newer change's writer: whoever writes
// last has checked MySQL after its own write, so a late write is undone by
// its own writer. The check costs each follow change one statement. A
// mutation settles the set after its commit, with what it committed; the
// change's stream event settles it again with MySQL's answer, which
// repairs a change whose process died before its own write.
func (ib *Inboxes) SettleFollowing(ctx context.Context, follower, followee int64, follows bool) error {
	for range followingSettleRounds {
		if err := ib.setFollowing(ctx, follower, followee, follows); err != nil {
			return err
		}
		now, err := ib.d.Store.Follows(ctx, follower, followee)
		if err != nil || now == follows {
			return err
		}
		follows = now
	}
	return nil
}

// FollowedAmong returns which of ids reader follows: from their followee
// set when it exists, else (missing, or Redis failed) from MySQL.
func (ib *Inboxes) FollowedAmong(ctx context.Context, reader int64, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 {
		return map[int64]bool{}, nil
	}
	if found, ok := ib.followedInSet(ctx, reader, ids); ok {
		return found, nil
	}
	return ib.d.Store.FollowedAmong(ctx, reader, ids)
}

// followedInSet answers followedAmong from the followee set; ok is false
// when the set is missing or Redis failed.
func (ib *Inboxes) followedInSet(ctx context.Context, reader int64, ids []int64) (map[int64]bool, bool) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	hits, err := followingAmongScript.Run(ctx, ib.d.Redis, []string{ib.d.Keys.Following(reader)}, args...).Int64Slice()
	if err != nil {
		// Missing, or Redis failed: either way MySQL answers, and a Redis
		// outage shows in the metric rather than a warning per question.
		ib.d.Metrics.FollowingFallback.Inc()
		return nil, false
	}
	found := make(map[int64]bool, len(ids))
	for i, id := range ids {
		if i < len(hits) && hits[i] == 1 {
			found[id] = true
		}
	}
	return found, true
}

// restoreFollowing loads reader's followees and hidden users from MySQL
// when their inbox exists but their followee set does not (it was
// evicted), and puts the set back under the rebuild lock, so that a follow
// committed meanwhile waits for it as it would for a rebuild. When someone
// holds the lock, the ids only serve this read.
func (ib *Inboxes) restoreFollowing(ctx context.Context, reader int64) (ids, hidden []int64, err error) {
	ib.d.Metrics.FollowingFallback.Inc()
	lock := ib.d.Keys.RebuildLock(reader)
	token := redisx.NewToken()
	got, err := ib.d.Redis.SetNX(ctx, lock, token, redisx.RebuildLockTTL).Result()
	if err != nil {
		return nil, nil, redisx.Fail(err)
	}
	ids, hidden, err = ib.d.Store.FeedView(ctx, reader)
	slices.Sort(ids)
	slices.Sort(hidden)
	if err != nil || !got {
		if got {
			ib.d.Redis.Del(context.WithoutCancel(ctx), lock)
		}
		return ids, hidden, err
	}
	tmp := ib.d.Keys.FollowingTemp(reader)
	pipe := ib.d.Redis.TxPipeline()
	pipe.Del(ctx, tmp)
	pipe.SAdd(ctx, tmp, followingMembers(ids, hidden)...)
	if _, err := pipe.Exec(ctx); err != nil {
		ib.d.Redis.Del(context.WithoutCancel(ctx), lock)
		return ids, hidden, nil // the read has its answer; the set waits for the next one
	}
	keys := []string{tmp, ib.d.Keys.Following(reader), lock, ib.d.Keys.Inbox(reader), ib.d.Keys.FollowingVersion(reader)}
	if err := installFollowingScript.Run(ctx, ib.d.Redis, keys, token, ib.d.Cfg.InboxTTL.Milliseconds(), redisx.NewToken()).Err(); err != nil {
		ib.d.Redis.Del(context.WithoutCancel(ctx), lock)
	}
	return ids, hidden, nil
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
func (ib *Inboxes) FolloweeCopy(reader int64) FolloweeCopy {
	if ib.followees == nil {
		return FolloweeCopy{}
	}
	c, _ := ib.followees.GetIfPresent(reader)
	return c
}

// keepFolloweeCopy stores c as reader's copy, unless it has no version
// (the version key was missing: nothing could confirm the copy).
func (ib *Inboxes) keepFolloweeCopy(reader int64, c FolloweeCopy) {
	if ib.followees == nil || c.Version == "" {
		return
	}
	ib.followees.Set(reader, c)
}

// The state of a reader's followee set, as readerStateScript tells it.
const (
	FollowingMissing   = 0
	FollowingWhole     = 1 // read whole: the ids came back
	FollowingLarge     = 2 // more members than FollowingReadMax: ask per page
	FollowingUnchanged = 3 // the caller's copy is at the set's version: no ids sent
)

// FollowingState is what readerStateScript said of the followee set.
type FollowingState struct {
	State   int
	IDs     []int64 // sorted; when read whole
	Hidden  []int64 // the hidden users, sorted; when read whole
	Version string  // the set's version, when read whole or unchanged; "" for none
}

// stateRead is a read of a reader's state queued on a pipeline (see
// queueState), with the copy of the followee set it was sent with: only
// that copy's version may be confirmed, whatever another read stores
// meanwhile.
type stateRead struct {
	Held    FolloweeCopy
	keys    []string
	cmd     *redis.Cmd
	indexed *redis.FloatCmd // the reader's time in the index of active inboxes
}

// queueState queues, on pipe, the read of reader's state: whether their
// inbox exists, and their followee set (whole unless it is large, or only
// its version when this instance's copy is at it).
func (ib *Inboxes) queueState(ctx context.Context, pipe redis.Pipeliner, reader int64) *stateRead {
	k := ib.d.Keys
	s := &stateRead{Held: ib.FolloweeCopy(reader), keys: []string{k.Inbox(reader), k.Following(reader), k.FollowingVersion(reader)}}
	s.cmd = readerStateScript.EvalSha(ctx, pipe, s.keys, ib.d.Cfg.FollowingReadMax, s.Held.Version)
	s.indexed = ib.queueIndexed(ctx, pipe, reader)
	return s
}

// finishState is the state a queued read answered (read again alone when
// Redis did not know the script).
//
// An inbox whose reader the index of active inboxes lost is reported
// missing (see indexed): the fan-out skips it.
func (ib *Inboxes) finishState(ctx context.Context, s *stateRead) (inbox bool, set FollowingState, err error) {
	if redisx.IsNoScript(s.cmd.Err()) {
		inbox, set, err = ib.rereadState(ctx, s) // Redis restarted
	} else {
		inbox, set, err = parseState(s.cmd)
	}
	if inbox && !indexed(s.indexed) {
		ib.d.Metrics.InboxesUnindexed.Inc()
		inbox = false
	}
	return inbox, set, err
}

// rereadState reads s's state again, alone (after a rebuild).
func (ib *Inboxes) rereadState(ctx context.Context, s *stateRead) (inbox bool, set FollowingState, err error) {
	return parseState(readerStateScript.Run(ctx, ib.d.Redis, s.keys, ib.d.Cfg.FollowingReadMax, s.Held.Version))
}

// parseState decodes readerStateScript's answer: whether the inbox exists,
// and the followee set.
func parseState(cmd *redis.Cmd) (bool, FollowingState, error) {
	vals, err := cmd.Slice()
	if err != nil {
		return false, FollowingState{}, err
	}
	if len(vals) != 4 {
		return false, FollowingState{}, fmt.Errorf("reader state: %v", vals)
	}
	inbox, _ := vals[0].(int64)
	state, _ := vals[1].(int64)
	joined, _ := vals[2].(string)
	version, _ := vals[3].(string)
	set := FollowingState{State: int(state), Version: version}
	if set.State == FollowingWhole {
		set.IDs, set.Hidden = parseFollowing(joined)
	}
	return inbox == 1, set, nil
}
