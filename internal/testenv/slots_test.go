package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/slot"
)

// On a cluster, slot.Of agrees with the servers on keys shaped like the
// service's.
func TestSlotAgreesWithCluster(t *testing.T) {
	rdb, prefix := Redis(t)
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		// Single Redis has no CLUSTER KEYSLOT; slot.TestOfKnownKeys
		// holds the reference values.
		return
	}
	ctx := context.Background()
	for i := range 200 {
		key := fmt.Sprintf("%sfeed:{u%d}", prefix, i*7919)
		if i%2 == 1 {
			key = fmt.Sprintf("%sidnode:%d", prefix, i)
		}
		want, err := cc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := slot.Of(key); int64(got) != want {
			t.Fatalf("slot.Of(%q) = %d, the cluster says %d", key, got, want)
		}
	}
}

// errorRecorder is a test that records its errors instead of failing.
type errorRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *errorRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.errors
	r.errors = nil
	return out
}

// The slot check catches each kind of cross-slot command, fails the test
// and does not send the command; the same commands within one slot pass.
func TestCheckSlotsCatchesCrossSlotCommands(t *testing.T) {
	ctx := context.Background()
	raw, prefix := Redis(t) // checked too: it must stay quiet below
	rec := &errorRecorder{TB: t}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: redisAddrs()})
	t.Cleanup(func() { rdb.Close() })
	CheckSlots(rec, rdb)

	// a and b are in different slots; a and a2 share the tag {a}.
	a, a2, b := prefix+"x:{a}", prefix+"y:{a}", prefix+"x:{b}"
	if slot.Of(a) == slot.Of(b) || slot.Of(a) != slot.Of(a2) {
		t.Fatal("the test keys are not laid out as meant")
	}
	if err := raw.Set(ctx, b, "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	script := redis.NewScript(`return redis.call('GET', KEYS[1])`)
	cases := []struct {
		name string
		run  func(keys ...string) error
	}{
		{"MGET", func(k ...string) error { return rdb.MGet(ctx, k...).Err() }},
		{"DEL", func(k ...string) error { return rdb.Del(ctx, k...).Err() }},
		{"EXISTS", func(k ...string) error { return rdb.Exists(ctx, k...).Err() }},
		{"RENAME", func(k ...string) error {
			rdb.Set(ctx, k[0], "v", 0)
			return rdb.Rename(ctx, k[0], k[1]).Err()
		}},
		{"SINTER", func(k ...string) error { return rdb.SInter(ctx, k...).Err() }},
		{"SUNIONSTORE", func(k ...string) error { return rdb.SUnionStore(ctx, k[0], k[1]).Err() }},
		{"ZUNIONSTORE", func(k ...string) error {
			return rdb.ZUnionStore(ctx, k[0], &redis.ZStore{Keys: k[1:]}).Err()
		}},
		{"EVAL", func(k ...string) error {
			return ignoreNil(rdb.Eval(ctx, `return redis.call('GET', KEYS[1])`, k, "arg").Err())
		}},
		{"EVALSHA", func(k ...string) error { return ignoreNil(script.Run(ctx, rdb, k).Err()) }},
		{"MULTI/EXEC", func(k ...string) error {
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, k[0], "v", 0)
				p.Del(ctx, k[1])
				return nil
			})
			rdb.Del(ctx, k[0])
			return err
		}},
		{"pipelined MGET", func(k ...string) error {
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Get(ctx, k[0])
				p.MGet(ctx, k...)
				return nil
			})
			return ignoreNil(err)
		}},
	}
	for i, c := range cases {
		a, a2 := fmt.Sprintf("%s%d:x:{a}", prefix, i), fmt.Sprintf("%s%d:y:{a}", prefix, i)
		if err := c.run(a, a2); err != nil {
			t.Errorf("%s within one slot: %v", c.name, err)
		}
		if errs := rec.take(); len(errs) > 0 {
			t.Errorf("%s within one slot reported: %v", c.name, errs)
		}
		err := c.run(a, b)
		var cross *CrossSlotError
		if !errors.As(err, &cross) {
			t.Errorf("%s over two slots: error %v, want a *CrossSlotError", c.name, err)
		}
		if errs := rec.take(); len(errs) != 1 || !strings.Contains(errs[0], "CROSSSLOT") {
			t.Errorf("%s over two slots: the test got %q, want one CROSSSLOT error", c.name, errs)
		}
		if v, _ := raw.Get(ctx, b).Result(); v != "kept" {
			t.Fatalf("%s over two slots was sent: %s is %q", c.name, b, v)
		}
	}

	// A plain pipeline sends each command to its own slot's node: commands
	// on different slots are fine.
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, a)
		p.Get(ctx, b)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		t.Errorf("a pipeline of single-key commands: %v", err)
	}
	if errs := rec.take(); len(errs) > 0 {
		t.Errorf("a pipeline of single-key commands reported: %v", errs)
	}
}

// On a cluster the servers themselves refuse what the slot check refuses.
func TestClusterRefusesCrossSlot(t *testing.T) {
	if !RedisCluster() {
		return // a single Redis accepts any keys; the slot check stands in
	}
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redisAddrs()})
	t.Cleanup(func() { rdb.Close() })
	_, prefix := Redis(t)
	a, b := prefix+"x:{a}", prefix+"x:{b}"
	for name, err := range map[string]error{
		"MGET": rdb.MGet(ctx, a, b).Err(),
		"EVAL": rdb.Eval(ctx, `return 1`, []string{a, b}).Err(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
			t.Errorf("%s over two slots on the cluster: %v, want CROSSSLOT", name, err)
		}
	}
}

func ignoreNil(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}
