package feed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

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
// When Redis does not answer, Allow lets the action through, counts it in
// feed_rate_limit_unchecked_total and warns, at most once every
// RateLimitWarnInterval (with the count of the warnings held back): a
// limiter that refused everything while Redis is away would take the whole
// API down with it, and MySQL still serves every request.
func (e *Engine) Allow(ctx context.Context, limit string, rate Rate, subject string) error {
	if rate.Off() {
		return nil
	}
	res, err := e.limiter.Allow(ctx, e.keys.rateLimit(limit, subject),
		redis_rate.Limit{Rate: rate.Count, Burst: rate.Count, Period: rate.Period})
	if err != nil {
		e.metrics.rateLimitUnchecked.Inc()
		if ok, suppressed := e.uncheckedWarn.take(time.Now()); ok {
			e.log.Warn("rate limit not checked: redis failed; allowing", "limit", limit, "err", err, "suppressed", suppressed)
		}
		return nil
	}
	if res.Allowed > 0 {
		return nil
	}
	e.metrics.rateLimited.WithLabelValues(limit).Inc()
	return &Error{
		Code:       CodeRateLimited,
		Message:    fmt.Sprintf("too many requests: at most %d per %s (%s); retry later", rate.Count, rate.Period, limit),
		RetryAfter: res.RetryAfter,
	}
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
