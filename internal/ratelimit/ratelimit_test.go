package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/apperr"
	"feedservice/internal/testenv"
)

// testWarnEvery is the warning interval of the test limiters, the
// server's default; TestUncheckedRateLimitWarnsOncePerInterval sets its own.
const testWarnEvery = 10 * time.Second

// newTestLimiter is a limiter over rdb under prefix, with metrics of its
// own, writing its log to log (nowhere when nil).
func newTestLimiter(rdb redis.UniversalClient, prefix string, warnEvery time.Duration, log *slog.Logger) *Limiter {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return New(rdb, prefix, prometheus.NewRegistry(), warnEvery, 0, log)
}

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
func allowN(t *testing.T, l *Limiter, rate Rate, subject string, n int) {
	t.Helper()
	for i := range n {
		if err := l.Allow(context.Background(), "test", rate, subject); err != nil {
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
	rdb, prefix := testenv.Redis(t)
	l := newTestLimiter(rdb, prefix, testWarnEvery, nil)
	allowN(t, l, rate, "ip:192.0.2.1", n)
	refused(t, l.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
	if got := counterValue(l.limited.WithLabelValues("test")); got != 1 {
		t.Errorf("feed_rate_limited_total %v, want 1", got)
	}
	// Subjects and limits have budgets of their own; off allows everything.
	allowN(t, l, rate, "ip:192.0.2.2", n)
	if err := l.Allow(context.Background(), "other", rate, "ip:192.0.2.1"); err != nil {
		t.Errorf("another limit of the same subject: %v", err)
	}
	allowN(t, l, Rate{}, "ip:192.0.2.1", 3*n)
	// The budget is the key named by key, under redis_rate's prefix.
	if n, err := rdb.Exists(context.Background(), "rate:"+l.key("test", "ip:192.0.2.1")).Result(); err != nil || n != 1 {
		t.Errorf("the budget's key %q: %d, %v; want it to exist", "rate:"+l.key("test", "ip:192.0.2.1"), n, err)
	}
}

// AllowAtMost's edges: a budget of 5 gives 3 of 3 asked, then the 2 it
// has left of 3 asked, then refuses as Allow does, and Allow after it; an
// off rate gives all that is asked.
func TestAllowAtMostAtTheEdge(t *testing.T) {
	rate := Rate{Count: 5, Period: time.Hour}
	rdb, prefix := testenv.Redis(t)
	l := newTestLimiter(rdb, prefix, testWarnEvery, nil)
	ctx := context.Background()
	for i, want := range []int{3, 2} {
		if got, err := l.AllowAtMost(ctx, "test", rate, "user:1", 3); got != want || err != nil {
			t.Fatalf("ask %d: %d allowed, %v; want %d", i+1, got, err, want)
		}
	}
	got, err := l.AllowAtMost(ctx, "test", rate, "user:1", 3)
	if got != 0 {
		t.Errorf("a spent budget allowed %d", got)
	}
	refused(t, err, rate.Period)
	refused(t, l.Allow(ctx, "test", rate, "user:1"), rate.Period)
	if got := counterValue(l.limited.WithLabelValues("test")); got != 2 {
		t.Errorf("feed_rate_limited_total %v, want 2", got)
	}
	if got, err := l.AllowAtMost(ctx, "test", Rate{}, "user:1", 3); got != 3 || err != nil {
		t.Errorf("an off rate: %d allowed, %v; want 3", got, err)
	}
}

// With Redis away AllowAtMost spends from the in-process budget as Allow
// does, and counts each check once.
func TestAllowAtMostFallsBackInProcessWithoutRedis(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}) // nothing listens
	t.Cleanup(func() { rdb.Close() })
	l := newTestLimiter(rdb, "", testWarnEvery, nil)
	rate := Rate{Count: 5, Period: time.Hour}
	ctx := context.Background()
	for i, want := range []int{3, 2} {
		if got, err := l.AllowAtMost(ctx, "test", rate, "user:1", 3); got != want || err != nil {
			t.Fatalf("ask %d: %d allowed, %v; want %d", i+1, got, err, want)
		}
	}
	_, err := l.AllowAtMost(ctx, "test", rate, "user:1", 3)
	refused(t, err, rate.Period)
	if got := counterValue(l.fallbackChecks); got != 3 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 3", got)
	}
}

