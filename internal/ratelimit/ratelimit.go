// Package ratelimit spends budgets of actions per subject (a user, an IP)
// from Redis, shared by every instance, and from budgets kept in this
// process while Redis fails.
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/apperr"
	"feedservice/internal/throttle"
)

// DefaultFallbackSubjects is the most budgets (a limit and a subject each)
// the in-process fallback holds while Redis fails, unless New is given
// another count; past it, budgets already whole are dropped first, then
// any. It bounds the fallback's memory to about 10 MB (a key of about 50
// bytes, a time and the map's own).
const DefaultFallbackSubjects = 100_000

// Rate is a budget of actions per period, for one subject (a user, an IP).
// The zero Rate allows everything.
type Rate struct {
	Count  int
	Period time.Duration
}

// ParseRate reads a rate written "count/period", such as "60/1m" or
// "10/1h"; "0" or "off" turns the limit off.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "0" || strings.EqualFold(s, "off") {
		return Rate{}, nil
	}
	count, period, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 1 {
		return Rate{}, fmt.Errorf("rate %q: want count/period such as 60/1m, or off", s)
	}
	d, err := time.ParseDuration(period)
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: the period %q is not a duration such as 1m", s, period)
	}
	return Rate{Count: n, Period: d}, nil
}

// Off says the rate allows everything.
func (r Rate) Off() bool { return r.Count <= 0 }

func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	return strconv.Itoa(r.Count) + "/" + r.Period.String()
}

// Limiter spends the budgets of the rate limits (see Allow).
type Limiter struct {
	redis     *redis_rate.Limiter
	keyPrefix string
	log       *slog.Logger
	// limited counts the actions refused, by limit (feed_rate_limited_total);
	// fallbackChecks those checked in process (feed_rate_limit_fallback_total).
	limited        *prometheus.CounterVec
	fallbackChecks prometheus.Counter
	// fallback is the in-process budget of the rate limits while Redis
	// fails; fallbackWarn spaces the warnings of it, which would otherwise
	// come once per request while Redis is away.
	fallback     *fallbackLimiter
	fallbackWarn throttle.Throttle
}

// New is a limiter over rdb whose budgets are keys that start with
// keyPrefix. It registers its metrics on reg, warns that a limit was
// checked in process at most once per warnEvery, and holds at most
// fallbackSubjects budgets in process (DefaultFallbackSubjects when 0 or
// less).
func New(rdb redis.UniversalClient, keyPrefix string, reg prometheus.Registerer, warnEvery time.Duration, fallbackSubjects int, log *slog.Logger) *Limiter {
	if fallbackSubjects <= 0 {
		fallbackSubjects = DefaultFallbackSubjects
	}
	l := &Limiter{
		redis: redis_rate.NewLimiter(rdb), keyPrefix: keyPrefix, log: log,
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_rate_limited_total", Help: "Actions refused with RATE_LIMITED, by limit.",
		}, []string{"limit"}),
		fallbackChecks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_rate_limit_fallback_total", Help: "Actions checked against this instance's in-process budget because Redis failed.",
		}),
		fallback:     &fallbackLimiter{maxSubjects: fallbackSubjects},
		fallbackWarn: throttle.Throttle{Every: warnEvery},
	}
	reg.MustRegister(l.limited, l.fallbackChecks)
	return l
}

// key is the budget of subject (a user id or a client IP) under the named
// limit: redis_rate's GCRA state, a string holding the time at which the
// budget is whole again, which expires then. redis_rate writes it under its
// own "rate:" prefix before this name, so the key in Redis is
// "rate:<KeyPrefix>ratelimit:<limit>:<subject>". A single key: no hash tag.
func (l *Limiter) key(limit, subject string) string {
	return l.keyPrefix + "ratelimit:" + limit + ":" + subject
}

// Allow spends one action of subject's budget under the named limit, and
// answers RATE_LIMITED, with how long to wait, when the budget is spent.
// The budget lives in Redis (a GCRA, github.com/go-redis/redis_rate), so
// every instance spends from the same one. The whole budget may be spent
// at once (the burst is the count); it then refills evenly over the period.
//
// A context ended before Redis answered is no failure of Redis: Allow
// then returns the context's error, unwrapped to no apperr.Error, and
// neither counts nor warns of it.
//
// When Redis does not answer, Allow spends from a budget of the same rate
// kept in this process (fallbackLimiter), counts the action in
// feed_rate_limit_fallback_total and warns, at most once every warnEvery
// of New (with the count of the warnings held back). So while Redis is
// away each instance holds every subject to the rate on its own: with n
// instances a subject may spend up to n budgets. Refusing everything
// instead would take the whole API down with Redis, and letting everything
// through would open log-in to password guessing. The in-process budgets
// are not carried over to Redis when it is back.
func (l *Limiter) Allow(ctx context.Context, limit string, rate Rate, subject string) error {
	_, err := l.AllowAtMost(ctx, limit, rate, subject, 1)
	return err
}

