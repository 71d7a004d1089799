package api

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
)

// TestSecurityHeaders: the embedded pages (GraphiQL at / and /graphiql/,
// the app at /app/) come with a Content-Security-Policy that refuses
// framing and scripts from anywhere else, X-Frame-Options DENY, nosniff and
// a Referrer-Policy; the API's responses with nosniff and the
// Referrer-Policy. (That the pages still work under their policy is
// TestBrowserClients'.)
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	pages := map[string]string{"/": graphiqlCSP, "/graphiql/": graphiqlCSP, "/app/": appCSP, "/app/u/ann": appCSP}
	for path, csp := range pages {
		res, _ := errsGet(t, s.URL+path, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, res.StatusCode)
		}
		h := res.Header
		if got := h.Get("Content-Security-Policy"); got != csp {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, csp)
		}
		for _, want := range []string{"script-src 'self';", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("the policy of %s lacks %s", path, want)
			}
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "strict-origin-when-cross-origin" {
			t.Errorf("GET %s: headers %v", path, h)
		}
	}
	res, _ := errsGet(t, s.URL+"/query?query="+strings.ReplaceAll("{ __typename }", " ", "%20"), nil)
	if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") == "" {
		t.Errorf("GET /query: headers %v", res.Header)
	}
}

// TestMetricsNotPublic: /metrics is not on the public listener; the
// metrics listener (METRICS_ADDR) has it.
func TestMetricsNotPublic(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	if res, _ := errsGet(t, s.URL+"/metrics", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the public listener: status %d", res.StatusCode)
	}
	if res, body := errsGet(t, s.MetricsURL+"/metrics", nil); res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("# TYPE feed_outbox_lag_events ")) {
		t.Errorf("GET /metrics on the metrics listener: status %d", res.StatusCode)
	}
	if ap, err := netip.ParseAddrPort(settings.DefaultMetricsAddr); err != nil || !ap.Addr().IsLoopback() {
		t.Errorf("METRICS_ADDR defaults to %q, want a loopback address", settings.DefaultMetricsAddr)
	}
}

// TestReadyzHidesBackendErrors: a backend that fails makes /readyz 503 with
// no word of the backend's error, which goes to the log.
func TestReadyzHidesBackendErrors(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	s := newTestServerWithLog(t, backendEmbedded, slog.New(slog.NewTextHandler(&log, nil)))
	s.app.redis.Close() // every Redis call now fails with "redis: client is closed"
	res, err := http.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || string(body) != "not ready\n" {
		t.Errorf("GET /readyz with Redis gone: status %d, body %q", res.StatusCode, body)
	}
	if !strings.Contains(log.String(), "client is closed") {
		t.Errorf("the backend's error is not in the log:\n%s", log.String())
	}
}

