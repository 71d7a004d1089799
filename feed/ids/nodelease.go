package ids

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// A node lease keeps two live instances from making ids with the same node
// number. It expires unless renewed, so a crashed instance frees its number.
const (
	nodeLeaseTTL   = 30 * time.Second
	nodeLeaseRenew = 10 * time.Second
)

// ErrNoFreeNode is returned when every node number is leased.
var ErrNoFreeNode = errors.New("every id node number is in use: too many instances")

var renewLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") and 1 or 0`)

// LeaseNode takes a free node number and keeps it until ctx ends; the
// lease of node n is the string key(n) in rdb.
func LeaseNode(ctx context.Context, rdb redis.UniversalClient, key func(n int) string, log *slog.Logger) (int, error) {
	buf := make([]byte, 16)
	rand.Read(buf)
	token := hex.EncodeToString(buf)
	for n := 0; n < MaxNodes; n++ {
		ok, err := rdb.SetNX(ctx, key(n), token, nodeLeaseTTL).Result()
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		go func() {
			t := time.NewTicker(nodeLeaseRenew)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					rdb.Del(context.WithoutCancel(ctx), key(n))
					return
				case <-t.C:
					kept, err := renewLease.Run(ctx, rdb, []string{key(n)}, token, nodeLeaseTTL.Milliseconds()).Int()
					if err == nil && kept == 0 {
						log.Error("id node lease taken by another instance; ids may collide until restart", "node", n)
					} else if err != nil && ctx.Err() == nil {
						log.Warn("renew id node lease", "node", n, "err", err)
					}
				}
			}
		}()
		return n, nil
	}
	return 0, ErrNoFreeNode
}
