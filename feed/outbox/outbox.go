// Package outbox holds the authors' outboxes: each author's recent posts
// and reposts in Redis, written by the fan-out and rebuilt from MySQL when
// missing; this instance's copies of the celebrities' outboxes, which the
// read model (package timeline) merges into a hybrid page or folds into
// the reader's inbox, and a list's feed merges for its members (copies.go);
// and, through Outboxes, the celebrity set (package celebrities).
package outbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/celebrities"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/models"
	"feedservice/store"
)

// Outboxes are the authors' outboxes and the celebrity set.
type Outboxes struct {
	d      *deps.Deps
	cache  *cache.Tiers
	copies *cache.Tier[*Copy] // the outboxes merged at read time, by author; nil when the local tiers are off
	// expired holds, by author, the copies read, kept past the tier's
	// LocalCacheTTL for revalidation by version (see copies.go); nil when
	// the local tiers are off.
	expired *otter.Cache[int64, *Copy]
	*celebrities.Set
}

// New keeps outboxes in d's Redis; its local copies register with c, whose
// invalidation messages drop them.
func New(d *deps.Deps, c *cache.Tiers) *Outboxes {
	cfg := d.Cfg
	o := &Outboxes{d: d, cache: c, Set: celebrities.New(d),
		copies: cache.NewTier(metrics.KindOutbox, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, copyBytes, d.Metrics)}
	if cfg.LocalCacheMaxEntries > 0 {
		floor := max(cfg.LocalCacheMaxBytes/int64(cfg.LocalCacheMaxEntries), 1)
		o.expired = otter.Must(&otter.Options[int64, *Copy]{
			MaximumWeight: uint64(cfg.LocalCacheMaxBytes),
			Weigher:       func(_ int64, c *Copy) uint32 { return uint32(min(max(int64(copyBytes(c)), floor), 1<<31)) },
		})
	}
	c.Register(metrics.KindOutbox, o)
	return o
}

// Stop ends the local copies' clean-up goroutine.
func (o *Outboxes) Stop() { o.copies.Stop() }

// An author's outbox (see keyspace.Keys.Outbox) holds their recent posts and
// reposts. Readers merge the outboxes of the celebrities they follow, and
// of a list's members, at read time, or fold a celebrity's into their inbox
// (see package timeline's fold.go). KEYS[1] outbox, KEYS[2] rebuild lock,
// KEYS[3] the outbox's version, which every write sets first, also when the
// outbox is missing (see copies.go), KEYS[4] the order its members came in
// (keyspace.Keys.OutboxAdds); ARGV[1] is a new epoch, taken when the outbox
// is missing or has no version, ARGV[2] the TTL in ms.
const luaOutboxVersion = `
local function next_version()
  local v = redis.call('GET', KEYS[3])
  if v and redis.call('EXISTS', KEYS[1]) == 1 then
    local e, c = string.match(v, '^(.*):(%d+)$')
    if e then return e, tonumber(c) + 1 end
  end
  return ARGV[1], 0
end
local epoch, n = next_version()
redis.call('SET', KEYS[3], epoch .. ':' .. n, 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
  return 0
end
`

// rebuilding is luaOutboxVersion's answer while a rebuild of the outbox
// runs: wait for it, then write.
const rebuilding = 2

// addOutboxScript adds member ARGV[3] at score ARGV[4], trimmed to ARGV[5],
// with its add sequence.
var addOutboxScript = redis.NewScript(luaOutboxVersion + `
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('ZADD', KEYS[4], n, ARGV[3])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
local size = redis.call('ZCARD', KEYS[1]) - 1
if size > tonumber(ARGV[5]) then
  local gone = redis.call('ZRANGE', KEYS[1], 1, size - tonumber(ARGV[5]))
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[4], unpack(gone))
  local low = redis.call('ZRANGE', KEYS[1], 1, 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYSCORE', KEYS[1], -1, -1)
  redis.call('ZADD', KEYS[1], -1, '~' .. low[2])
end
return 1`)

// removeOutboxScript takes member ARGV[3] out. A fold has nothing to add
// for a removal (reads drop what was deleted), but copies must not outlive
// it: the version moves on.
var removeOutboxScript = redis.NewScript(luaOutboxVersion + `
redis.call('ZREM', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
return 1`)

// Item is one post of an outbox: the post and the original it stands for.
type Item struct {
	PostID     int64
	OriginalID int64
}

