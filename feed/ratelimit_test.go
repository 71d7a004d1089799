package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/apperr"
	"feedservice/feed/config"
	"feedservice/internal/testenv"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]Rate{
		"60/1m": {60, time.Minute}, " 10/1h ": {10, time.Hour}, "1/500ms": {1, 500 * time.Millisecond},
		"0": {}, "off": {}, "OFF": {},
	} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "60", "60/", "/1m", "-1/1m", "0/1m", "x/1m", "60/0s", "60/-1m", "60/minute"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", in, got)
		}
	}
}

// allowN spends n actions of subject's budget and fails t unless all pass.
func allowN(t *testing.T, e *Engine, rate Rate, subject string, n int) {
	t.Helper()
	for i := range n {
		if err := e.Allow(context.Background(), "test", rate, subject); err != nil {
			t.Fatalf("action %d of %d: %v", i+1, n, err)
		}
	}
}

// refused checks that err is RATE_LIMITED with a wait of at most period.
func refused(t *testing.T, err error, period time.Duration) {
	t.Helper()
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeRateLimited {
		t.Fatalf("want RATE_LIMITED, got %v", err)
	}
	if e.RetryAfter <= 0 || e.RetryAfter > period || e.RetryAfterSeconds() < 1 {
		t.Errorf("RetryAfter %v (%d s), want within (0, %v]", e.RetryAfter, e.RetryAfterSeconds(), period)
	}
}

func TestAllowAtTheEdge(t *testing.T) {
	const n = 5
	rate := Rate{Count: n, Period: time.Hour}
	te := newTestEngine(t, func(c *config.Config) { c.FanoutWorkers = 0 })
	allowN(t, te.Engine, rate, "ip:192.0.2.1", n)
	refused(t, te.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
	if got := counterValue(te.metrics.RateLimited.WithLabelValues("test")); got != 1 {
		t.Errorf("feed_rate_limited_total %v, want 1", got)
	}
	// Subjects and limits have budgets of their own; off allows everything.
	allowN(t, te.Engine, rate, "ip:192.0.2.2", n)
	if err := te.Allow(context.Background(), "other", rate, "ip:192.0.2.1"); err != nil {
		t.Errorf("another limit of the same subject: %v", err)
	}
	allowN(t, te.Engine, Rate{}, "ip:192.0.2.1", 3*n)
}

func TestAllowSharedByInstances(t *testing.T) {
	const n = 4
	rate := Rate{Count: n, Period: time.Hour}
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	first := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.FanoutWorkers = 0 })
	second := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.FanoutWorkers, c.Dispatch = 0, false })
	allowN(t, first.Engine, rate, "user:1", n/2)
	allowN(t, second.Engine, rate, "user:1", n-n/2)
	refused(t, first.Allow(context.Background(), "test", rate, "user:1"), rate.Period)
	refused(t, second.Allow(context.Background(), "test", rate, "user:1"), rate.Period)
	// The budget is under the key prefix: tenants and tests keep apart.
	other := startTestEngine(t, st, rdb, prefix+"other:", func(c *config.Config) { c.FanoutWorkers, c.Dispatch = 0, false })
	allowN(t, other.Engine, rate, "user:1", n)
}

