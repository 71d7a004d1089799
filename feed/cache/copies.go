package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/models"
	"feedservice/store"
)

// The Redis copies of posts and users (keyspace.Keys.CachedPost, CachedUserInfo,
// CachedUserCounts): the second tier of the cache tiers (docs/architecture.md), between
// the in-process tier and MySQL. A batch of ids is one pipeline of GETs
// (not an MGET: on Redis Cluster the keys lie in different slots, and a
// pipeline costs one round trip per node); the misses are loaded from MySQL
// in one query and written back in one pipeline.
//
// Every copy carries its row's version (models.User.Version), and every
// write goes through setIfNewerScript, so of two writes that race (a fill
// that read the row before a mutation, and the mutation's refresh after
// its commit) the newer stays, whatever their order. A mutation refreshes
// the rows it changed after its commit, before it answers (refreshCached),
// and the dispatcher's handler of its outbox event refreshes them again,
// which repairs what a process that died in between left behind.
//
// Redis failing never fails a read: the lookup falls back to MySQL, counts
// the error and warns at most once per Config.RateLimitWarnInterval.

// setIfNewerScript writes ARGV[1] (whose leading uvarint is its version) to
// KEYS[1] with TTL ARGV[3] milliseconds, unless the key holds a version at
// least ARGV[2]. It answers 1 when it wrote.
var setIfNewerScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local v, mul = 0, 1
  for i = 1, #cur do
    local b = string.byte(cur, i)
    if b < 128 then
      v = v + b * mul
      break
    end
    v = v + (b - 128) * mul
    mul = mul * 128
  end
  if v >= tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`)

// Write is one copy to write through setIfNewerScript.
type Write struct {
	key     string
	value   []byte
	version int64
	ttl     time.Duration
}

// PostsBelowLocal loads posts from their Redis copies, and the misses from
// MySQL, writing those back. Unknown ids are left out.
func (c *Tiers) PostsBelowLocal(ctx context.Context, ids []int64) (map[int64]*models.Post, error) {
	return belowLocal(ctx, c, c.postCopies, ids)
}

// UsersBelowLocal loads users from their Redis copies (info and counts),
// and the users missing either from MySQL, writing both back. Unknown ids
// are left out.
func (c *Tiers) UsersBelowLocal(ctx context.Context, ids []int64) (map[int64]*models.User, error) {
	return belowLocal(ctx, c, c.userCopies, ids)
}

// copies is how one kind of value is copied in Redis.
type copies[V any] struct {
	kind string // the metrics' label: metrics.KindPost or KindUser
	// queue queues, on pipe, the reads of id's copies; the function it
	// returns decodes them once pipe ran (redis.Nil: a copy is missing).
	queue func(ctx context.Context, pipe redis.Pipeliner, id int64) func() (V, error)
	// load reads the values of ids from MySQL.
	load func(ctx context.Context, ids []int64) ([]V, error)
	// id is a value's id, and writes its copies.
	id     func(V) int64
	writes func(V) []Write
}

// belowLocal loads ids of k's kind from their Redis copies in one
// pipeline, and the misses from MySQL in one batch, writing those back.
func belowLocal[V any](ctx context.Context, c *Tiers, k copies[V], ids []int64) (map[int64]V, error) {
	ids = sortedSet(ids)
	out := make(map[int64]V, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pipe := c.d.Redis.Pipeline()
	reads := make([]func() (V, error), len(ids))
	for i, id := range ids {
		reads[i] = k.queue(ctx, pipe, id)
	}
	pipe.Exec(ctx) // each command's error is read below
	var missing []int64
	var failure error
	for i, read := range reads {
		v, err := read()
		if err != nil {
			if !errors.Is(err, redis.Nil) {
				failure = err
			}
			missing = append(missing, ids[i])
			continue
		}
		out[ids[i]] = v
	}
	c.countLookups(k.kind, len(out), len(missing), failure)
	if len(missing) == 0 {
		return out, nil
	}
	start := time.Now()
	loaded, err := k.load(ctx, missing)
	if err != nil {
		return nil, err
	}
	writes := make([]Write, 0, 2*len(loaded))
	for _, v := range loaded {
		out[k.id(v)] = v
		writes = append(writes, k.writes(v)...)
	}
	if failure == nil {
		// After a failed read Redis is likely away: writing back would
		// only add its timeout to the read.
		c.WriteCached(ctx, writes)
	}
	c.d.Metrics.CacheFillSeconds.WithLabelValues(metrics.TierRedis, k.kind).Observe(time.Since(start).Seconds())
	return out, nil
}

// postCopiesOf are the Redis copies of posts: one key each.
func (c *Tiers) postCopiesOf() copies[*models.Post] {
	return copies[*models.Post]{
		kind: metrics.KindPost,
		queue: func(ctx context.Context, pipe redis.Pipeliner, id int64) func() (*models.Post, error) {
			cmd := pipe.Get(ctx, c.d.Keys.CachedPost(id))
			return func() (*models.Post, error) {
				b, err := cmd.Bytes()
				if err != nil {
					return nil, err
				}
				return decodePost(id, b)
			}
		},
		load:   c.fillPosts,
		id:     func(p *models.Post) int64 { return p.ID },
		writes: func(p *models.Post) []Write { return []Write{c.PostWrite(p)} },
	}
}

// userCopiesOf are the Redis copies of users: two keys each, info and counts.
func (c *Tiers) userCopiesOf() copies[*models.User] {
	return copies[*models.User]{
		kind: metrics.KindUser,
		queue: func(ctx context.Context, pipe redis.Pipeliner, id int64) func() (*models.User, error) {
			info, counts := pipe.Get(ctx, c.d.Keys.CachedUserInfo(id)), pipe.Get(ctx, c.d.Keys.CachedUserCounts(id))
			return func() (*models.User, error) { return DecodeUser(id, info, counts) }
		},
		load: func(ctx context.Context, ids []int64) ([]*models.User, error) {
			users, err := c.d.Store.UsersByIDs(c.rep.FillContext(ctx, ids...), ids)
			for _, u := range users {
				// A miss returns what a hit returns: the copies keep neither.
				u.PasswordHash, u.LastActiveAt = "", time.Time{}
			}
			return users, err
		},
		id:     func(u *models.User) int64 { return u.ID },
		writes: c.UserWrites,
	}
}

// loadPosts loads posts from MySQL with the lists of live reposts their
// copies keep: one statement more, for the originals that have reposts
// and not more than RepostListMax of them. The post's row is read first:
// its version moves with every repost and deletion of a repost of it, in
// the same transaction, so the list read after it is at least as new as
// the version it is written with (setIfNewerScript keeps the newest); a
// list newer than the row is not kept.
// fillPosts reads the rows of posts ids for a fill, from a replica where
// the fill may lag, and reads again from the primary the posts the replica
// did not have: a post written within the replica's lag is found by
// everyone, its author included, while its cached copy is missing (lost or
// expired before the replica caught up).
func (c *Tiers) fillPosts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	lagging := c.rep.FillContext(ctx)
	posts, err := c.loadPosts(lagging, ids)
	if err != nil || lagging == ctx || len(posts) == len(ids) {
		return posts, err
	}
	found := make(map[int64]bool, len(posts))
	for _, p := range posts {
		found[p.ID] = true
	}
	missing := slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return found[id] })
	more, err := c.loadPosts(ctx, missing)
	if err != nil {
		return nil, err
	}
	return append(posts, more...), nil
}

func (c *Tiers) loadPosts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	posts, err := c.d.Store.PostsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var listed []int64 // sorted, as ids are
	for _, p := range posts {
		switch {
		case p.RepostOfID != nil:
		case p.RepostCount == 0:
			p.RepostsKept = true
		case p.RepostCount <= c.d.Cfg.RepostListMax:
			listed = append(listed, p.ID)
		}
	}
	if len(listed) == 0 {
		return posts, nil
	}
	slices.Sort(listed)
	reposts, err := c.d.Store.LiveReposts(ctx, listed)
	if err != nil {
		return nil, err
	}
	for _, p := range posts {
		// A list that changed since the row was read is not kept: the
		// change's refresh comes next. So a kept list is as long as the
		// copy's repost count, which decodePost checks.
		if _, ok := slices.BinarySearch(listed, p.ID); ok && len(reposts[p.ID]) == p.RepostCount {
			p.Reposts, p.RepostsKept = reposts[p.ID], true
		}
	}
	return posts, nil
}

// countLookups counts a batch's lookups; with a failure, every miss counts
// as an error (a failed read cannot tell the two apart).
func (c *Tiers) countLookups(kind string, hits, misses int, failure error) {
	c.d.Metrics.CacheLookups.WithLabelValues(metrics.TierRedis, kind, "hit").Add(float64(hits))
	result := "miss"
	if failure != nil && !errors.Is(failure, context.Canceled) { // a caller that gave up is no Redis failure
		result = "error"
		c.d.WarnRedis("redis cache read failed; reading MySQL", failure)
	}
	c.d.Metrics.CacheLookups.WithLabelValues(metrics.TierRedis, kind, result).Add(float64(misses))
}

// refreshCached re-reads the given users and posts from MySQL and writes
// their copies, keeping any newer one. Mutations call it after their
// commit, before they answer, so that the instance that served one reads
// its own write at once; the dispatcher's handlers call it again for each
// event. A failure is returned to the handlers (the event is retried) and
// only logged by mutations (the event repairs it).
func (c *Tiers) refreshCached(ctx context.Context, users, posts []int64) error {
	ctx = store.Primary(ctx) // the copy must hold the commit: no replica
	var writes []Write
	if len(users) > 0 {
		loaded, err := c.d.Store.UsersByIDs(ctx, sortedSet(users))
		if err != nil {
			return err
		}
		for _, u := range loaded {
			writes = append(writes, c.UserWrites(u)...)
		}
	}
	if len(posts) > 0 {
		loaded, err := c.loadPosts(ctx, sortedSet(posts))
		if err != nil {
			return err
		}
		for _, p := range loaded {
			writes = append(writes, c.PostWrite(p))
		}
	}
	return c.WriteCached(ctx, writes)
}

// RefreshCopies refreshes the Redis copies of users and posts from MySQL,
// then drops the local copies of them here and, by message, on every
// instance: a local fill from then on reads Redis's new copy. The stream's
// handlers run it for every event, so that the copies of a change whose
// own instance died before refreshing them are right within the
// dispatcher's lag (and an instance that missed the message, within the
// local tier's bound).
func (c *Tiers) RefreshCopies(ctx context.Context, users, posts []int64) error {
	err := c.refreshCached(ctx, users, posts)
	c.DropLocal(ctx, users, posts)
	return err
}

// RefreshAfterCommit is refreshCopies for a mutation that has committed:
// a failure is only logged, since the outbox event will refresh again. It
// first marks the users for read-your-writes (package replicas).
func (c *Tiers) RefreshAfterCommit(ctx context.Context, users, posts []int64) {
	c.rep.MarkWrote(ctx, users)
	if err := c.RefreshCopies(ctx, users, posts); err != nil {
		c.d.WarnRedis("refresh cached copies after a commit; the outbox event will", err)
	}
}

// WriteCached writes copies through setIfNewerScript in one pipeline. A
// failure is logged (throttled) and returned; the copies are only copies.
func (c *Tiers) WriteCached(ctx context.Context, writes []Write) error {
	if len(writes) == 0 {
		return nil
	}
	args := func(w Write) []any { return []any{w.value, w.version, w.ttl.Milliseconds()} }
	pipe := c.d.Redis.Pipeline()
	cmds := make([]*redis.Cmd, len(writes))
	for i, w := range writes {
		cmds[i] = setIfNewerScript.EvalSha(ctx, pipe, []string{w.key}, args(w)...)
	}
	pipe.Exec(ctx) // each command's error is read below
	var failure error
	for i, cmd := range cmds {
		if err := redisx.Queued(ctx, c.d.Redis, setIfNewerScript, cmd, []string{writes[i].key}, args(writes[i])...).Err(); err != nil {
			failure = err
		}
	}
	if failure != nil {
		c.d.WarnRedis("redis cache write failed", failure)
		return fmt.Errorf("write cached copies: %w", failure)
	}
	return nil
}

func (c *Tiers) PostWrite(p *models.Post) Write {
	return Write{key: c.d.Keys.CachedPost(p.ID), value: encodePost(p), version: p.Version, ttl: c.d.Cfg.PostCacheTTL}
}

func (c *Tiers) UserWrites(u *models.User) []Write {
	return []Write{
		{key: c.d.Keys.CachedUserInfo(u.ID), value: encodeUserInfo(u), version: u.Version, ttl: c.d.Cfg.UserCacheTTL},
		{key: c.d.Keys.CachedUserCounts(u.ID), value: encodeUserCounts(u), version: u.Version, ttl: c.d.Cfg.UserCacheTTL},
	}
}

// sortedSet is ids sorted, without repeats, in a slice of its own (the
// caller's is left alone).
func sortedSet(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
