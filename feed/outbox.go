package feed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"feedservice/models"
	"feedservice/store"
)

// An author's outbox (see keys.outbox) holds their recent posts and
// reposts. Readers merge the outboxes of the celebrities they follow at read
// time. KEYS[1] outbox, KEYS[2] rebuild lock.

// addOutboxScript adds member ARGV[1] at score ARGV[2], trimmed to ARGV[3].
var addOutboxScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local n = redis.call('ZCARD', KEYS[1]) - 1
if n > tonumber(ARGV[3]) then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 1, n - tonumber(ARGV[3]))
  local low = redis.call('ZRANGE', KEYS[1], 1, 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYSCORE', KEYS[1], -1, -1)
  redis.call('ZADD', KEYS[1], -1, '~' .. low[2])
end
return 1`)

// removeOutboxScript takes member ARGV[1] out.
var removeOutboxScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`)

// outboxItem is one post of an outbox: the post and the original it stands for.
type outboxItem struct {
	PostID     int64
	OriginalID int64
}

func outboxMember(p *models.Post) string {
	if p.RepostOfID != nil {
		return fmt.Sprintf("%d:%d", p.ID, *p.RepostOfID)
	}
	return strconv.FormatInt(p.ID, 10)
}

func parseOutboxMember(m string) (outboxItem, error) {
	post, orig, isRepost := strings.Cut(m, ":")
	id, err := strconv.ParseInt(post, 10, 64)
	if err != nil {
		return outboxItem{}, err
	}
	item := outboxItem{PostID: id, OriginalID: id}
	if isRepost {
		if item.OriginalID, err = strconv.ParseInt(orig, 10, 64); err != nil {
			return outboxItem{}, err
		}
	}
	return item, nil
}

// changeOutbox runs an outbox script, waiting out a running rebuild.
func (e *Engine) changeOutbox(ctx context.Context, script *redis.Script, author int64, args ...any) error {
	keys := []string{e.keys.outbox(author), e.keys.outboxLock(author)}
	for {
		n, err := script.Run(ctx, e.redis, keys, args...).Int()
		if err != nil || n != inboxRebuilding {
			return err
		}
		if err := e.waitForUnlock(ctx, keys[1]); err != nil {
			return err
		}
	}
}

// readOutbox reads up to limit of the author's posts beyond bound (rebuilding
// a missing outbox), and the floor below which the outbox keeps nothing.
func (e *Engine) readOutbox(ctx context.Context, author int64, older bool, bound int64, limit int) (floor int64, items []outboxItem, err error) {
	if err := e.ensureOutbox(ctx, author); err != nil {
		return 0, nil, err
	}
	key := e.keys.outbox(author)
	pipe := e.redis.Pipeline()
	marker := pipe.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-1", Max: "-1"})
	pipe.PExpire(ctx, key, e.cfg.InboxTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, nil, err
	}
	if m := marker.Val(); len(m) > 0 {
		floor, _ = strconv.ParseInt(strings.TrimPrefix(m[0], "~"), 10, 64)
	}
	var members []string
	if older {
		members, err = e.redis.ZRevRangeByScore(ctx, key, &redis.ZRangeBy{Min: strconv.FormatInt(floor, 10), Max: "(" + scoreArg(bound), Count: int64(limit)}).Result()
	} else {
		min := "(" + strconv.FormatInt(bound, 10)
		if bound < floor {
			min = strconv.FormatInt(floor, 10)
		}
		members, err = e.redis.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: min, Max: "+inf", Count: int64(limit)}).Result()
	}
	if err != nil {
		return 0, nil, err
	}
	for _, m := range members {
		item, err := parseOutboxMember(m)
		if err != nil {
			return 0, nil, fmt.Errorf("outbox of %d holds %q", author, m)
		}
		items = append(items, item)
	}
	return floor, items, nil
}

// readOutboxScript is readOutbox in one round trip for an outbox that
// exists: {floor, member, ...} for up to ARGV[4] members beyond bound
// ARGV[3] in direction ARGV[1] ("older" or "newer"), with the TTL refreshed
// to ARGV[2] ms; nil when the outbox is missing. Ids are compared as
// strings (by length, then digits): Lua numbers lose their last digits.
var readOutboxScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
local floor = '0'
if #m > 0 then floor = string.sub(m[1], 2) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local members
if ARGV[1] == 'older' then
  members = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. ARGV[3], floor, 'LIMIT', 0, ARGV[4])
