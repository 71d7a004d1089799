package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/livemsg"
	"feedservice/feed/replicas"
	"feedservice/internal/testenv"
)

// A copy of an outbox answers every read as Redis does on the outbox
// itself: for bounds below, at, between and above its members, both ways,
// with and without a floor, the items of copy.page equal those of the
// range commands the outbox read ran (ZREVRANGEBYSCORE and ZRANGEBYSCORE
// with the same bounds and limit), and copy.Reposts equals a scan of the
// outbox's members from the lowest original up.
func TestOutboxCopyAnswersAsRedis(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	d := &deps.Deps{Cfg: config.Config{InboxTTL: time.Hour}.WithDefaults(), Redis: rdb, Keys: keyspace.New(prefix), Metrics: metrics.New(),
		Log: slog.New(slog.DiscardHandler), WarnRedis: func(string, error) {}}
	o := New(d, cache.New(d, livemsg.NewPublisher(d.Redis, d.Keys, d.Log), replicas.New(d.Store, d.Redis, d.Keys, d.WarnRedis)))
	t.Cleanup(o.Stop)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, floor := range []int64{0, 1_000_040} {
		author := int64(900 + floor%7)
		key := d.Keys.Outbox(author)
		members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", floor)}}
		var ids []int64
		for i := range 60 {
			id := int64(1_000_000 + 2*i) // even ids: odd bounds fall between
			if id < floor {
				continue
			}
			ids = append(ids, id)
			m := strconv.FormatInt(id, 10)
			if i%4 == 1 {
				m += ":" + strconv.FormatInt(1_000_000+int64(rng.IntN(i+1))*2, 10)
			}
			members = append(members, redis.Z{Score: float64(id), Member: m})
		}
		if err := rdb.ZAdd(ctx, key, members...).Err(); err != nil {
			t.Fatal(err)
		}
		copies, err := o.readWhole(ctx, []int64{author})
		if err != nil {
			t.Fatal(err)
		}
		c := copies[author]
		if c.floor != floor || len(c.items) != len(ids) {
			t.Fatalf("copy of floor %d with %d items, want %d and %d", c.floor, len(c.items), floor, len(ids))
		}
		bounds := []int64{0, 1, 999_999, 1_000_000, 1_000_001, floor, floor + 1, 1_000_118, 1_000_119, 2_000_000, math.MaxInt64}
		for _, bound := range bounds {
			for _, limit := range []int{1, 4, 7, 100} {
				for _, older := range []bool{true, false} {
					var want []string
					if older {
						want, err = rdb.ZRevRangeByScore(ctx, key, &redis.ZRangeBy{Min: strconv.FormatInt(floor, 10), Max: "(" + scoreArg(bound), Count: int64(limit)}).Result()
					} else {
						lo := "(" + strconv.FormatInt(bound, 10)
						if bound < floor {
							lo = strconv.FormatInt(floor, 10)
						}
						want, err = rdb.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: lo, Max: "+inf", Count: int64(limit)}).Result()
					}
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, it := range c.Page(older, bound, limit) {
						m := strconv.FormatInt(it.PostID, 10)
						if it.OriginalID != it.PostID {
							m += ":" + strconv.FormatInt(it.OriginalID, 10)
						}
						got = append(got, m)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("floor %d, bound %d, limit %d, older %v:\n got %v\nwant %v", floor, bound, limit, older, got, want)
					}
				}
			}
		}
		for _, lowest := range []int64{floor - 1, floor, 1_000_050} {
			originals := map[int64]bool{lowest: true, 1_000_060: true, 1_000_000: true}
			got, ok := c.Reposts(lowest, originals)
			if ok != (floor <= lowest) {
				t.Fatalf("floor %d, lowest %d: answered %v", floor, lowest, ok)
			}
			if !ok {
				continue
			}
			all, err := rdb.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: strconv.FormatInt(lowest, 10), Max: "+inf"}).Result()
			if err != nil {
				t.Fatal(err)
			}
			var want []Item
			for _, m := range all {
				it, err := parseMember(m)
				if err == nil && it.OriginalID != it.PostID && originals[it.OriginalID] {
					want = append(want, it)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("floor %d, lowest %d: reposts %v, want %v", floor, lowest, got, want)
			}
		}
	}
}

// scoreArg writes a bound for a score range; MaxInt64 (no bound) as +inf.
func scoreArg(bound int64) string {
	if bound == math.MaxInt64 {
		return "+inf"
	}
	return strconv.FormatInt(bound, 10)
}
