package feed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"feedservice/feed/apperr"

	"github.com/go-redis/redis_rate/v10"
)

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

// Allow spends one action of subject's budget under the named limit, and
// answers RATE_LIMITED, with how long to wait, when the budget is spent.
// The budget lives in Redis (a GCRA, github.com/go-redis/redis_rate), so
// every instance spends from the same one. The whole budget may be spent
// at once (the burst is the count); it then refills evenly over the period.
//
// When Redis does not answer, Allow spends from a budget of the same rate
// kept in this process (fallbackLimiter), counts the action in
// feed_rate_limit_fallback_total and warns, at most once every
// RateLimitWarnInterval (with the count of the warnings held back). So
// while Redis is away each instance holds every subject to the rate on its
// own: with n instances a subject may spend up to n budgets. Refusing
// everything instead would take the whole API down with Redis, and letting
// everything through would open log-in to password guessing. The
// in-process budgets are not carried over to Redis when it is back.
func (e *Engine) Allow(ctx context.Context, limit string, rate Rate, subject string) error {
	if rate.Off() {
		return nil
	}
	res, err := e.limiter.Allow(ctx, e.keys.RateLimit(limit, subject),
		redis_rate.Limit{Rate: rate.Count, Burst: rate.Count, Period: rate.Period})
	var retryAfter time.Duration
	switch {
	case err != nil:
		e.metrics.RateLimitFallback.Inc()
		if ok, suppressed := e.fallbackWarn.take(time.Now()); ok {
			e.log.Warn("rate limit checked in this process only: redis failed", "limit", limit, "err", err, "suppressed", suppressed)
		}
		if retryAfter = e.fallback.allow(limit+":"+subject, rate, time.Now()); retryAfter <= 0 {
			return nil
		}
	case res.Allowed > 0:
		return nil
	default:
		retryAfter = res.RetryAfter
	}
	e.metrics.RateLimited.WithLabelValues(limit).Inc()
	return &apperr.Error{
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
	interval := rate.Period / time.Duration(rate.Count)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full == nil {
		l.full = map[string]time.Time{}
	}
	whole, ok := l.full[key]
	if !ok || whole.Before(now) {
		whole = now
	}
	next := whole.Add(interval)
	if wait := next.Sub(now) - rate.Period; wait > 0 {
		return wait
	}
	if !ok && len(l.full) >= l.maxSubjects {
		l.dropOne(now)
	}
	l.full[key] = next
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

// warnThrottle lets a warning through at most once per every; the zero
// value lets every one through.
type warnThrottle struct {
	every      time.Duration
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// take says whether a warning may be written at now, and how many were
// held back since the last one written.
func (w *warnThrottle) take(now time.Time) (ok bool, suppressed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.last.IsZero() && now.Sub(w.last) < w.every {
		w.suppressed++
		return false, 0
	}
	suppressed, w.last, w.suppressed = w.suppressed, now, 0
	return true, suppressed
}
