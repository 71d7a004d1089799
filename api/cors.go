package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cross-origin requests (CORS) to /query from the browser origins of
// ALLOWED_ORIGINS, the same list that lets them open websockets. Nothing
// is allowed by default. The API's credential is a bearer token in the
// Authorization header, which a browser sends cross-origin only when the
// preflight allows the header; cookies play no part, but a listed origin
// also gets Access-Control-Allow-Credentials, so that a page that fetches
// with credentials: "include" works. "*" allows any origin without
// credentials: browsers refuse credentials with a wildcard.
const (
	// corsMaxAge is how long a browser may keep a preflight's answer.
	corsMaxAge = 10 * time.Minute
	// corsAllowedMethods are the methods /query answers.
	corsAllowedMethods = "GET, POST"
	// corsExposedHeaders are the response headers a page may read besides
	// the simple ones.
	corsExposedHeaders = "X-Request-ID"
)

// corsAllowedHeaders are the request headers a cross-origin page may send:
// the token, the JSON body's type, its own request id, and the W3C trace
// context a traced client continues its trace with (see tracing.go).
var corsAllowedHeaders = []string{"authorization", "content-type", "x-request-id", "traceparent", "tracestate"}

// cors answers preflights and marks the responses to allowed origins.
type cors struct {
	origins []string // as configured: "*" or scheme://host[:port]
}

// allows says whether origin is one of the configured ones.
func (c cors) allows(origin string) bool {
	for _, allowed := range c.origins {
		if allowed == "*" || strings.EqualFold(allowed, origin) {
			return true
		}
	}
	return false
}

// wildcard says whether every origin is allowed.
func (c cors) wildcard() bool { return slices.Contains(c.origins, "*") }

// handler wraps next (the /query handler).
func (c cors) handler(next http.Handler) http.Handler {
	if len(c.origins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The answer depends on Origin: caches must key on it, even the
		// answer to an origin that is refused.
		w.Header().Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" || r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r) // not cross-origin, or a websocket (checkOrigin decides)
			return
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			c.preflight(w, r, origin)
			return
		}
		if c.allows(origin) {
			c.allowOrigin(w, origin)
			w.Header().Set("Access-Control-Expose-Headers", corsExposedHeaders)
		}
		next.ServeHTTP(w, r)
	})
}

// allowOrigin names the allowed origin in the response: "*" for a
// wildcard, which browsers take only without credentials, or the origin
// itself, with credentials.
func (c cors) allowOrigin(w http.ResponseWriter, origin string) {
	if c.wildcard() {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Credentials", "true")
}

// preflight answers a browser's question whether it may send a request:
// 204 with the allowance when the origin, method and headers are all
// allowed, 403 without one (the browser then refuses the request) when not.
func (c cors) preflight(w http.ResponseWriter, r *http.Request, origin string) {
	w.Header().Add("Vary", "Access-Control-Request-Method")
	w.Header().Add("Vary", "Access-Control-Request-Headers")
	method := r.Header.Get("Access-Control-Request-Method")
	if !c.allows(origin) || (method != http.MethodGet && method != http.MethodPost) || !corsHeadersAllowed(r.Header.Get("Access-Control-Request-Headers")) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	c.allowOrigin(w, origin)
	w.Header().Set("Access-Control-Allow-Methods", corsAllowedMethods)
	w.Header().Set("Access-Control-Allow-Headers", strings.Join(corsAllowedHeaders, ", "))
	w.Header().Set("Access-Control-Max-Age", strconv.Itoa(int(corsMaxAge.Seconds())))
	w.WriteHeader(http.StatusNoContent)
}

// corsHeadersAllowed says whether every header of an
// Access-Control-Request-Headers list is one a page may send.
func corsHeadersAllowed(list string) bool {
	for _, h := range strings.Split(list, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && !slices.Contains(corsAllowedHeaders, h) {
			return false
		}
	}
	return true
}
