// Package lists keeps the copies of the users' lists (each list's name,
// creation time and members) in the cache tiers, so that a warm read of a
// list and of its feed asks MySQL nothing. The tiers are this process's
// (cache.Tier, LocalCacheTTL), then Redis (keyspace's CachedLists,
// UserCacheTTL), then MySQL (store.ListsWithMembers). A copy
// holds all of one user's lists, since a list is found only through its
// owner and an unfollow changes every list of the follower's at once.
//
// Every change of a user's lists (creation, renaming, deletion, a
// member's addition or removal, and the unfollows and blocks that take
// members out) calls Changed after its commit, before it answers: one
// script deletes the Redis copy and moves the lists' version up, then the
// local copies are dropped here and, by the invalidate channel, on every
// instance. A fill writes its copy only if the version is still the one it
// read before it read MySQL, so a fill that raced a change never writes
// the lists as they were. A change whose Changed failed (Redis away) is
// seen elsewhere once the copy's TTL runs out; a list's own mutations
// answer that failure as an error, so that the owner retries.
package lists

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/store"
)

// List is one list as the copies hold it.
type List struct {
	ID        int64     `json:"i"`
	Name      string    `json:"n"`
	CreatedAt time.Time `json:"c"`
	// Members are the list's members, most recently added first.
	Members []int64 `json:"m,omitempty"`
}

// Owned is all of one user's lists, by id. Shared by the reads that use
// it, and never changed.
type Owned struct {
	Lists []List `json:"l"`
}

// Find is the list id among o's; nil when there is none.
func (o *Owned) Find(id int64) *List {
	if o == nil {
		return nil
	}
	for i := range o.Lists {
		if o.Lists[i].ID == id {
			return &o.Lists[i]
		}
	}
	return nil
}

// ownedBytes estimates what a copy holds in memory.
func ownedBytes(o *Owned) int {
	n := 100
	for _, l := range o.Lists {
		n += 64 + len(l.Name) + 8*len(l.Members)
	}
	return n
}

// Copies are the users' lists in the cache tiers.
type Copies struct {
	d     *deps.Deps
	cache *cache.Tiers
	local *cache.Tier[*Owned] // by owner; nil when the local tiers are off
}

// New keeps the copies in d's Redis and in a local tier whose drops the
// invalidation messages of kind metrics.KindLists make.
func New(d *deps.Deps, c *cache.Tiers) *Copies {
	cfg := d.Cfg
	cp := &Copies{d: d, cache: c,
		local: cache.NewTier(metrics.KindLists, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, ownedBytes, d.Metrics)}
	c.Register(metrics.KindLists, cp.local)
	return cp
}

// Stop ends the local tier's clean-up goroutine.
func (cp *Copies) Stop() { cp.local.Stop() }

// Of is all of owner's lists.
func (cp *Copies) Of(ctx context.Context, owner int64) (*Owned, error) {
	got, err := cp.local.GetMany(ctx, []int64{owner}, cp.load)
	if err != nil {
		return nil, err
	}
	return got[owner], nil
}

// load reads the copies of owners' lists from Redis, filling what is
// missing from MySQL; Redis failing sends the read to MySQL.
func (cp *Copies) load(ctx context.Context, owners []int64) (map[int64]*Owned, error) {
	out := make(map[int64]*Owned, len(owners))
	for _, owner := range owners {
		o, err := cp.loadOne(ctx, owner)
		if err != nil {
			return nil, err
		}
		out[owner] = o
	}
	return out, nil
}

func (cp *Copies) loadOne(ctx context.Context, owner int64) (*Owned, error) {
	keys := []string{cp.d.Keys.CachedLists(owner), cp.d.Keys.CachedListsVersion(owner)}
	pipe := cp.d.Redis.Pipeline()
	copied, version := pipe.Get(ctx, keys[0]), pipe.Get(ctx, keys[1])
	pipe.Exec(ctx) // each command's own error is looked at below
	redisUp := true
	for _, cmd := range []*redis.StringCmd{copied, version} {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			cp.d.WarnRedis("read a copy of lists; MySQL answers", err)
			redisUp = false
		}
	}
	if redisUp && copied.Err() == nil {
		o := &Owned{}
		if err := json.Unmarshal([]byte(copied.Val()), o); err == nil {
			cp.d.Metrics.CacheLookups.WithLabelValues(metrics.TierRedis, metrics.KindLists, "hit").Inc()
			return o, nil
		}
		// Unreadable (an older build's): filled again below.
	}
	cp.d.Metrics.CacheLookups.WithLabelValues(metrics.TierRedis, metrics.KindLists, "miss").Inc()
	lists, err := cp.d.Store.ListsWithMembers(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("lists of %d: %w", owner, err)
	}
	o := toOwned(lists)
	if !redisUp {
		return o, nil
	}
	value, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	seen := version.Val() // "" when missing
	if err := fillScript.Run(ctx, cp.d.Redis, keys, seen, value, cp.d.Cfg.UserCacheTTL.Milliseconds()).Err(); err != nil {
		cp.d.WarnRedis("write a copy of lists", err)
	}
	return o, nil
}

// toOwned is the copy of lists as MySQL gave them.
func toOwned(lists []store.OwnedList) *Owned {
	o := &Owned{Lists: make([]List, len(lists))}
	for i, l := range lists {
		o.Lists[i] = List{ID: l.ID, Name: l.Name, CreatedAt: l.CreatedAt.UTC(), Members: l.Members}
	}
	return o
}

// fillScript writes the copy ARGV[2] to KEYS[1] with TTL ARGV[3] ms if
// the version KEYS[2] is still ARGV[1] ("" for none): no change of the
// lists committed since the fill read the version, before it read MySQL.
var fillScript = redis.NewScript(`
local v = redis.call('GET', KEYS[2])
if (v or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)

// changedScript deletes the copy KEYS[1] and moves the version KEYS[2] up,
// with TTL ARGV[1] ms.
var changedScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`)

// Changed drops the copies of owners' lists, in Redis and in every
// instance's local tier, after a change of them committed. An error is
// Redis's: the Redis copy may still hold the lists as they were.
func (cp *Copies) Changed(ctx context.Context, owners ...int64) error {
	var failed error
	for _, owner := range owners {
		keys := []string{cp.d.Keys.CachedLists(owner), cp.d.Keys.CachedListsVersion(owner)}
		if err := changedScript.Run(ctx, cp.d.Redis, keys, cp.d.Cfg.UserCacheTTL.Milliseconds()).Err(); err != nil {
			failed = redisx.Fail(err)
		}
	}
	cp.local.Drop(owners)
	cp.cache.Invalidate(context.WithoutCancel(ctx), metrics.KindLists, owners)
	return failed
}