else
  local b, min = ARGV[3], '(' .. ARGV[3]
  if #b < #floor or (#b == #floor and b < floor) then min = floor end
  members = redis.call('ZRANGEBYSCORE', KEYS[1], min, '+inf', 'LIMIT', 0, ARGV[4])
end
table.insert(members, 1, floor)
return members`)

// outboxPage is what a read of one outbox found.
type outboxPage struct {
	floor int64
	items []outboxItem
}

// queueOutboxReads adds to pipe the reads of several authors' outboxes, a
// script per outbox (one key, one Cluster slot), for a read that shares a
// round trip with others; finishOutboxReads reads their answers, reading a
// missing outbox (rebuilt) on its own.
func (e *Engine) queueOutboxReads(ctx context.Context, pipe redis.Pipeliner, authors []int64, older bool, bound int64, limit int) []*redis.Cmd {
	dir, b := "newer", strconv.FormatInt(bound, 10)
	if older {
		dir, b = "older", scoreArg(bound)
	}
	cmds := make([]*redis.Cmd, len(authors))
	for i, a := range authors {
		cmds[i] = readOutboxScript.EvalSha(ctx, pipe, []string{e.keys.outbox(a)}, dir, e.cfg.InboxTTL.Milliseconds(), b, limit)
	}
	return cmds
}

// finishOutboxReads reads the answers of queueOutboxReads' scripts.
func (e *Engine) finishOutboxReads(ctx context.Context, cmds []*redis.Cmd, authors []int64, older bool, bound int64, limit int) ([]outboxPage, error) {
	out := make([]outboxPage, len(authors))
	for i, a := range authors {
		vals, err := cmds[i].StringSlice()
		if err != nil {
			if !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "NOSCRIPT") {
				return nil, err
			}
			// Missing, or the script not loaded yet (Redis restarted):
			// the slow way, which rebuilds a lost outbox; and load the
			// script for the next read.
			if redis.HasErrorPrefix(err, "NOSCRIPT") {
				readOutboxScript.Load(ctx, e.redis)
			}
			if out[i].floor, out[i].items, err = e.readOutbox(ctx, a, older, bound, limit); err != nil {
				return nil, err
			}
			continue
		}
		out[i].floor, _ = strconv.ParseInt(vals[0], 10, 64)
		for _, m := range vals[1:] {
			item, err := parseOutboxMember(m)
			if err != nil {
				return nil, fmt.Errorf("outbox of %d holds %q", a, m)
			}
			out[i].items = append(out[i].items, item)
		}
	}
	return out, nil
}

// ensureOutbox rebuilds a missing outbox from MySQL, once across instances.
func (e *Engine) ensureOutbox(ctx context.Context, author int64) error {
	key, lock := e.keys.outbox(author), e.keys.outboxLock(author)
	for {
		n, err := e.redis.Exists(ctx, key).Result()
		if err != nil || n == 1 {
			return err
		}
		token := newToken()
		got, err := e.redis.SetNX(ctx, lock, token, rebuildLockTTL).Result()
		if err != nil {
			return err
		}
		if got {
			if n, err := e.redis.Exists(ctx, key).Result(); err != nil || n == 1 {
				e.redis.Del(ctx, lock)
				return err
			}
			return e.rebuildOutbox(ctx, author, token)
		}
		if err := e.waitForUnlock(ctx, lock); err != nil {
			return err
		}
	}
}

func (e *Engine) rebuildOutbox(ctx context.Context, author int64, token string) error {
	key, lock := e.keys.outbox(author), e.keys.outboxLock(author)
	defer e.redis.Del(context.WithoutCancel(ctx), lock)
	posts, err := e.store.TimelinePage(ctx, author, store.Older, math.MaxInt64, e.cfg.InboxCap)
	if err != nil {
		return err
	}
	var floor int64
	if len(posts) == e.cfg.InboxCap {
		floor = posts[len(posts)-1].ID
	}
	members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", floor)}}
	for _, p := range posts {
		members = append(members, redis.Z{Score: float64(p.ID), Member: outboxMember(p)})
	}
	tmp := e.keys.outboxTemp(author)
	pipe := e.redis.TxPipeline()
	pipe.Del(ctx, tmp)
	pipe.ZAdd(ctx, tmp, members...)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	swapped, err := swapOutboxScript.Run(ctx, e.redis, []string{tmp, key, lock}, token, e.cfg.InboxTTL.Milliseconds()).Int()
	if err == nil && swapped == 0 {
		err = errors.New("outbox rebuild lost its lock")
	}
	return err
}

// swapOutboxScript replaces the outbox with a rebuilt one if the rebuild
// still holds the lock (token ARGV[1]). KEYS: temp, outbox, lock.
var swapOutboxScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return 1`)