// With Redis away the limiter spends from an in-process budget of the same
// rate (and counts the actions): refusing everything would take the API
// down with Redis, letting everything through would open log-in to
// password guessing. Back, Redis's budgets hold again.
func TestAllowFallsBackInProcessWithoutRedis(t *testing.T) {
	server := testenv.StartRedis(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()},
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, newTestStore(t), rdb, testenv.Name("t")+":", func(c *config.Config) { c.FanoutWorkers, c.Dispatch = 0, false })
	rate := Rate{Count: 1, Period: time.Hour}
	allowN(t, te.Engine, rate, "ip:192.0.2.1", 1)
	refused(t, te.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
	server.Kill()
	wide := Rate{Count: 3, Period: time.Hour}
	allowN(t, te.Engine, wide, "ip:192.0.2.1", 3)
	refused(t, te.Allow(context.Background(), "test", wide, "ip:192.0.2.1"), wide.Period)
	allowN(t, te.Engine, wide, "ip:192.0.2.2", 3) // a subject of its own
	if err := te.Allow(context.Background(), "other", wide, "ip:192.0.2.1"); err != nil {
		t.Errorf("another limit of the same subject, in process: %v", err)
	}
	if got := counterValue(te.metrics.RateLimitFallback); got != 8 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 8", got)
	}
	// Back, empty: limits hold again, Redis's (the in-process budget of
	// this subject is spent).
	server.Start()
	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the client does not reach the restarted Redis")
		}
		time.Sleep(10 * time.Millisecond)
	}
	allowN(t, te.Engine, rate, "ip:192.0.2.1", 1)
	refused(t, te.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
}

func TestPersistedQueries(t *testing.T) {
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	first := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.FanoutWorkers = 0 })
	second := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.FanoutWorkers, c.Dispatch = 0, false })
	ctx := context.Background()
	limits := PersistedQueryLimits{TTL: time.Hour, MaxEntries: 100, MaxBytes: 1 << 20}
	cache := first.PersistedQueries(limits)
	if _, ok := cache.Get(ctx, "h1"); ok {
		t.Fatal("a hash never added was found")
	}
	cache.Add(ctx, "h1", "{ viewer { id } }")
	if doc, ok := second.PersistedQueries(limits).Get(ctx, "h1"); !ok || doc != "{ viewer { id } }" {
		t.Errorf("on a second instance: %q, %v", doc, ok)
	}
	if ttl := rdb.TTL(ctx, first.keys.PersistedQueries()).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL %v, want within (0, 1h]", ttl)
	}
	// At the size limit it is kept; one byte over, it is not (it still runs).
	cache.Add(ctx, "big", strings.Repeat(" ", MaxPersistedQueryBytes))
	cache.Add(ctx, "bigger", strings.Repeat(" ", MaxPersistedQueryBytes+1))
	if _, ok := cache.Get(ctx, "big"); !ok {
		t.Errorf("a document of MaxPersistedQueryBytes was not kept")
	}
	if _, ok := cache.Get(ctx, "bigger"); ok {
		t.Errorf("a document over MaxPersistedQueryBytes was kept")
	}
}

// TestPersistedQueryCaps: past MaxEntries documents, or MaxBytes of them,
// the least recently sent go first; a document past its TTL is a miss.
func TestPersistedQueryCaps(t *testing.T) {
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	e := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.FanoutWorkers = 0 })
	ctx := context.Background()
	doc := func(i int) string { return fmt.Sprintf("{ viewer { id } } # %04d", i) } // 24 bytes each
	kept := func(c *PersistedQueries, i int) bool { _, ok := c.Get(ctx, strconv.Itoa(i)); return ok }
	t.Run("entries", func(t *testing.T) {
		rdb.Del(ctx, e.keys.PersistedQueries(), e.keys.PersistedQueriesSent(), e.keys.PersistedQueriesBytes())
		c := e.PersistedQueries(PersistedQueryLimits{TTL: time.Hour, MaxEntries: 10, MaxBytes: 1 << 20})
		for i := range 100 {
			c.Add(ctx, strconv.Itoa(i), doc(i))
		}
		if n := rdb.HLen(ctx, e.keys.PersistedQueries()).Val(); n != 10 {
			t.Errorf("%d documents kept, want the cap of 10", n)
		}
		if !kept(c, 99) || !kept(c, 90) || kept(c, 89) {
			t.Errorf("not the 10 most recently sent were kept")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		rdb.Del(ctx, e.keys.PersistedQueries(), e.keys.PersistedQueriesSent(), e.keys.PersistedQueriesBytes())
		c := e.PersistedQueries(PersistedQueryLimits{TTL: time.Hour, MaxEntries: 1000, MaxBytes: 5 * len(doc(0))})
		for i := range 100 {
			c.Add(ctx, strconv.Itoa(i), doc(i))
		}
		if n := rdb.HLen(ctx, e.keys.PersistedQueries()).Val(); n != 5 {
			t.Errorf("%d documents kept, want the 5 that fit in MaxBytes", n)
		}
		if b, _ := rdb.Get(ctx, e.keys.PersistedQueriesBytes()).Int(); b != 5*len(doc(0)) {
			t.Errorf("byte count %d, want %d", b, 5*len(doc(0)))
		}
		if !kept(c, 99) || !kept(c, 95) || kept(c, 94) {
			t.Errorf("not the 5 most recently sent were kept")
		}
	})
	t.Run("TTL", func(t *testing.T) {
		c := e.PersistedQueries(PersistedQueryLimits{TTL: 50 * time.Millisecond, MaxEntries: 10, MaxBytes: 1 << 20})
		c.Add(ctx, "short", doc(0))
		time.Sleep(60 * time.Millisecond)
		if _, ok := c.Get(ctx, "short"); ok {
			t.Errorf("a document past its TTL was found")
		}
	})
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}