// TestQueryAnswersNotStored: every answer of /query, by GET (cacheable by
// its URL otherwise) or POST, data or refusal, says no cache may keep it.
func TestQueryAnswersNotStored(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	get, _ := errsGet(t, s.URL+"/query?query="+strings.ReplaceAll("{ __typename }", " ", "%20"), nil)
	post, err := http.Post(s.URL+"/query", "application/json", strings.NewReader(`{"query": "{ __typename }"}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	tooLarge, err := http.Post(s.URL+"/query", "application/json", bytes.NewReader(make([]byte, maxRequestBodyBytes+1)))
	if err != nil {
		t.Fatal(err)
	}
	tooLarge.Body.Close()
	for what, res := range map[string]*http.Response{"GET": get, "POST": post, "a refused POST": tooLarge} {
		if got := res.Header.Get("Cache-Control"); got != "private, no-store" {
			t.Errorf("%s /query (status %d): Cache-Control %q, want private, no-store", what, res.StatusCode, got)
		}
	}
}

// TestSuggestionsFollowIntrospection: with introspection off, validation's
// errors name no field, argument, type or input field of the schema the
// document did not ("Did you mean ...?"); with it on, they do.
func TestSuggestionsFollowIntrospection(t *testing.T) {
	t.Parallel()
	typos := []string{
		`{ viewer { usernam } }`,
		`{ user(usernam: "ann") { id } }`,
		`{ viewer { ...F } } fragment F on Usr { id }`,
		`mutation { signUp(input: {usernam: "ann", password: "long enough pw"}) { token } }`,
		`{ viewer { followers(first: 1) { edgs { cursor } } } }`,
	}
	for _, introspection := range []bool{false, true} {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.Introspection = introspection })
		for _, q := range typos {
			r := s.anon().mustFail(t, "BAD_USER_INPUT", q, nil)
			suggests := false
			for _, e := range r.Errors {
				suggests = suggests || strings.Contains(e.Message, "Did you mean")
			}
			if suggests == !introspection {
				t.Errorf("introspection %v, %s: %+v", introspection, q, r.Errors)
			}
		}
	}
}

// TestValidationMessagesFollowIntrospection: with introspection off, a
// validation error names no type, field, argument or input field that the
// document did not write (a missing required argument or input field, the
// type a field or a variable's position expects), but still says what is
// wrong and where; with it on, gqlparser's full message is sent.
func TestValidationMessagesFollowIntrospection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		doc        string
		leaks      []string // named by the full message, not by the document
		off, fully string   // in the message with introspection off, on
	}{
		{`mutation { signUp(input: {password: "long enough pw"}) { token } }`, []string{"SignUpInput", "username", "String"}, "required input field is missing", `"SignUpInput.username"`},
		{`{ user { id } }`, []string{"username", "String"}, "required argument is missing", `argument "username"`},
		{`{ viewer }`, []string{"User"}, `"viewer" must have a selection of subfields`, `of type "User"`},
		{`{ viewer { id { x } } }`, []string{`"ID"`}, `Cannot query field "x"`, `on type "ID"`},
		{`{ viewer { usernam } }`, []string{"User"}, `Cannot query field "usernam"`, `on type "User"`},
		{`{ viewer { timeline(top: 3) { totalCount } } }`, []string{"User", `"timeline"`, "User.timeline"}, `Unknown argument "top"`, `"User.timeline"`},
		{`query($n: String) { viewer { timeline(first: $n) { totalCount } } }`, []string{"Int"}, `"$n" is not of the type`, `expecting type "Int"`},
		{`{ viewer { timeline(first: "x") { totalCount } } }`, []string{"Int"}, "not of the type expected", `Int cannot represent`},
		{`{ viewer { ... on Post { id } } }`, []string{"User"}, "cannot be spread here", `of type "User"`},
	}
	// A variable's value missing a required input field, and one with an
	// input field of the wrong type: the path is the client's, the
	// message does not name the field's type or the missing field.
	const signUpDoc = `mutation($i: SignUpInput!) { signUp(input: $i) { token } }`
	variables := []struct {
		value      map[string]any
		leaks      []string
		off, fully string
	}{
		{map[string]any{"password": "long enough pw"}, []string{"username"}, "required input field is missing", "must be defined"},
		{map[string]any{"username": true, "password": "long enough pw"}, []string{"String"}, "not of the type expected", "as String"},
	}
	for _, introspection := range []bool{false, true} {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.Introspection = introspection })
		for _, v := range variables {
			r := s.anon().mustFail(t, "BAD_USER_INPUT", signUpDoc, map[string]any{"i": v.value})
			e := r.Errors[0]
			where := fmt.Sprint(e.Path)
			want := v.fully
			if !introspection {
				want = v.off
				for _, leak := range v.leaks {
					if strings.Contains(e.Message, leak) || strings.Contains(where, leak) {
						t.Errorf("introspection off, $i = %v: %q at %s names %q", v.value, e.Message, where, leak)
					}
				}
			}
			if !strings.Contains(e.Message, want) {
				t.Errorf("introspection %v, $i = %v: %q does not say %q", introspection, v.value, e.Message, want)
			}
		}
		for _, c := range cases {
			r := s.anon().mustFail(t, "BAD_USER_INPUT", c.doc, nil)
			if r.Status != http.StatusUnprocessableEntity {
				t.Errorf("introspection %v, %s: status %d, want 422", introspection, c.doc, r.Status)
			}
			e := r.Errors[0]
			if len(e.Locations) == 0 {
				t.Errorf("introspection %v, %s: %q has no location", introspection, c.doc, e.Message)
			}
			want := c.fully
			if !introspection {
				want = c.off
				for _, leak := range c.leaks {
					if strings.Contains(e.Message, leak) {
						t.Errorf("introspection off, %s: %q names %q", c.doc, e.Message, leak)
					}
				}
			}
			if !strings.Contains(e.Message, want) {
				t.Errorf("introspection %v, %s: %q does not say %q", introspection, c.doc, e.Message, want)
			}
		}
	}
}

// TestEmbeddedRedisNeedsItsPassword: the embedded Redis refuses a client
// without the password the server made at start (any local process could
// reach its loopback port); the server's own client is let in.
func TestEmbeddedRedisNeedsItsPassword(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	own := s.app.redis.(*redis.Client)
	if err := own.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("the server's client: %v", err)
	}
	if len(own.Options().Password) < 32 {
		t.Fatalf("the embedded Redis's password is %d characters", len(own.Options().Password))
	}
	stranger := redis.NewClient(&redis.Options{Addr: own.Options().Addr, MaxRetries: -1})
	defer stranger.Close()
	for _, cmd := range [][]any{{"ping"}, {"set", "cache:post:1", "forged"}, {"del", "rate:x"}} {
		if err := stranger.Do(t.Context(), cmd...).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("%v without the password: %v, want NOAUTH", cmd, err)
		}
	}
	wrong := redis.NewClient(&redis.Options{Addr: own.Options().Addr, Password: "guess", MaxRetries: -1})
	defer wrong.Close()
	if err := wrong.Ping(t.Context()).Err(); err == nil {
		t.Errorf("a wrong password was let in")
	}
}

// TestUntrustedForwardingWarned: X-Forwarded-For from a peer that is not a
// trusted proxy is ignored, and said so in the log once per
// RATE_LIMIT_WARN_INTERVAL, not once per request.
func TestUntrustedForwardingWarned(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	s := newTestServerWithLog(t, backendEmbedded, slog.New(slog.NewTextHandler(&log, nil)), func(c *settings.Settings) {
		c.RateLimitWarnInterval = time.Hour
	})
	for range 3 {
		res, _ := limitsPost(t, s, "", http.Header{"X-Forwarded-For": {"203.0.113.7"}}, []byte(`{"query": "{ __typename }"}`))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	if n := strings.Count(log.String(), "X-Forwarded-For from a peer that is not a trusted proxy"); n != 1 {
		t.Fatalf("%d warnings of untrusted forwarding in the log, want 1:\n%s", n, log.String())
	}
}