// AllowAtMost spends as many actions of subject's budget under the named
// limit as it holds, up to n (at least 1), in one call to Redis: allowed
// is how many, from 1 to n, or 0 with Allow's RATE_LIMITED error when the
// budget holds not one. It is Allow for a caller that pays ahead for
// actions it will take one at a time, and falls back in process, and
// treats an ended context, as Allow does (a check in process counts once
// in feed_rate_limit_fallback_total, whatever n). An off rate allows all n.
//
// When the budget holds fewer than n whole actions, Redis (redis_rate's
// AllowAtMost) also spends the part of an action left over: the budget is
// then charged less than one action more than allowed says, which it
// refills within one interval (period/count) like any spent action.
func (l *Limiter) AllowAtMost(ctx context.Context, limit string, rate Rate, subject string, n int) (allowed int, err error) {
	n = max(n, 1)
	if rate.Off() {
		return n, nil
	}
	res, err := l.redis.AllowAtMost(ctx, l.key(limit, subject),
		redis_rate.Limit{Rate: rate.Count, Burst: rate.Count, Period: rate.Period}, n)
	var retryAfter time.Duration
	switch {
	case err != nil && ctx.Err() != nil:
		// The caller gave up (a client that completed its subscription, a
		// request whose client went away): Redis did not fail, and no one
		// waits for the action.
		return 0, fmt.Errorf("rate limit %s: %w", limit, ctx.Err())
	case err != nil:
		l.fallbackChecks.Inc()
		if ok, suppressed := l.fallbackWarn.Take(time.Now()); ok {
			l.log.Warn("rate limit checked in this process only: redis failed", "limit", limit, "err", err, "suppressed", suppressed)
		}
		if allowed, retryAfter = l.fallback.allowAtMost(limit+":"+subject, rate, time.Now(), n); allowed > 0 {
			return allowed, nil
		}
	case res.Allowed > 0:
		return res.Allowed, nil
	default:
		retryAfter = res.RetryAfter
	}
	l.limited.WithLabelValues(limit).Inc()
	return 0, &apperr.Error{
		Code:       apperr.CodeRateLimited,
		Message:    fmt.Sprintf("too many requests: at most %d per %s (%s); retry later", rate.Count, rate.Period, limit),
		RetryAfter: retryAfter,
	}
}

// fallbackLimiter holds the budgets of Allow in this process, for while
// Redis fails: the GCRA that redis_rate runs in Redis (burst = count,
// refilled evenly over the period), keyed by limit and subject. It holds
// at most maxSubjects budgets; a budget whole again is the same as none,
// and is the first dropped when the map is full.
type fallbackLimiter struct {
	maxSubjects int
	mu          sync.Mutex
	full        map[string]time.Time // when each budget is whole again
}

// allow spends one action of key's budget at now; 0 when allowed, else
// how long until one action is allowed again.
func (l *fallbackLimiter) allow(key string, rate Rate, now time.Time) (retryAfter time.Duration) {
	_, retryAfter = l.allowAtMost(key, rate, now, 1)
	return retryAfter
}

// allowAtMost spends as many actions of key's budget at now as it holds,
// up to n: allowed is how many, or 0 and how long until one action is
// allowed again.
func (l *fallbackLimiter) allowAtMost(key string, rate Rate, now time.Time, n int) (allowed int, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full == nil {
		l.full = map[string]time.Time{}
	}
	whole, ok := l.full[key]
	for ; allowed < n; allowed++ {
		next, wait := spend(whole, rate, now)
		if wait > 0 {
			retryAfter = wait
			break
		}
		whole = next
	}
	if allowed == 0 {
		return 0, retryAfter
	}
	if !ok && len(l.full) >= l.maxSubjects {
		l.dropOne(now)
	}
	l.full[key] = whole
	return allowed, 0
}

// spend is one action of a GCRA budget of rate (burst = count, refilled
// evenly over the period) that is whole again at whole: the budget's new
// whole time, or how long until one action is allowed.
func spend(whole time.Time, rate Rate, now time.Time) (next time.Time, wait time.Duration) {
	if whole.Before(now) {
		whole = now
	}
	next = whole.Add(rate.Period / time.Duration(rate.Count))
	if wait = next.Sub(now) - rate.Period; wait > 0 {
		return whole, wait
	}
	return next, 0
}

// Local is one subject's budget kept in this process alone, for what only
// one instance sees (a websocket's messages): the GCRA of Allow without
// Redis. The zero Local is a whole budget; it is safe for concurrent use.
type Local struct {
	mu    sync.Mutex
	whole time.Time
}

// Allow spends one action at rate; 0 when allowed, else how long until one
// action is allowed again. An off rate allows everything.
func (b *Local) Allow(rate Rate, now time.Time) (retryAfter time.Duration) {
	if rate.Off() {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	next, wait := spend(b.whole, rate, now)
	if wait > 0 {
		return wait
	}
	b.whole = next
	return 0
}

// dropOne makes room for a budget: it drops every budget whole again by
// now, or, when none is, a hundredth of the budgets (at least one; Go's
// map order picks which), so that a flood of new subjects scans the map
// once per hundredth, not once per subject.
func (l *fallbackLimiter) dropOne(now time.Time) {
	for key, whole := range l.full {
		if !whole.After(now) {
			delete(l.full, key)
		}
	}
	for key := range l.full {
		if len(l.full) <= l.maxSubjects-max(l.maxSubjects/100, 1) {
			return
		}
		delete(l.full, key)
	}
}

// size is how many budgets the limiter holds.
func (l *fallbackLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.full)
}