// uncheckedLog counts the log's warnings that a rate limit went unchecked,
// and keeps the suppressed count of each.
type uncheckedLog struct {
	mu         sync.Mutex
	suppressed []int64
}

func (l *uncheckedLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *uncheckedLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *uncheckedLog) WithGroup(string) slog.Handler            { return l }
func (l *uncheckedLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "rate limit checked in this process only") {
		return nil
	}
	n := int64(-1)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "suppressed" {
			n = a.Value.Int64()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.suppressed = append(l.suppressed, n)
	return nil
}

func (l *uncheckedLog) warnings() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.suppressed)
}

// With Redis away, many limits checked in process log one warning per
// RateLimitWarnInterval, the next one saying how many were held back,
// while feed_rate_limit_fallback_total counts every one.
func TestUncheckedRateLimitWarnsOncePerInterval(t *testing.T) {
	t.Parallel()
	interval := testenv.Scale(time.Second) // 50 refused dials must fit in it
	server := testenv.StartRedis(t)
	// No retries, one dial: each failing check takes a refused connection.
	rdb := redis.NewClient(&redis.Options{Addr: server.Addr(), MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	// After a pool's worth of failed dials the client probes Redis from a
	// goroutine of its own until a dial succeeds: bring Redis back and wait
	// for that, so the goroutine ends with the test.
	t.Cleanup(func() {
		server.Kill() // in case the test ended before it did
		server.Start()
		deadline := time.Now().Add(testenv.Scale(10 * time.Second))
		for rdb.Ping(context.Background()).Err() != nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	})
	log := &uncheckedLog{}
	te := startTestEngineWithLog(t, newTestStore(t), rdb, testenv.Name("t")+":", slog.New(log), func(c *config.Config) {
		c.FanoutWorkers, c.Dispatch, c.RateLimitWarnInterval = 0, false, interval
	})
	rate := Rate{Count: 100, Period: time.Hour}
	server.Kill()
	start := time.Now()
	allowN(t, te.Engine, rate, "ip:192.0.2.1", 50)
	if time.Since(start) >= interval {
		t.Fatalf("50 failing checks took %s, longer than the interval %s the test relies on", time.Since(start), interval)
	}
	if got := log.warnings(); !slices.Equal(got, []int64{0}) {
		t.Fatalf("50 limits checked in process within %s logged %d warnings (suppressed counts %v), want 1", interval, len(got), got)
	}
	if got := counterValue(te.metrics.RateLimitFallback); got != 50 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 50", got)
	}
	time.Sleep(interval)
	allowN(t, te.Engine, rate, "ip:192.0.2.1", 1)
	if got := log.warnings(); !slices.Equal(got, []int64{0, 49}) {
		t.Fatalf("after the interval: suppressed counts %v, want [0 49]", got)
	}
	if got := counterValue(te.metrics.RateLimitFallback); got != 51 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 51", got)
	}
}