// outboxRepostsScript returns {floor, member, ...}: the floor of outbox
// KEYS[1] and its reposts ("repost:original") of the originals ARGV[2..],
// looked for from score ARGV[1] (the lowest of them: a repost is newer than
// its original) up; nil when the outbox is missing.
var outboxRepostsScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
local out = {'0'}
if #m > 0 then out[1] = string.sub(m[1], 2) end
local want = {}
for i = 2, #ARGV do want[ARGV[i]] = true end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')) do
  local o = string.match(member, ':(%d+)$')
  if o and want[o] then out[#out + 1] = member end
end
return out`)

// celebrityReposts queues, on pipe, the search of the celebrities'
// outboxes for their reposts of originals; the function it returns, once
// pipe ran, gives those reposts by original (a failure of Redis as
// errRedis); with no celebrities or no originals, pipe is not used (nil
// will do) and the answer is empty. A repost is newer than its
// original, so an outbox whose floor is at or below the lowest original
// holds every one of them (the originals a read asks about are in its
// window, at or above every merged outbox's floor); an outbox that is
// missing, or whose floor rose past that meanwhile, is MySQL's to answer.
func (e *Engine) celebrityReposts(ctx context.Context, pipe redis.Pipeliner, celebs, originals []int64) func() (map[int64][]source, error) {
	if len(celebs) == 0 || len(originals) == 0 {
		return func() (map[int64][]source, error) { return nil, nil }
	}
	out := map[int64][]source{}
	lowest := slices.Min(originals)
	args := make([]any, 0, len(originals)+1)
	args = append(args, lowest)
	for _, o := range originals {
		args = append(args, o)
	}
	cmds := make([]*redis.Cmd, len(celebs))
	for i, c := range celebs {
		cmds[i] = outboxRepostsScript.EvalSha(ctx, pipe, []string{e.keys.outbox(c)}, args...)
	}
	return func() (map[int64][]source, error) {
		var fromMySQL []int64
		for i, c := range celebs {
			cmd := cmds[i]
			if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				cmd = outboxRepostsScript.Run(ctx, e.redis, []string{e.keys.outbox(c)}, args...) // Redis restarted
			}
			vals, err := cmd.StringSlice()
			if errors.Is(err, redis.Nil) {
				fromMySQL = append(fromMySQL, c)
				continue
			}
			if err != nil {
				return nil, errRedis{err}
			}
			if floor, _ := strconv.ParseInt(vals[0], 10, 64); floor > lowest {
				fromMySQL = append(fromMySQL, c)
				continue
			}
			for _, m := range vals[1:] {
				item, err := parseOutboxMember(m)
				if err != nil {
					return nil, errRedis{fmt.Errorf("outbox of %d holds %q", c, m)}
				}
				out[item.OriginalID] = append(out[item.OriginalID], source{User: c, Event: item.PostID})
			}
		}
		if len(fromMySQL) == 0 {
			return out, nil
		}
		reposts, err := e.store.Reposts(ctx, fromMySQL, originals)
		if err != nil {
			return nil, err
		}
		for _, rp := range reposts {
			out[*rp.RepostOfID] = append(out[*rp.RepostOfID], source{User: rp.AuthorID, Event: rp.ID})
		}
		return out, nil
	}
}