// The metrics are registered, under their names, on the registerer New
// is given (the engine's, so that /metrics shows them).
func TestMetricsOnTheRegistererGiven(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	reg := prometheus.NewRegistry()
	l := New(rdb, prefix, reg, testWarnEvery, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	rate := Rate{Count: 1, Period: time.Hour}
	allowN(t, l, rate, "ip:192.0.2.1", 1)
	refused(t, l.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	if want := []string{"feed_rate_limit_fallback_total", "feed_rate_limited_total"}; !slices.Equal(names, want) {
		t.Errorf("metrics registered %v, want %v", names, want)
	}
}

func TestAllowSharedByInstances(t *testing.T) {
	const n = 4
	rate := Rate{Count: n, Period: time.Hour}
	rdb, prefix := testenv.Redis(t)
	first := newTestLimiter(rdb, prefix, testWarnEvery, nil)
	second := newTestLimiter(rdb, prefix, testWarnEvery, nil)
	allowN(t, first, rate, "user:1", n/2)
	allowN(t, second, rate, "user:1", n-n/2)
	refused(t, first.Allow(context.Background(), "test", rate, "user:1"), rate.Period)
	refused(t, second.Allow(context.Background(), "test", rate, "user:1"), rate.Period)
	// The budget is under the key prefix: tenants and tests keep apart.
	other := newTestLimiter(rdb, prefix+"other:", testWarnEvery, nil)
	allowN(t, other, rate, "user:1", n)
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
	l := newTestLimiter(rdb, testenv.Name("t")+":", testWarnEvery, nil)
	rate := Rate{Count: 1, Period: time.Hour}
	allowN(t, l, rate, "ip:192.0.2.1", 1)
	refused(t, l.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
	server.Kill()
	wide := Rate{Count: 3, Period: time.Hour}
	allowN(t, l, wide, "ip:192.0.2.1", 3)
	refused(t, l.Allow(context.Background(), "test", wide, "ip:192.0.2.1"), wide.Period)
	allowN(t, l, wide, "ip:192.0.2.2", 3) // a subject of its own
	if err := l.Allow(context.Background(), "other", wide, "ip:192.0.2.1"); err != nil {
		t.Errorf("another limit of the same subject, in process: %v", err)
	}
	if got := counterValue(l.fallbackChecks); got != 8 {
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
	allowN(t, l, rate, "ip:192.0.2.1", 1)
	refused(t, l.Allow(context.Background(), "test", rate, "ip:192.0.2.1"), rate.Period)
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
// warning interval, the next one saying how many were held back, while
// feed_rate_limit_fallback_total counts every one.
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
	l := newTestLimiter(rdb, testenv.Name("t")+":", interval, slog.New(log))
	rate := Rate{Count: 100, Period: time.Hour}
	server.Kill()
	start := time.Now()
	allowN(t, l, rate, "ip:192.0.2.1", 50)
	if time.Since(start) >= interval {
		t.Fatalf("50 failing checks took %s, longer than the interval %s the test relies on", time.Since(start), interval)
	}
	if got := log.warnings(); !slices.Equal(got, []int64{0}) {
		t.Fatalf("50 limits checked in process within %s logged %d warnings (suppressed counts %v), want 1", interval, len(got), got)
	}
	if got := counterValue(l.fallbackChecks); got != 50 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 50", got)
	}
	time.Sleep(interval)
	allowN(t, l, rate, "ip:192.0.2.1", 1)
	if got := log.warnings(); !slices.Equal(got, []int64{0, 49}) {
		t.Fatalf("after the interval: suppressed counts %v, want [0 49]", got)
	}
	if got := counterValue(l.fallbackChecks); got != 51 {
		t.Errorf("feed_rate_limit_fallback_total %v, want 51", got)
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

// The fallback's allowAtMost gives what the budget holds, up to what is
// asked, and refuses with the wait of one interval when it holds none.
func TestFallbackLimiterAllowAtMostEdge(t *testing.T) {
	rate := Rate{Count: 4, Period: time.Minute} // an interval of 15 s
	l := &fallbackLimiter{maxSubjects: 10}
	t0 := time.Unix(1000, 0)
	for i, want := range []int{3, 1} {
		if got, wait := l.allowAtMost("k", rate, t0, 3); got != want || wait != 0 {
			t.Fatalf("ask %d: %d allowed, wait %v; want %d", i+1, got, wait, want)
		}
	}
	if got, wait := l.allowAtMost("k", rate, t0, 3); got != 0 || wait != 15*time.Second {
		t.Fatalf("a spent budget: %d allowed, wait %v; want 0 and 15s", got, wait)
	}
	if got, wait := l.allowAtMost("k", rate, t0.Add(15*time.Second), 3); got != 1 || wait != 0 {
		t.Fatalf("one interval later: %d allowed, wait %v; want 1", got, wait)
	}
}

// The fallback holds at most fallbackSubjects budgets: at the limit it
// keeps every one; one more drops the budgets already whole first, and
// when none is, a hundredth of them (one here).
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
	// New takes 0 subjects for the default, and any other count as is.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialed
	t.Cleanup(func() { rdb.Close() })
	for given, want := range map[int]int{0: DefaultFallbackSubjects, -1: DefaultFallbackSubjects, max: max} {
		lim := New(rdb, "", prometheus.NewRegistry(), testWarnEvery, given, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if got := lim.fallback.maxSubjects; got != want {
			t.Errorf("New with %d fallback subjects holds at most %d, want %d", given, got, want)
		}
	}
}

// A context ended before Redis answered (a client that completed its
// subscription, or went away) is no failure of Redis: Allow returns the
// context's error, and neither counts the action as checked in process
// nor warns. A subscribe-and-complete loop raised the fallback's alarm
// for every cycle.
func TestAllowWithAnEndedContextIsNoRedisFailure(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	log := &uncheckedLog{}
	l := newTestLimiter(rdb, prefix, testWarnEvery, slog.New(log))
	rate := Rate{Count: 5, Period: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 10 {
		if err := l.Allow(ctx, "test", rate, "user:1"); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Allow with a cancelled context: %v, want nil or context.Canceled", err)
		}
	}
	if got := counterValue(l.fallbackChecks); got != 0 {
		t.Errorf("feed_rate_limit_fallback_total %v after cancelled checks, want 0", got)
	}
	if got := log.warnings(); len(got) != 0 {
		t.Errorf("cancelled checks logged %d warnings that Redis failed", len(got))
	}
}

// Local's edges, those of the fallback's budget: n actions at once, the
// next refused for one interval, one more after it, whole after the
// period; an off rate allows everything.
func TestLocalEdge(t *testing.T) {
	const n = 4
	rate := Rate{Count: n, Period: time.Minute} // an interval of 15 s
	var b Local
	t0 := time.Unix(1000, 0)
	for i := range n {
		if wait := b.Allow(rate, t0); wait != 0 {
			t.Fatalf("action %d of %d refused, wait %v", i+1, n, wait)
		}
	}
	if wait := b.Allow(rate, t0); wait != 15*time.Second {
		t.Fatalf("action %d: wait %v, want 15s", n+1, wait)
	}
	if wait := b.Allow(rate, t0.Add(15*time.Second)); wait != 0 {
		t.Fatalf("one interval later: wait %v, want allowed", wait)
	}
	if wait := b.Allow(rate, t0.Add(15*time.Second)); wait == 0 {
		t.Fatal("two actions allowed one interval later")
	}
	for i := range n {
		if wait := b.Allow(rate, t0.Add(15*time.Second+rate.Period)); wait != 0 {
			t.Fatalf("after the period, action %d of %d refused, wait %v", i+1, n, wait)
		}
	}
	for range 3 * n {
		if wait := b.Allow(Rate{}, t0); wait != 0 {
			t.Fatalf("an off rate refused, wait %v", wait)
		}
	}
}
