// Package jumps serves page jumps: the page at an offset of a followers or following list
// (a jump straight to page N), at a cost that does not grow with the
// offset. A list of at least Config.JumpCacheFollowers entries is read
// from its ordered copy in Redis (keyspace.Keys.RelationList), whose rank ranges
// cost O(log n + page); a shorter one from MySQL's offset index
// (store.RelationsAt). The copy is built on the first jump, under a lock,
// kept by every follow and unfollow (after the commit, and again by the
// stream event), expires when no one jumps for Config.JumpCacheTTL, and is
// dropped when its list falls under the threshold.
//
// A jump reads the list as it is at that moment: a follow or unfollow
// between two jumps moves every later position by one, as in a list that
// is numbered afresh on each look (a page may then repeat the last entry
// of the page before, or skip one). The cursors of the answer step on from
// there by follow id, unmoved by such changes.
package jumps

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// Lists serves the page jumps of followers and following lists.
type Lists struct{ d *deps.Deps }

// New serves jumps over d's store and Redis.
func New(d *deps.Deps) *Lists { return &Lists{d: d} }

// relationListBatch is the most members one ZADD of a build writes.
const relationListBatch = 10_000

// relationListLockTTL bounds a stall of a build of a list's copy (each
// batch renews it); a jump that finds the lock waits at most this long.
const relationListLockTTL = 60 * time.Second

// FollowersAt is the page of user's followers at args.Offset.
func (l *Lists) FollowersAt(ctx context.Context, user *models.User, args paging.JumpArgs) (*models.UserConnection, error) {
	return l.jump(ctx, store.FollowersList, paging.CursorFollowers, user.ID, user.FollowerCount, args)
}

// FollowingAt is the page of whom user follows at args.Offset.
func (l *Lists) FollowingAt(ctx context.Context, user *models.User, args paging.JumpArgs) (*models.UserConnection, error) {
	return l.jump(ctx, store.FollowingList, paging.CursorFollowing, user.ID, user.FollowingCount, args)
}

func (l *Lists) jump(ctx context.Context, list store.RelationList, kind paging.CursorKind, userID int64, total int, args paging.JumpArgs) (*models.UserConnection, error) {
	size, err := args.Size()
	if err != nil {
		return nil, err
	}
	var rows []models.Relation
	var length int
	if total >= l.d.Cfg.JumpCacheFollowers {
		rows, length, err = l.cachedRelationsAt(ctx, list, userID, args.Offset, size)
	} else {
		l.dropRelationList(ctx, list, userID)
		rows, length, err = l.d.Store.RelationsAt(ctx, list, userID, args.Offset, size)
	}
	if err != nil {
		return nil, err
	}
	info := &models.PageInfo{HasPreviousPage: args.Offset > 0, HasNextPage: args.Offset+len(rows) < length}
	conn := &models.UserConnection{PageInfo: info, TotalCount: total, Edges: make([]*models.UserEdge, len(rows))}
	for i, r := range rows {
		conn.Edges[i] = &models.UserEdge{Cursor: paging.EncodeCursor(kind, r.ID), UserID: r.UserID, FollowedAt: r.FollowedAt}
	}
	if len(rows) > 0 {
		info.StartCursor, info.EndCursor = &conn.Edges[0].Cursor, &conn.Edges[len(rows)-1].Cursor
	}
	return conn, nil
}

