package redisx

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv"
)

// A read falls back to MySQL on the failures marked by Fail, found through
// any wrapping, and only on those.
func TestFailMarksARedisFailureThroughWrapping(t *testing.T) {
	cause := errors.New("connection refused")
	wrapped := fmt.Errorf("read inbox: %w", Fail(cause))
	var re Error
	if !errors.As(wrapped, &re) {
		t.Fatalf("errors.As(%v, Error) = false", wrapped)
	}
	if !errors.Is(wrapped, cause) {
		t.Errorf("the cause is lost: errors.Is(%v, cause) = false", wrapped)
	}
	if got := Fail(cause).Error(); got != "redis: connection refused" {
		t.Errorf("Fail(cause).Error() = %q", got)
	}
	if errors.As(fmt.Errorf("query: %w", cause), &re) {
		t.Error("an error not marked by Fail counts as Redis's")
	}
	if errors.As(context.Canceled, &re) || errors.As(redis.Nil, &re) {
		t.Error("a cancellation or redis.Nil not marked by Fail counts as Redis's failure")
	}
}

func TestNewTokensAreRandomHex(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		token := NewToken()
		if b, err := hex.DecodeString(token); err != nil || len(b) != 12 {
			t.Fatalf("token %q is not 12 bytes of hex (%v)", token, err)
		}
		if seen[token] {
			t.Fatalf("token %q came twice in 1000", token)
		}
		seen[token] = true
	}
}

func TestOnClusterTellsClusterClients(t *testing.T) {
	rdb, _ := testenv.Redis(t)
	if got, want := OnCluster(rdb), testenv.RedisCluster(); got != want {
		t.Errorf("OnCluster(the test client) = %v, but the test Redis is a cluster: %v", got, want)
	}
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { single.Close(); cluster.Close(); failover.Close() })
	if OnCluster(single) || OnCluster(failover) {
		t.Error("a single-node or sentinel client counts as a cluster")
	}
	if !OnCluster(cluster) {
		t.Error("a cluster client does not count as a cluster")
	}
}

func TestWaitForUnlockReturnsAtOnceWithoutLock(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	start := time.Now()
	if err := WaitForUnlock(context.Background(), rdb, prefix+"lock", time.Minute, time.Minute); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > testenv.Scale(time.Second) {
		t.Errorf("waited %v for a lock no one holds", waited)
	}
}

