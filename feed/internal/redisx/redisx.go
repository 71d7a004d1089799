// Package redisx holds the engine's helpers over go-redis: the failure a
// read falls back to MySQL on, lock tokens and the wait for a lock, and
// whether the client is a Redis Cluster.
package redisx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Error marks a failure of Redis, on which a read falls back to MySQL.
type Error struct{ Err error }

func (e Error) Error() string { return "redis: " + e.Err.Error() }
func (e Error) Unwrap() error { return e.Err }

// Fail marks err as a failure of Redis.
func Fail(err error) error { return Error{Err: err} }

// ErrLockTimeout is returned when a lock held by someone else (a rebuild, a
// build of a list's copy) was not freed in time.
var ErrLockTimeout = errors.New("timed out waiting for a lock held by another instance")

// WaitForUnlock polls lock every poll until it is gone, for at most limit.
func WaitForUnlock(ctx context.Context, rdb redis.UniversalClient, lock string, limit, poll time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		n, err := rdb.Exists(ctx, lock).Result()
		if err != nil || n == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	return ErrLockTimeout
}

// NewToken is a random token: a lock's holder, a set's version, an
// instance's name.
func NewToken() string {
	buf := make([]byte, 12)
	rand.Read(buf)
	return hex.EncodeToString(buf)
}

// OnCluster reports whether rdb is a Redis Cluster client.
func OnCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}

// IsNoScript says whether err is Redis not knowing a script's SHA (it
// restarted, or the node is new): the script must be sent whole.
func IsNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// RebuildLockTTL bounds a rebuild of an inbox or an outbox: a crashed
// rebuilder frees the lock then.
const RebuildLockTTL = 10 * time.Second

// UnpackChunk bounds the members that one command of a script names
// through unpack (an inbox read's ZMSCORE and HMGET of the posts it looks
// up, an outbox read's ZMSCORE of its add sequences), well under what Lua's
// unpack can pass at once (about 8,000).
const UnpackChunk = 1000

// Queued is the answer of script, queued on a pipeline as cmd (EvalSha)
// with keys and args: cmd's own, or, when Redis did not know the script
// (it restarted, or the node is new), the script's run alone, which loads
// it.
func Queued(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, cmd *redis.Cmd, keys []string, args ...any) *redis.Cmd {
	if IsNoScript(cmd.Err()) {
		return script.Run(ctx, rdb, keys, args...)
	}
	return cmd
}

// EnsureOnce makes sure key exists: when it is missing, rebuild writes it
// under lock (a token, held for at most RebuildLockTTL), once across
// instances. A caller that finds another's lock waits for it to go and
// looks again. rebuild gets the lock's token and frees the lock itself;
// EnsureOnce reports whether this call rebuilt.
func EnsureOnce(ctx context.Context, rdb redis.UniversalClient, key, lock string, rebuild func(token string) error) (bool, error) {
	exists := func() (bool, error) {
		n, err := rdb.Exists(ctx, key).Result()
		return n == 1, err
	}
	return EnsureOnceBy(ctx, rdb, exists, lock, rebuild)
}

// EnsureOnceBy is EnsureOnce for a key that may exist without being whole
// (an inbox without its floor marker): exists says whether it is there.
func EnsureOnceBy(ctx context.Context, rdb redis.UniversalClient, exists func() (bool, error), lock string, rebuild func(token string) error) (bool, error) {
	for {
		there, err := exists()
		if err != nil || there {
			return false, err
		}
		token := NewToken()
		got, err := rdb.SetNX(ctx, lock, token, RebuildLockTTL).Result()
		if err != nil {
			return false, err
		}
		if got {
			// Someone may have swapped a rebuilt key in between the check
			// and the lock: then there is nothing to do.
			if there, err := exists(); err != nil || there {
				rdb.Del(ctx, lock)
				return false, err
			}
			return true, rebuild(token)
		}
		if err := WaitForUnlock(ctx, rdb, lock, RebuildLockTTL, 5*time.Millisecond); err != nil {
			return false, err
		}
	}
}
