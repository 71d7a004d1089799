package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"feedservice/api/settings"
)

const (
	corsApp   = "https://app.example"
	corsOther = "https://evil.example"
)

// corsDo sends one request to /query over HTTP and returns the response
// with its body read.
func corsDo(t *testing.T, s *testServer, method, origin string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/query", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// corsPreflight is what a browser sends before a cross-origin POST of JSON
// with a bearer token.
func corsPreflight(t *testing.T, s *testServer, origin, method, headers string) *http.Response {
	t.Helper()
	res, _ := corsDo(t, s, http.MethodOptions, origin, map[string]string{
		"Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}, "")
	return res
}

func corsVaries(res *http.Response) bool {
	for _, v := range res.Header.Values("Vary") {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), "Origin") {
				return true
			}
		}
	}
	return false
}

func corsWantRefused(t *testing.T, stage string, res *http.Response) {
	t.Helper()
	for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
		if v := res.Header.Get(h); v != "" {
			t.Errorf("%s: %s: %q, want none", stage, h, v)
		}
	}
}

const corsQuery = `{"query":"{ viewer { id } }"}`

// TestCORSNothingAllowedByDefault: without ALLOWED_ORIGINS a preflight and
// a cross-origin request get no CORS allowance, so a browser refuses them.
func TestCORSNothingAllowedByDefault(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backends()[0])
	corsWantRefused(t, "preflight", corsPreflight(t, s, corsApp, "POST", "content-type, authorization"))
	res, body := corsDo(t, s, http.MethodPost, corsApp, map[string]string{"Content-Type": "application/json"}, corsQuery)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"viewer":null`) {
		t.Fatalf("cross-origin POST: %d %s, want the answer (the browser, not the server, withholds it)", res.StatusCode, body)
	}
	corsWantRefused(t, "cross-origin POST", res)
}

// TestCORSAllowedOrigin: with ALLOWED_ORIGINS set, a preflight from a
// listed origin is answered 204 with the origin echoed, credentials, the
// methods and headers, and Vary: Origin; an unlisted origin, method or
// header gets 403 without any allowance; the request that follows is
// answered with the allowance; the same list lets the origin open a
// websocket and keeps the other out.
func TestCORSAllowedOrigin(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backends()[0], func(c *settings.Settings) { c.AllowedOrigins = "http://localhost:3000, " + corsApp })
	token := s.signUp(t, "cors_user").Token

	res := corsPreflight(t, s, corsApp, "POST", "content-type, authorization, traceparent")
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight of %s: %d, want 204", corsApp, res.StatusCode)
	}
	for h, want := range map[string]string{
		"Access-Control-Allow-Origin": corsApp, "Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Methods": "GET, POST",
		"Access-Control-Allow-Headers": "authorization, content-type, x-request-id, traceparent, tracestate", "Access-Control-Max-Age": "600",
	} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("preflight %s: %q, want %q", h, got, want)
		}
	}
	if !corsVaries(res) {
		t.Errorf("preflight Vary: %q, want Origin in it", res.Header.Values("Vary"))
	}
	if res := corsPreflight(t, s, corsApp, "GET", ""); res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != corsApp {
		t.Errorf("preflight of a GET without headers: %d %q, want 204 and the origin", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}

	for name, res := range map[string]*http.Response{
		"an unlisted origin":       corsPreflight(t, s, corsOther, "POST", "content-type, authorization"),
		"the origin with a suffix": corsPreflight(t, s, corsApp+".evil.example", "POST", "content-type"),
		"the method PUT":           corsPreflight(t, s, corsApp, "PUT", "content-type"),
		"a header not allowed":     corsPreflight(t, s, corsApp, "POST", "content-type, x-secret"),
	} {
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("preflight of %s: %d, want 403", name, res.StatusCode)
		}
		corsWantRefused(t, "preflight of "+name, res)
		if !corsVaries(res) {
			t.Errorf("preflight of %s: Vary %q, want Origin in it", name, res.Header.Values("Vary"))
		}
	}

	res, body := corsDo(t, s, http.MethodPost, corsApp, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + token}, corsQuery)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"viewer":{"id":`) {
		t.Fatalf("POST from %s: %d %s", corsApp, res.StatusCode, body)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != corsApp || res.Header.Get("Access-Control-Allow-Credentials") != "true" ||
		res.Header.Get("Access-Control-Expose-Headers") != "X-Request-ID" || !corsVaries(res) {
		t.Errorf("POST from %s: headers %v, want the origin echoed, credentials, X-Request-ID exposed, Vary: Origin", corsApp, res.Header)
	}
	res, _ = corsDo(t, s, http.MethodPost, corsOther, map[string]string{"Content-Type": "application/json"}, corsQuery)
	corsWantRefused(t, "POST from "+corsOther, res)
	res, _ = corsDo(t, s, http.MethodPost, "", map[string]string{"Content-Type": "application/json"}, corsQuery)
	corsWantRefused(t, "POST without Origin", res)
	if !corsVaries(res) {
		t.Errorf("POST without Origin: Vary %q, want Origin in it (a cache must not serve it to a page)", res.Header.Values("Vary"))
	}

	wsURL := "ws" + strings.TrimPrefix(s.URL, "http") + "/query"
	for origin, want := range map[string]int{corsApp: http.StatusSwitchingProtocols, corsOther: http.StatusForbidden} {
		conn, res, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {origin}, "Sec-WebSocket-Protocol": {"graphql-transport-ws"}})
		if conn != nil {
			conn.Close()
		}
		if res == nil || res.StatusCode != want {
			t.Errorf("websocket from %s: %v %v, want %d", origin, res, err, want)
		}
	}
}

// TestCORSWildcard: ALLOWED_ORIGINS=* allows any origin as "*", and never
// with credentials, which browsers refuse with a wildcard.
func TestCORSWildcard(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backends()[0], func(c *settings.Settings) { c.AllowedOrigins = "*" })
	res := corsPreflight(t, s, corsOther, "POST", "content-type, authorization")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight with *: %d %v, want 204, origin *, no credentials", res.StatusCode, res.Header)
	}
	res, _ = corsDo(t, s, http.MethodPost, corsOther, map[string]string{"Content-Type": "application/json"}, corsQuery)
	if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("POST with *: %v, want origin *, no credentials", res.Header)
	}
}
