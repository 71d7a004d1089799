package feed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
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

// changeOutbox runs an outbox script, waiting out a running rebuild, and
// then drops the local copies of the outbox.
func (e *Engine) changeOutbox(ctx context.Context, script *redis.Script, author int64, args ...any) error {
	defer e.outboxChanged(ctx, author)
	keys := []string{e.keys.Outbox(author), e.keys.OutboxLock(author)}
	for {
		n, err := script.Run(ctx, e.redis, keys, args...).Int()
		if err != nil || n != inboxRebuilding {
			return err
		}
		if err := redisx.WaitForUnlock(ctx, e.redis, keys[1], rebuildLockTTL, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// ensureOutbox rebuilds a missing outbox from MySQL, once across instances.
func (e *Engine) ensureOutbox(ctx context.Context, author int64) error {
	key, lock := e.keys.Outbox(author), e.keys.OutboxLock(author)
	for {
		n, err := e.redis.Exists(ctx, key).Result()
		if err != nil || n == 1 {
			return err
		}
		token := redisx.NewToken()
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
		if err := redisx.WaitForUnlock(ctx, e.redis, lock, rebuildLockTTL, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

func (e *Engine) rebuildOutbox(ctx context.Context, author int64, token string) error {
	key, lock := e.keys.Outbox(author), e.keys.OutboxLock(author)
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
	tmp := e.keys.OutboxTemp(author)
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
