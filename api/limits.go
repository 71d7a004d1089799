package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/internal/apperr"
	"feedservice/internal/ratelimit"
	"feedservice/internal/viewer"
)

// The names of the rate limits, in their Redis keys, logs and metrics.
const (
	limitMutations  = "mutations"  // per viewer, or per IP when signed out
	limitAuth       = "auth"       // signUp and logIn, per IP
	limitComplexity = "complexity" // operations' prices, per viewer, or per IP when signed out
)

// rateLimits spends each mutation field from a budget in Redis: signUp and
// logIn from the client IP's auth budget, every other mutation but logOut
// from the viewer's mutation budget (the client IP's when signed out). A refused
// field answers RATE_LIMITED with extensions.retryAfter; the rest of the
// operation runs as usual. It runs inside fieldHooks.
type rateLimits struct {
	limiter   *ratelimit.Limiter
	mutations ratelimit.Rate
	auth      ratelimit.Rate
}

// limitField spends the budget of a mutation field, then runs it.
func (l rateLimits) limitField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Object != "Mutation" {
		return next(ctx)
	}
	var err error
	switch viewer := viewer.ID(ctx); {
	case fc.Field.Name == "logOut":
		// The budget may be spent by a stolen token, which its owner's
		// logOut revokes: refusing it would keep the thief signed in. A
		// logOut revokes the token it runs with, so each costs a logIn,
		// which the auth budget bounds.
		return next(ctx)
	case fc.Field.Name == "signUp" || fc.Field.Name == "logIn":
		err = l.limiter.Allow(ctx, limitAuth, l.auth, "ip:"+clientAddress(ctx))
	case viewer != 0:
		err = l.limiter.Allow(ctx, limitMutations, l.mutations, "user:"+strconv.FormatInt(viewer, 10))
	default:
		err = l.limiter.Allow(ctx, limitMutations, l.mutations, "ip:"+clientAddress(ctx))
	}
	if err != nil {
		var refusal *apperr.Error
		if errors.As(err, &refusal) {
			noteRetryAfter(ctx, refusal.RetryAfterSeconds())
		}
		return nil, err
	}
	return next(ctx)
}

type clientKey struct{}

// clientInfo is what the HTTP layer knows of who sent a request.
type clientInfo struct {
	address    string // the client's address group (addressGroup)
	mu         sync.Mutex
	retryAfter int // the longest wait, in seconds, a refusal in the response asked for
}

// withClient notes the client's IP for the rate limits, and answers the
// longest retryAfter of a rate-limited response in a Retry-After header.
func (a *app) withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &clientInfo{address: addressGroup(a.clientIP(r))}
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r) // a websocket hijacks the writer; its errors carry retryAfter
			return
		}
		next.ServeHTTP(&retryAfterWriter{ResponseWriter: w, client: c}, r)
	})
}

// clientIP is the address the request came from. Behind trusted proxies
// (TRUSTED_PROXIES) it is the last address of X-Forwarded-For that is not
// one of them: each proxy appends who it heard from, so the addresses to
// the right of the nearest untrusted one were written by trusted proxies,
// and anything left of it may be forged by the client.
func (a *app) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !a.cfg.IsTrustedProxy(addr) {
		if forwarded := r.Header.Get("X-Forwarded-For"); forwarded != "" {
			a.warnUntrustedForwarding(host, forwarded)
		}
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: trust nothing left of it
		}
		addr = hop.Unmap()
		if !a.cfg.IsTrustedProxy(addr) {
			break
		}
	}
	return addr.String()
}

// warnUntrustedForwarding logs, at most once per RateLimitWarnInterval,
// that a peer that is not one of TRUSTED_PROXIES sent X-Forwarded-For:
// behind a proxy that TRUSTED_PROXIES does not name, every client counts
// as the proxy's one address, and its per-address limits are shared by
// all of them.
func (a *app) warnUntrustedForwarding(peer, forwarded string) {
	ok, suppressed := a.untrustedForwarding.Take(time.Now())
	if !ok {
		return
	}
	a.log.Warn("X-Forwarded-For from a peer that is not a trusted proxy: the header is ignored, and every client behind it counts as the peer's address; set TRUSTED_PROXIES if the peer is your proxy",
		"peer", peer, "forwardedFor", apperr.Quote(forwarded), "suppressed", suppressed)
}

// clientSubject is whom the per-client bounds count the client of ctx
// as: its signed-in viewer ("user:<id>"), or its address group ("ip:"
// and clientAddress) when signed out.
func clientSubject(ctx context.Context) (subject string, signedIn bool) {
	if viewer := viewer.ID(ctx); viewer != 0 {
		return "user:" + strconv.FormatInt(viewer, 10), true
	}
	return "ip:" + clientAddress(ctx), false
}

// subject is clientSubject's subject alone.
func subject(ctx context.Context) string {
	s, _ := clientSubject(ctx)
	return s
}

// clientAddress is the address group of the client of ctx, the key of
// every per-address limit.
func clientAddress(ctx context.Context) string {
	if c, ok := ctx.Value(clientKey{}).(*clientInfo); ok {
		return c.address
	}
	return "unknown"
}

// addressPrefix is the network every per-address limit counts as one
// client: an IPv4 address alone, and an IPv6 address's /64, which is one
// subscriber's network (it may hand out any of 2^64 addresses at will).
func addressPrefix(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	if addr.Is4() {
		return netip.PrefixFrom(addr, 32)
	}
	p, _ := addr.WithZone("").Prefix(64)
	return p
}

// addressGroup is the key of the client address ip in the per-address
// limits: the IPv4 address, or the IPv6 /64 as a prefix ("2001:db8::/64");
// text that is no address is its own key.
func addressGroup(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if p := addressPrefix(addr); p.Addr().Is6() {
		return p.String()
	}
	return addr.Unmap().String()
}

func noteRetryAfter(ctx context.Context, seconds int) {
	if c, ok := ctx.Value(clientKey{}).(*clientInfo); ok {
		c.mu.Lock()
		c.retryAfter = max(c.retryAfter, seconds)
		c.mu.Unlock()
	}
}

// retryAfterWriter adds the Retry-After header as the response starts,
// which is after every operation of it has run.
type retryAfterWriter struct {
	http.ResponseWriter
	client  *clientInfo
	started bool
}

func (w *retryAfterWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.client.mu.Lock()
	seconds := w.client.retryAfter
	w.client.mu.Unlock()
	if seconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
	}
}

func (w *retryAfterWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *retryAfterWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logOutAlone says whether the operation of ctx is a mutation of logOut
// alone (beside __typename), which the complexity budget lets through
// free, as rateLimits does its field: the budget it would spend is the
// one a stolen token may have spent, and the logOut revokes that token.
// Any other field, or a fragment, pays as usual.
func logOutAlone(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	op := graphql.GetOperationContext(ctx).Operation
	if op == nil || op.Operation != ast.Mutation {
		return false
	}
	logOuts := 0
	for _, sel := range op.SelectionSet {
		f, ok := sel.(*ast.Field)
		switch {
		case !ok || len(f.Directives) > 0:
			return false
		case f.Name == "logOut":
			logOuts++
		case f.Name != "__typename":
			return false
		}
	}
	return logOuts == 1
}