func TestWaitForUnlockReturnsOnceTheLockGoes(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	lock := prefix + "lock"
	const held = 200 * time.Millisecond
	if err := rdb.Set(ctx, lock, "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		time.Sleep(held)
		rdb.Del(ctx, lock)
	}()
	if err := WaitForUnlock(ctx, rdb, lock, time.Minute, 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	if waited < held {
		t.Errorf("returned after %v while the lock was held for %v", waited, held)
	}
	if waited > held+testenv.Scale(2*time.Second) {
		t.Errorf("returned %v after the lock went", waited-held)
	}
}

func TestWaitForUnlockTimesOutOnAHeldLock(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	lock := prefix + "lock"
	if err := rdb.Set(ctx, lock, "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	const limit = 150 * time.Millisecond
	start := time.Now()
	err := WaitForUnlock(ctx, rdb, lock, limit, 10*time.Millisecond)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("WaitForUnlock on a held lock = %v, want ErrLockTimeout", err)
	}
	if waited := time.Since(start); waited < limit || waited > limit+testenv.Scale(2*time.Second) {
		t.Errorf("timed out after %v, want about %v", waited, limit)
	}
}

func TestWaitForUnlockStopsWithItsContext(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	lock := prefix + "lock"
	if err := rdb.Set(context.Background(), lock, "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	// Polled once a minute: the wait must end with the context, not at the next poll.
	err := WaitForUnlock(ctx, rdb, lock, time.Hour, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForUnlock with an expired context = %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > testenv.Scale(2*time.Second) {
		t.Errorf("returned %v after the start, long after its context ended", waited)
	}
}

func TestWaitForUnlockReportsRedisFailure(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + testenv.FreePort(t), MaxRetries: -1})
	rdb.Close()
	if err := WaitForUnlock(context.Background(), rdb, "lock", time.Minute, time.Millisecond); err == nil {
		t.Fatal("WaitForUnlock with a closed client = nil, want its error")
	}
}

// NOSCRIPT is told from other errors, through wrapping too.
func TestIsNoScriptTellsAnUnknownScript(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key := prefix + "k"
	unknown := redis.NewScript("return 'never loaded " + prefix + "'")
	err := unknown.EvalSha(ctx, rdb, []string{key}).Err()
	if !IsNoScript(err) || !IsNoScript(Fail(err)) {
		t.Errorf("IsNoScript(%v) = false", err)
	}
	rdb.Set(ctx, key, "a string", 0)
	wrongType := rdb.LPush(ctx, key, "x").Err()
	for _, other := range []error{nil, wrongType, redis.Nil, errors.New("NOSCRIPT, but not from Redis")} {
		if IsNoScript(other) {
			t.Errorf("IsNoScript(%v) = true", other)
		}
	}
}

// A script queued on a pipeline by its SHA is run whole when Redis did not
// know it, and then loaded; a known one's answer is the queued command's.
func TestQueuedRunsAScriptRedisDidNotKnow(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key := prefix + "{k}counter"
	script := redis.NewScript("return redis.call('INCR', KEYS[1]) * tonumber(ARGV[1]) -- " + prefix)
	run := func() (*redis.Cmd, *redis.Cmd) {
		pipe := rdb.Pipeline()
		cmd := script.EvalSha(ctx, pipe, []string{key}, 10)
		pipe.Exec(ctx)
		return cmd, Queued(ctx, rdb, script, cmd, []string{key}, 10)
	}

	queued, got := run()
	if !IsNoScript(queued.Err()) {
		t.Fatalf("the first EvalSha of a new script = %v, want NOSCRIPT", queued.Err())
	}
	if n, err := got.Int(); err != nil || n != 10 {
		t.Fatalf("Queued after NOSCRIPT = (%d, %v), want the script's answer 10", n, err)
	}
	queued, got = run()
	if got != queued {
		t.Error("Queued of a known script is not the queued command")
	}
	if n, err := got.Int(); err != nil || n != 20 {
		t.Errorf("the second run = (%d, %v), want 20: the script ran once each time", n, err)
	}
}

func TestEnsureOnceLeavesAnExistingKey(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key, lock := prefix+"{u1}inbox", prefix+"{u1}lock"
	rdb.Set(ctx, key, "built", 0)
	rebuilt, err := EnsureOnce(ctx, rdb, key, lock, func(string) error {
		t.Error("rebuild called for a key that exists")
		return nil
	})
	if err != nil || rebuilt {
		t.Errorf("EnsureOnce = (%v, %v), want (false, nil)", rebuilt, err)
	}
}

// A missing key is rebuilt under a lock holding the token rebuild gets, with
// a TTL of at most RebuildLockTTL; rebuild's error is EnsureOnce's.
func TestEnsureOnceRebuildsAMissingKeyUnderLock(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key, lock := prefix+"{u1}inbox", prefix+"{u1}lock"
	calls := 0
	rebuilt, err := EnsureOnce(ctx, rdb, key, lock, func(token string) error {
		calls++
		if held, err := rdb.Get(ctx, lock).Result(); err != nil || held != token {
			t.Errorf("the lock holds (%q, %v), want rebuild's token %q", held, err, token)
		}
		if ttl := rdb.PTTL(ctx, lock).Val(); ttl <= 0 || ttl > RebuildLockTTL {
			t.Errorf("the lock's TTL is %v, want at most %v", ttl, RebuildLockTTL)
		}
		rdb.Set(ctx, key, "built", 0)
		rdb.Del(ctx, lock)
		return nil
	})
	if err != nil || !rebuilt || calls != 1 {
		t.Fatalf("EnsureOnce = (%v, %v) after %d rebuilds, want (true, nil) after 1", rebuilt, err, calls)
	}

	failed := errors.New("MySQL is down")
	rebuilt, err = EnsureOnce(ctx, rdb, prefix+"{u2}inbox", prefix+"{u2}lock", func(string) error { return failed })
	if !errors.Is(err, failed) || !rebuilt {
		t.Errorf("EnsureOnce with a failing rebuild = (%v, %v), want (true, its error)", rebuilt, err)
	}
}

// Callers racing for one missing key: one rebuilds, the others wait for
// its lock to go and find the key.
func TestEnsureOnceRebuildsOnceAcrossCallers(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key, lock := prefix+"{u1}inbox", prefix+"{u1}lock"
	var calls, rebuilds atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rebuilt, err := EnsureOnce(ctx, rdb, key, lock, func(token string) error {
				calls.Add(1)
				time.Sleep(50 * time.Millisecond) // long enough for the others to find the lock
				rdb.Set(ctx, key, "built", 0)
				rdb.Del(ctx, lock)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			if rebuilt {
				rebuilds.Add(1)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 || rebuilds.Load() != 1 {
		t.Errorf("%d rebuilds ran and %d callers said they rebuilt, want 1 and 1", calls.Load(), rebuilds.Load())
	}
}

// When the key is swapped in between the check and the lock, there is
// nothing to rebuild, and the lock taken is freed.
func TestEnsureOnceFreesItsLockWhenTheKeyCameMeanwhile(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	key, lock := prefix+"{u1}inbox", prefix+"{u1}lock"
	rdb.AddHook(testenv.AfterEachCommand(func(cmd redis.Cmder) {
		if cmd.Name() == "set" && len(cmd.Args()) > 1 && cmd.Args()[1] == lock {
			// Another instance swaps its rebuilt key in, just after this one took the lock.
			rdb.Set(ctx, key, "built by another", 0)
		}
	}))
	rebuilt, err := EnsureOnce(ctx, rdb, key, lock, func(string) error {
		t.Error("rebuild called for a key that came in meanwhile")
		return nil
	})
	if err != nil || rebuilt {
		t.Errorf("EnsureOnce = (%v, %v), want (false, nil)", rebuilt, err)
	}
	if n := rdb.Exists(ctx, lock).Val(); n != 0 {
		t.Error("the lock is still held")
	}
}