// The throttle's edge: a warning exactly one interval after the last one
// passes, one a nanosecond earlier is held back.
func TestWarnThrottleEdge(t *testing.T) {
	w := warnThrottle{every: time.Second}
	t0 := time.Unix(1000, 0)
	for i, step := range []struct {
		at         time.Duration
		ok         bool
		suppressed int
	}{{0, true, 0}, {time.Second - 1, false, 0}, {time.Second, true, 1}, {time.Second, false, 0}, {2*time.Second - 1, false, 0}, {2 * time.Second, true, 2}} {
		if ok, n := w.take(t0.Add(step.at)); ok != step.ok || n != step.suppressed {
			t.Errorf("step %d at +%s: %v %d, want %v %d", i, step.at, ok, n, step.ok, step.suppressed)
		}
	}
}

// The fallback's edges: a budget of n allows n actions at once and refuses
// the next with the wait of one interval; one interval later it allows
// exactly one more; after the period it is whole again.
func TestFallbackLimiterEdge(t *testing.T) {
	const n = 4
	rate := Rate{Count: n, Period: time.Minute} // an interval of 15 s
	l := &fallbackLimiter{maxSubjects: 10}
	t0 := time.Unix(1000, 0)
	for i := range n {
		if wait := l.allow("k", rate, t0); wait != 0 {
			t.Fatalf("action %d of %d refused, wait %v", i+1, n, wait)
		}
	}
	if wait := l.allow("k", rate, t0); wait != 15*time.Second {
		t.Fatalf("action %d: wait %v, want 15s", n+1, wait)
	}
	if wait := l.allow("k", rate, t0.Add(15*time.Second-1)); wait != 1 {
		t.Fatalf("a nanosecond before the interval: wait %v, want 1ns", wait)
	}
	if wait := l.allow("k", rate, t0.Add(15*time.Second)); wait != 0 {
		t.Fatalf("one interval later: wait %v, want allowed", wait)
	}
	if wait := l.allow("k", rate, t0.Add(15*time.Second)); wait == 0 {
		t.Fatal("two actions allowed one interval later")
	}
	later := t0.Add(15*time.Second + rate.Period)
	for i := range n {
		if wait := l.allow("k", rate, later); wait != 0 {
			t.Fatalf("after the period, action %d of %d refused, wait %v", i+1, n, wait)
		}
	}
}

// The fallback holds at most RateLimitFallbackSubjects budgets: at the
// limit it keeps every one; one more drops the budgets already whole
// first, and when none is, a hundredth of them (one here).
func TestFallbackLimiterSubjectsEdge(t *testing.T) {
	const max = 10
	rate := Rate{Count: 1, Period: time.Hour}
	l := &fallbackLimiter{maxSubjects: max}
	t0 := time.Unix(1000, 0)
	for i := range max {
		l.allow(fmt.Sprint("live", i), rate, t0)
	}
	if got := l.size(); got != max {
		t.Fatalf("%d budgets held at the limit of %d", got, max)
	}
	for i := range max {
		if wait := l.allow(fmt.Sprint("live", i), rate, t0); wait == 0 {
			t.Fatalf("budget live%d was lost at the limit", i)
		}
	}
	l.allow("one more", rate, t0)
	if got := l.size(); got != max {
		t.Fatalf("%d budgets held after one past the limit of %d, want %d", got, max, max)
	}
	// An hour on every budget is whole: the next new one drops them all.
	l.allow("after an hour", rate, t0.Add(time.Hour))
	if got := l.size(); got != 1 {
		t.Fatalf("%d budgets held after the whole ones were dropped, want 1", got)
	}
	if got := (config.Config{}).WithDefaults().RateLimitFallbackSubjects; got != config.DefaultRateLimitFallbackSubjects {
		t.Fatalf("default RateLimitFallbackSubjects %d, want %d", got, config.DefaultRateLimitFallbackSubjects)
	}
}