// readRelationListScript answers {length, member, score, member, score,
// ...} of the ranks ARGV[1] to ARGV[2] of the list's copy KEYS[1], newest
// first, and refreshes its TTL to ARGV[3] ms; nil when the copy is missing.
var readRelationListScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local out = {redis.call('ZCARD', KEYS[1])}
if tonumber(ARGV[2]) < tonumber(ARGV[1]) then return out end
local page = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
for i = 1, #page do out[#out + 1] = page[i] end
return out`)

// cachedRelationsAt reads a jump from the list's copy in Redis, building
// the copy first when it is missing. The follow times come from MySQL by
// primary key, one statement per page.
func (l *Lists) cachedRelationsAt(ctx context.Context, list store.RelationList, userID int64, offset, size int) ([]models.Relation, int, error) {
	key := l.d.Keys.RelationList(list, userID)
	for attempt := 0; ; attempt++ {
		reply, err := readRelationListScript.Run(ctx, l.d.Redis, []string{key}, offset, offset+size-1, l.d.Cfg.JumpCacheTTL.Milliseconds()).Slice()
		if err == redis.Nil && attempt < 2 {
			// Missing: build it (or wait for another instance's build).
			if err := l.buildRelationList(ctx, list, userID); err != nil {
				return nil, 0, err
			}
			continue
		}
		if err == redis.Nil {
			return nil, 0, redisx.Fail(errors.New("the copy of a relation list is still missing after two builds"))
		}
		if err != nil {
			return nil, 0, redisx.Fail(err)
		}
		length, _ := reply[0].(int64)
		var ids []int64
		for i := 1; i+1 < len(reply); i += 2 {
			other, _ := strconv.ParseInt(reply[i].(string), 10, 64)
			ids = append(ids, other)
		}
		rows, err := l.d.Store.RelationsOf(ctx, list, userID, ids)
		return rows, int(length), err
	}
}

// buildRelationList writes the list's copy from MySQL, oldest first in
// batches, under the list's lock; follow changes meanwhile are queued by
// changeRelationListScript and settled once the copy is in place. When
// another instance builds, it waits for that build instead.
func (l *Lists) buildRelationList(ctx context.Context, list store.RelationList, userID int64) error {
	lock := l.d.Keys.RelationListLock(list, userID)
	token := redisx.NewToken()
	got, err := l.d.Redis.SetNX(ctx, lock, token, relationListLockTTL).Result()
	if err != nil {
		return redisx.Fail(err)
	}
	if !got {
		return redisx.WaitForUnlock(ctx, l.d.Redis, lock, relationListLockTTL, 10*time.Millisecond)
	}
	l.d.Metrics.RelationListBuilds.Inc()
	release := func() { l.d.Redis.Del(context.WithoutCancel(ctx), lock) }
	tmp := l.d.Keys.RelationListTemp(list, userID)
	if err := l.d.Redis.Del(ctx, tmp).Err(); err != nil {
		release()
		return redisx.Fail(err)
	}
	var after int64
	for {
		rows, err := l.d.Store.RelationsAfter(ctx, list, userID, after, relationListBatch)
		if err != nil {
			release()
			return err
		}
		if len(rows) > 0 {
			members := make([]redis.Z, len(rows))
			for i, r := range rows {
				members[i] = redis.Z{Score: float64(r.ID), Member: r.UserID}
			}
			if err := l.d.Redis.ZAdd(ctx, tmp, members...).Err(); err != nil {
				release()
				return redisx.Fail(err)
			}
		}
		if len(rows) < relationListBatch {
			break
		}
		after = rows[len(rows)-1].ID
		// The lock bounds a stalled build, not a long one: each batch
		// renews it while it is still ours.
		if err := renewLockScript.Run(ctx, l.d.Redis, []string{lock}, token, relationListLockTTL.Milliseconds()).Err(); err != nil {
			release()
			return redisx.Fail(err)
		}
	}
	keys := []string{tmp, l.d.Keys.RelationList(list, userID), lock, l.d.Keys.RelationListPending(list, userID)}
	pending, err := installRelationListScript.Run(ctx, l.d.Redis, keys, token, l.d.Cfg.JumpCacheTTL.Milliseconds()).StringSlice()
	if err != nil {
		release()
		return redisx.Fail(err)
	}
	// The copy no longer needs MySQL's offset index, which would cost each
	// follow of a big list a statement for nothing.
	if err := l.d.Store.DropMarks(ctx, list, userID); err != nil {
		l.d.Log.WarnContext(ctx, "drop offset index of a cached list", "user", userID, "err", err)
	}
	for _, p := range pending {
		other, _ := strconv.ParseInt(p, 10, 64)
		if err := l.settleRelationList(ctx, list, userID, other); err != nil {
			return err
		}
	}
	return nil
}

// renewLockScript extends the lock KEYS[1] to ARGV[2] ms if it still
// holds the token ARGV[1].
var renewLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// installRelationListScript swaps the built copy KEYS[1] in as KEYS[2] with
// a TTL of ARGV[2] ms if the caller still holds the lock KEYS[3] (token
// ARGV[1]), frees the lock and answers the members queued meanwhile in
// KEYS[4], which it empties.
var installRelationListScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[2])
else
  redis.call('DEL', KEYS[2])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local pending = redis.call('LRANGE', KEYS[4], 0, -1)
redis.call('DEL', KEYS[3], KEYS[4])
return pending`)