func member(p *models.Post) string {
	if p.RepostOfID != nil {
		return fmt.Sprintf("%d:%d", p.ID, *p.RepostOfID)
	}
	return strconv.FormatInt(p.ID, 10)
}

func parseMember(m string) (Item, error) {
	post, orig, isRepost := strings.Cut(m, ":")
	id, err := strconv.ParseInt(post, 10, 64)
	if err != nil {
		return Item{}, err
	}
	item := Item{PostID: id, OriginalID: id}
	if isRepost {
		if item.OriginalID, err = strconv.ParseInt(orig, 10, 64); err != nil {
			return Item{}, err
		}
	}
	return item, nil
}

// change runs an outbox script, waiting out a running rebuild, and
// then drops the local copies of the outbox.
func (o *Outboxes) change(ctx context.Context, script *redis.Script, author int64, args ...any) error {
	defer o.changed(ctx, author)
	keys := []string{o.d.Keys.Outbox(author), o.d.Keys.OutboxLock(author), o.d.Keys.OutboxVersion(author), o.d.Keys.OutboxAdds(author)}
	for {
		version := []any{redisx.NewToken(), o.d.Cfg.InboxTTL.Milliseconds()}
		n, err := script.Run(ctx, o.d.Redis, keys, append(version, args...)...).Int()
		if err != nil || n != rebuilding {
			return err
		}
		if err := redisx.WaitForUnlock(ctx, o.d.Redis, keys[1], redisx.RebuildLockTTL, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// Ensure rebuilds a missing outbox from MySQL, once across instances.
func (o *Outboxes) Ensure(ctx context.Context, author int64) error {
	_, err := redisx.EnsureOnce(ctx, o.d.Redis, o.d.Keys.Outbox(author), o.d.Keys.OutboxLock(author), func(token string) error {
		return o.rebuild(ctx, author, token)
	})
	return err
}

func (o *Outboxes) rebuild(ctx context.Context, author int64, token string) error {
	key, lock := o.d.Keys.Outbox(author), o.d.Keys.OutboxLock(author)
	defer o.d.Redis.Del(context.WithoutCancel(ctx), lock)
	posts, err := o.d.Store.TimelinePage(ctx, author, store.Older, math.MaxInt64, o.d.Cfg.InboxCap)
	if err != nil {
		return err
	}
	var floor int64
	if len(posts) == o.d.Cfg.InboxCap {
		floor = posts[len(posts)-1].ID
	}
	members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", floor)}}
	for _, p := range posts {
		members = append(members, redis.Z{Score: float64(p.ID), Member: member(p)})
	}
	tmp := o.d.Keys.OutboxTemp(author)
	pipe := o.d.Redis.TxPipeline()
	pipe.Del(ctx, tmp)
	pipe.ZAdd(ctx, tmp, members...)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	keys := []string{tmp, key, lock, o.d.Keys.OutboxVersion(author), o.d.Keys.OutboxAdds(author)}
	swapped, err := swapOutboxScript.Run(ctx, o.d.Redis, keys, token, o.d.Cfg.InboxTTL.Milliseconds(), redisx.NewToken()).Int()
	if err == nil && swapped == 0 {
		err = errors.New("outbox rebuild lost its lock")
	}
	return err
}

// swapOutboxScript replaces the outbox with a rebuilt one if the rebuild
// still holds the lock (token ARGV[1]), with the TTL ARGV[2] ms, and a new
// version: epoch ARGV[3], no writes since, no adds recorded. KEYS: temp,
// outbox, lock, version, adds.
var swapOutboxScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[4], ARGV[3] .. ':0', 'PX', ARGV[2])
redis.call('DEL', KEYS[3], KEYS[5])
return 1`)

// Add adds post p to its author's outbox (trimmed to InboxCap), waiting out
// a running rebuild; an outbox that does not exist is left so.
func (o *Outboxes) Add(ctx context.Context, p *models.Post) error {
	return o.change(ctx, addOutboxScript, p.AuthorID, member(p), p.ID, o.d.Cfg.InboxCap)
}

// Remove takes author's post (a repost of original, when not 0) out of
// their outbox.
func (o *Outboxes) Remove(ctx context.Context, author, post, original int64) error {
	m := strconv.FormatInt(post, 10)
	if original != 0 {
		m += ":" + strconv.FormatInt(original, 10)
	}
	return o.change(ctx, removeOutboxScript, author, m)
}