// An empty list has no key, so its copy is missing for good: a list of at
// least JumpCacheFollowers entries is never empty, and a jump of a list
// that emptied meanwhile builds it again, reading nothing.

// relationListStateScript answers 1 when the copy KEYS[1] exists, 2 when
// it is being built (its lock KEYS[2] is held), else 0.
var relationListStateScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
return 0`)

// changeRelationListScript puts member ARGV[1] at score ARGV[2] into the
// copy KEYS[1], or takes it out when ARGV[2] is 0, if the copy exists; a
// copy left under ARGV[3] members is dropped (MySQL serves the list
// again). While a build runs (lock KEYS[2]), the member is queued in
// KEYS[3] for the builder to settle. Answers like the state script.
var changeRelationListScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[2] == '0' then
    redis.call('ZREM', KEYS[1], ARGV[1])
    if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]) end
  else
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  end
  return 1
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  return 2
end
return 0`)

// relationListSettleRounds bounds the writes of one settleRelationList, as
// followingSettleRounds does for the followee set.
const relationListSettleRounds = 3

// settleRelationList writes MySQL's place of other in userID's list (or
// its absence) into the list's copy, then asks MySQL again and writes
// again until the two agree, so that a writer that stalled and wrote late
// is undone by its own check (see settleFollowing). It asks MySQL only
// when a copy exists or is being built.
func (l *Lists) settleRelationList(ctx context.Context, list store.RelationList, userID, other int64) error {
	keys := []string{l.d.Keys.RelationList(list, userID), l.d.Keys.RelationListLock(list, userID), l.d.Keys.RelationListPending(list, userID)}
	state, err := relationListStateScript.Run(ctx, l.d.Redis, keys[:2]).Int()
	if err != nil || state == 0 {
		return err
	}
	seq, err := l.d.Store.RelationID(ctx, list, userID, other)
	if err != nil {
		return err
	}
	for range relationListSettleRounds {
		err := changeRelationListScript.Run(ctx, l.d.Redis, keys, other, seq, l.d.Cfg.JumpCacheFollowers, relationListLockTTL.Milliseconds()).Err()
		if err != nil {
			return err
		}
		now, err := l.d.Store.RelationID(ctx, list, userID, other)
		if err != nil || now == seq {
			return err
		}
		seq = now
	}
	return nil
}

// SettleRelationLists settles both lists a follow change of follower to
// followee touched: the followee's followers and the follower's following.
// A mutation settles them after its commit, so that the instance that
// served it reads its own write at once; the change's stream event settles
// them again.
func (l *Lists) SettleRelationLists(ctx context.Context, follower, followee int64) error {
	if err := l.settleRelationList(ctx, store.FollowersList, followee, follower); err != nil {
		return err
	}
	return l.settleRelationList(ctx, store.FollowingList, follower, followee)
}

// dropRelationList deletes the copy of a list that fell under the
// threshold. A failure is only logged: the copy then expires.
func (l *Lists) dropRelationList(ctx context.Context, list store.RelationList, userID int64) {
	if err := l.d.Redis.Del(ctx, l.d.Keys.RelationList(list, userID)).Err(); err != nil && ctx.Err() == nil {
		l.d.Log.WarnContext(ctx, "drop a relation list's copy", "user", userID, "err", err)
	}
}
