package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/api/sockets"
	"feedservice/dataloader"
	"feedservice/graph"
	"feedservice/internal/testenv"
	"feedservice/internal/viewer"
	"feedservice/resolvers"
)

// Tests of what an operator sees: /metrics after real traffic over HTTP and
// websockets (on MariaDB and Redis), the request id in the logs and the
// response, and the example Grafana dashboard against the metrics served.

// scrape reads s's /metrics.
func scrape(t *testing.T, s *testServer) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(s.MetricsURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// sample is the value of the series of family name with exactly labels
// (a histogram's count), or ok false when there is no such series.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (value float64, ok bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// expectSample fails unless /metrics holds the series with value want.
func expectSample(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := sample(families, name, labels)
	if !ok {
		t.Fatalf("/metrics has no %s%v; it has %v", name, labels, seriesOf(families[name]))
	}
	if got != want {
		t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// expectPositive fails unless the series exists with a value above zero.
func expectPositive(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) {
	t.Helper()
	if got, ok := sample(families, name, labels); !ok || got <= 0 {
		t.Fatalf("%s%v = %v (present %v), want > 0", name, labels, got, ok)
	}
}

func seriesOf(f *dto.MetricFamily) []string {
	var out []string
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		out = append(out, "{"+strings.Join(labels, ",")+"}")
	}
	return out
}

// eventually scrapes s until check accepts the metrics, at most within.
func eventually(t *testing.T, s *testServer, within time.Duration, what string, check func(map[string]*dto.MetricFamily) bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scale(within))
	for {
		if check(scrape(t, s)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gauge0 tells whether the series is present and zero.
func gauge0(families map[string]*dto.MetricFamily, name string, labels map[string]string) bool {
	v, ok := sample(families, name, labels)
	return ok && v == 0
}

// metricsTraffic sends what every metric test needs: sign-ups (mutations),
// a follow, a post, a feed read (a query), a mutation refused with a code,
// and a document that does not parse.
func metricsTraffic(t *testing.T, s *testServer) (alice *client) {
	t.Helper()
	alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
	liveFollow(t, alice, bob)
	livePost(t, bob, "hello")
	if edges, _ := liveFeed(t, alice, map[string]any{"first": 10}); len(edges) != 1 {
		t.Fatalf("alice's feed holds %d entries, want 1", len(edges))
	}
	alice.mustFail(t, "BAD_USER_INPUT", `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": alice.ID})
	alice.mustFail(t, "BAD_USER_INPUT", `{ feed(first: 1) { nope } }`, nil)
	return alice
}

// After queries, mutations (one refused with a code), a document error and
// subscriptions on both websocket protocols, /metrics counts each by its
// labels; once the sockets close, the open gauges are back to zero.
func TestMetricsAfterTraffic(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	alice := metricsTraffic(t, s)

	m := scrape(t, s)
	// signUp twice, follow twice (one refused), createPost: five mutations.
	expectSample(t, m, "graphql_operations_total", map[string]string{"type": "mutation"}, 5)
	expectSample(t, m, "graphql_operations_total", map[string]string{"type": "query"}, 1)
	expectSample(t, m, "graphql_operation_duration_seconds", map[string]string{"type": "mutation"}, 5)
	expectSample(t, m, "graphql_resolver_duration_seconds", map[string]string{"object": "Query", "field": "feed"}, 1)
	expectSample(t, m, "graphql_resolver_duration_seconds", map[string]string{"object": "Mutation", "field": "follow"}, 2)
	expectSample(t, m, "graphql_resolver_duration_seconds", map[string]string{"object": "Mutation", "field": "signUp"}, 2)
	expectSample(t, m, "graphql_resolver_errors_total", map[string]string{"object": "Mutation", "field": "follow", "code": "BAD_USER_INPUT"}, 1)
	// The refused follow and the document error.
	expectSample(t, m, "graphql_errors_total", map[string]string{"code": "BAD_USER_INPUT"}, 2)
	// Plain fields are not timed: PageInfo's are struct fields.
	if _, ok := sample(m, "graphql_resolver_duration_seconds", map[string]string{"object": "PageInfo", "field": "hasNextPage"}); ok {
		t.Fatal("a plain field (PageInfo.hasNextPage) was timed as a resolver")
	}
	expectPositive(t, m, "feed_reads_total", map[string]string{"path": s.feedReadPath(m)})
	expectPositive(t, m, "redis_pool_connections", nil)
	expectPositive(t, m, "redis_pool_misses_total", nil)
	expectPositive(t, m, "go_sql_open_connections", map[string]string{"db_name": "feed"})
	expectPositive(t, m, "go_goroutines", nil)

	modern := liveConnect(t, s, liveTransportWS, alice.Token)
	legacy := liveConnect(t, s, liveLegacyWS, alice.Token)
	id1, id2 := modern.subscribe(liveUnreadSub), legacy.subscribe(liveUnreadSub)
	modern.firstCount(id1, 5*time.Second, "modern socket")
	legacy.firstCount(id2, 5*time.Second, "legacy socket")

	m = scrape(t, s)
	for _, proto := range []string{liveTransportWS, liveLegacyWS} {
		expectSample(t, m, "websocket_connections_open", map[string]string{"protocol": proto}, 1)
		expectSample(t, m, "websocket_connections_total", map[string]string{"protocol": proto}, 1)
	}
	expectSample(t, m, "graphql_subscriptions_open", nil, 2)
	expectSample(t, m, "graphql_operations_total", map[string]string{"type": "subscription"}, 2)
	expectSample(t, m, "graphql_resolver_duration_seconds", map[string]string{"object": "Subscription", "field": "unreadCount"}, 2)

	// A subscription past the cap per connection is refused as it starts.
	for range maxSubscriptionsPerConnection - 1 {
		legacy.firstCount(legacy.subscribe(liveUnreadSub), 5*time.Second, "legacy socket")
	}
	refused := legacy.subscribe(liveUnreadSub)
	if res, end, err := legacy.event(refused, 5*time.Second); err != nil || liveErrorCode(res, end) != "RATE_LIMITED" {
		t.Fatalf("subscription %d: got %+v %v %v, want RATE_LIMITED", maxSubscriptionsPerConnection+1, res, end, err)
	}
	m = scrape(t, s)
	expectSample(t, m, "graphql_errors_total", map[string]string{"code": "RATE_LIMITED"}, 1)
	expectSample(t, m, "graphql_resolver_errors_total", map[string]string{"object": "Subscription", "field": "unreadCount", "code": "RATE_LIMITED"}, 1)
	eventually(t, s, 5*time.Second, "the refused subscription leaves the gauge", func(m map[string]*dto.MetricFamily) bool {
		v, _ := sample(m, "graphql_subscriptions_open", nil)
		return v == 1+maxSubscriptionsPerConnection
	})

	// One subscription stops, its socket stays open.
	modern.complete(id1)
	eventually(t, s, 5*time.Second, "the stopped subscription leaves the gauge", func(m map[string]*dto.MetricFamily) bool {
		v, _ := sample(m, "graphql_subscriptions_open", nil)
		return v == maxSubscriptionsPerConnection
	})

	modern.hangUp()
	legacy.hangUp()
	eventually(t, s, 5*time.Second, "the closed sockets leave the gauges", func(m map[string]*dto.MetricFamily) bool {
		return gauge0(m, "websocket_connections_open", map[string]string{"protocol": liveTransportWS}) &&
			gauge0(m, "websocket_connections_open", map[string]string{"protocol": liveLegacyWS}) &&
			gauge0(m, "graphql_subscriptions_open", nil)
	})
	expectSample(t, scrape(t, s), "websocket_closes_total", map[string]string{"code": "1000"}, 2)
}

// feedReadPath is the feed_reads_total path the one feed read took: the
// suite runs in every FEED_MODE, and pull mode reads from MySQL.
func (s *testServer) feedReadPath(m map[string]*dto.MetricFamily) string {
	for _, path := range []string{"inbox", "rebuild", "pull"} {
		if _, ok := sample(m, "feed_reads_total", map[string]string{"path": path}); ok {
			return path
		}
	}
	return "none"
}

// A socket refused at connection_init is counted with the code it was
// closed with; one whose connection_init payload is not a JSON object
// (which gqlgen leaves open) is closed and leaves the open gauge; one whose
// client vanished without a close frame is counted as 1006.
func TestMetricsWebsocketCloses(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	user := s.signUp(t, "user")

	vanished := liveConnect(t, s, liveTransportWS, user.Token)
	vanished.drop()
	eventually(t, s, 5*time.Second, "the vanished socket is counted", func(m map[string]*dto.MetricFamily) bool {
		v, _ := sample(m, "websocket_closes_total", map[string]string{"code": "1006"})
		return v == 1
	})

	unsigned := liveDial(t, s, liveTransportWS)
	unsigned.init("")
	unsigned.expectClose(sockets.CloseUnauthorized, 5*time.Second)

	odd := liveDial(t, s, liveLegacyWS)
	odd.mustSend(liveMsg{Type: "connection_init", Payload: json.RawMessage(`[1]`)})
	if _, _, ok := odd.closeStatus(10 * time.Second); !ok {
		t.Fatal("a socket whose connection_init payload is not an object stays open")
	}

	eventually(t, s, 5*time.Second, "both refused sockets leave the gauges", func(m map[string]*dto.MetricFamily) bool {
		return gauge0(m, "websocket_connections_open", map[string]string{"protocol": liveTransportWS}) &&
			gauge0(m, "websocket_connections_open", map[string]string{"protocol": liveLegacyWS})
	})
	m := scrape(t, s)
	expectSample(t, m, "websocket_closes_total", map[string]string{"code": "4401"}, 1)
	expectSample(t, m, "websocket_closes_total", map[string]string{"code": "1006"}, 2)
	expectSample(t, m, "websocket_connections_total", map[string]string{"protocol": liveTransportWS}, 2)
	expectSample(t, m, "websocket_connections_total", map[string]string{"protocol": liveLegacyWS}, 1)
}

// syncBuffer is a log sink that tests read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLoggedTestServer is newTestServer on real MariaDB and Redis, with its
// log written as JSON lines to w.
func newLoggedTestServer(t *testing.T, w io.Writer) *testServer {
	t.Helper()
	return newTestServerWithLog(t, backendReal, slog.New(slog.NewJSONHandler(w, nil)))
}

// An internal error is logged with the request's id: the client's
// X-Request-ID when it is valid (echoed in the response), a new one when it
// is too long or holds other characters.
func TestRequestIDInLogs(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	s := newLoggedTestServer(t, &logs)
	alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
	liveFollow(t, alice, bob)
	livePost(t, bob, "hello")
	s.settle(t)
	// The posts table goes away: creating a post is an internal error, and
	// so is building alice's feed (she has not read it yet).
	if err := s.app.store.DB().Exec("RENAME TABLE posts TO posts_gone").Error; err != nil {
		t.Fatal(err)
	}
	post := func(requestID string) (sent string, line map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": `mutation { createPost(input: {body: "x"}) { post { id } } }`})
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		req.Header.Set("X-Request-ID", requestID)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(raw), "INTERNAL_SERVER_ERROR") {
			t.Fatalf("want an internal error, got %s", raw)
		}
		sent = res.Header.Get("X-Request-ID")
		if sent == "" || !strings.Contains(string(raw), sent) {
			t.Fatalf("response id %q missing from the header or the message %s", sent, raw)
		}
		for l := range strings.Lines(logs.String()) {
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "internal error" && rec["request_id"] == sent {
				return sent, rec
			}
		}
		t.Fatalf("no internal error logged with request_id %q; log:\n%s", sent, logs.String())
		return "", nil
	}

	longest := strings.Repeat("a", maxRequestIDBytes-4) + "-1.:"
	if sent, line := post(longest); sent != longest || !strings.Contains(line["err"].(string), "posts") {
		t.Fatalf("a valid id of %d bytes came back as %q (log %v)", maxRequestIDBytes, sent, line)
	}
	tooLong := strings.Repeat("b", maxRequestIDBytes+1)
	if sent, _ := post(tooLong); sent == tooLong || !validRequestID(sent) {
		t.Fatalf("an id of %d bytes was kept, or replaced by %q", maxRequestIDBytes+1, sent)
	}
	forged := `x" level=ERROR msg="forged`
	if sent, _ := post(forged); sent == forged || !validRequestID(sent) {
		t.Fatalf("an id with quotes and spaces was kept, or replaced by %q", sent)
	}
	// Each request without an id of its own gets a different one.
	if a, b := scrapeIDs(t, s); a == b {
		t.Fatalf("two requests got the same id %q", a)
	}

	// A websocket operation logs with the id of the socket's request: its
	// feed cannot be built without the posts table.
	d := websocket.Dialer{Subprotocols: []string{liveTransportWS}, HandshakeTimeout: testenv.Scale(5 * time.Second)}
	ws, _, err := d.Dial(liveWSURL(s), http.Header{"X-Request-Id": {"socket-1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	payload, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + alice.Token})
	added, _ := json.Marshal(map[string]string{"query": liveAddedSub})
	unread, _ := json.Marshal(map[string]string{"query": liveUnreadSub})
	for _, m := range []liveMsg{{Type: "connection_init", Payload: payload}, {Type: "subscribe", ID: "1", Payload: added}, {Type: "subscribe", ID: "2", Payload: unread}} {
		if err := ws.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for !loggedWithID(logs.String(), "socket-1") {
		if time.Now().After(deadline) {
			t.Fatalf("the websocket operation's failure was not logged with request_id socket-1; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loggedWithID tells whether a warning or an error was logged with id.
func loggedWithID(log, id string) bool {
	for l := range strings.Lines(log) {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["request_id"] == id && (rec["level"] == "WARN" || rec["level"] == "ERROR") {
			return true
		}
	}
	return false
}

// scrapeIDs are the ids given to two requests that sent none.
func scrapeIDs(t *testing.T, s *testServer) (string, string) {
	t.Helper()
	var ids []string
	for range 2 {
		res, err := http.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ids = append(ids, res.Header.Get("X-Request-ID"))
	}
	return ids[0], ids[1]
}

// grafanaDashboard is deploy/grafana/feed-service.json, as far as the test reads it.
type grafanaDashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var (
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlNames    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlWords    = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}
)

// promqlMetricNames lists the metric names an expression reads: names that
// are not functions, keywords, labels, ranges or numbers.
func promqlMetricNames(expr string) []string {
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlGrouping.ReplaceAllString(expr, " ")
	var names []string
	for _, loc := range promqlNames.FindAllStringIndex(expr, -1) {
		name, rest := expr[loc[0]:loc[1]], strings.TrimLeft(expr[loc[1]:], " ")
		if strings.HasPrefix(rest, "(") || slices.Contains(promqlWords, name) {
			continue // a function or a keyword
		}
		if loc[0] > 0 && (expr[loc[0]-1] >= '0' && expr[loc[0]-1] <= '9' || expr[loc[0]-1] == '.') {
			continue // the exponent of a number such as 1e3
		}
		names = append(names, name)
	}
	return names
}

// Every metric the example dashboard charts is one the server exports, so
// renaming a metric without the dashboard fails here.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/grafana/feed-service.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	s := newTestServer(t, backendReal)
	alice := metricsTraffic(t, s)
	ws := liveConnect(t, s, liveTransportWS, alice.Token)
	ws.firstCount(ws.subscribe(liveUnreadSub), 5*time.Second, "dashboard traffic")
	ws.hangUp()
	eventually(t, s, 5*time.Second, "the socket closes", func(m map[string]*dto.MetricFamily) bool {
		return gauge0(m, "websocket_connections_open", map[string]string{"protocol": liveTransportWS})
	})

	exported := map[string]bool{}
	for name, f := range scrape(t, s) {
		exported[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY {
			exported[name+"_bucket"], exported[name+"_sum"], exported[name+"_count"] = true, true, true
		}
	}
	charted := 0
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			names := promqlMetricNames(target.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: no metric found in %q", p.Title, target.Expr)
			}
			for _, name := range names {
				charted++
				if !exported[name] {
					t.Errorf("panel %q charts %s, which /metrics does not export", p.Title, name)
				}
			}
		}
	}
	if charted < 20 {
		t.Fatalf("the dashboard charts %d metrics; its panels were not read", charted)
	}
}

// The expression reader finds the metrics, and only them.
func TestPromQLMetricNames(t *testing.T) {
	t.Parallel()
	got := promqlMetricNames(`histogram_quantile(0.99, sum by (le, object, field) (rate(graphql_resolver_duration_seconds_bucket{job=~"$job"}[$__rate_interval]))) / on (instance) group_left up * 1e3 and feed_reads_total`)
	want := []string{"graphql_resolver_duration_seconds_bucket", "up", "feed_reads_total"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// BenchmarkFeedPageMetrics reads a feed page of 20 posts (with authors)
// through the GraphQL handler in process, without and with the metrics
// extension, to show what measuring operations and resolvers costs.
//
//	go test -run '^$' -bench FeedPageMetrics -benchmem .
func BenchmarkFeedPageMetrics(b *testing.B) {
	s := newTestServer(b, backendReal)
	var tokens [2]string
	var ids [2]string
	for i, name := range []string{"reader", "author"} {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		benchDo(b, s.app.handler(), "", `mutation($u: String!) { signUp(input: {username: $u, password: "password-1234"}) { token user { id } } }`, map[string]any{"u": name}, &out)
		tokens[i], ids[i] = out.SignUp.Token, out.SignUp.User.ID
	}
	benchDo(b, s.app.handler(), tokens[0], `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": ids[1]}, nil)
	for i := range 20 {
		benchDo(b, s.app.handler(), tokens[1], `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": "post " + strconv.Itoa(i)}, nil)
	}
	s.settle(b)
	const page = `{ feed(first: 20) { edges { cursor node { addedAt post { id body createdAt author { id username displayName followerCount } } } } pageInfo { hasNextPage endCursor } } }`
	for _, withMetrics := range []bool{false, true} {
		name := "without"
		if withMetrics {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			h := feedPageHandler(s.app, withMetrics)
			var out struct {
				Feed struct{ Edges []json.RawMessage }
			}
			benchDo(b, h, tokens[0], page, nil, &out)
			if len(out.Feed.Edges) != 20 {
				b.Fatalf("the page holds %d entries, want 20", len(out.Feed.Edges))
			}
			before := resolverCalls(b, s.app.metrics)
			b.ResetTimer()
			for b.Loop() {
				benchDo(b, h, tokens[0], page, nil, nil)
			}
			if withMetrics {
				b.ReportMetric((resolverCalls(b, s.app.metrics)-before)/float64(b.N), "resolvers/op")
			}
		})
	}
}

// resolverCalls is how many resolver calls m has timed.
func resolverCalls(b *testing.B, m *serverMetrics) float64 {
	families, err := m.registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	n := 0.0
	for _, f := range families {
		if f.GetName() == "graphql_resolver_duration_seconds" {
			for _, series := range f.GetMetric() {
				n += float64(series.GetHistogram().GetSampleCount())
			}
		}
	}
	return n
}

// feedPageHandler is the GraphQL handler of a, reduced to what a feed read
// over POST needs, with or without the metrics extension.
func feedPageHandler(a *app, withMetrics bool) http.Handler {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Engine: a.engine}}))
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
	if withMetrics {
		metrics := graphqlMetrics{a.metrics}
		srv.Use(metrics)
		srv.Use(fieldHooks{metrics: &metrics})
	}
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		return next(dataloader.With(ctx, dataloader.New(a.engine, viewer.ID(ctx), dataloader.DefaultWait)))
	})
	return a.authenticate(srv)
}

// benchDo runs a document through h in process; it must succeed.
func benchDo(b testing.TB, h http.Handler, token, query string, vars map[string]any, out any) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || len(r.Errors) > 0 {
		b.Fatalf("%s: status %d %s", query, rec.Code, rec.Body.Bytes())
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolverMetricsField is the extension's cost per field, free of
// the I/O that makes a whole page's timing noisy: a resolver field is
// timed, a plain field only looked at.
//
//	go test -run '^$' -bench ResolverMetricsField -benchmem .
func BenchmarkResolverMetricsField(b *testing.B) {
	ext := fieldHooks{metrics: &graphqlMetrics{newServerMetrics(nil, nil)}}
	next := func(context.Context) (any, error) { return nil, nil }
	for _, isResolver := range []bool{true, false} {
		name := "plain"
		if isResolver {
			name = "resolver"
		}
		ctx := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{
			Object: "Post", Field: graphql.CollectedField{Field: &ast.Field{Name: "author"}}, IsResolver: isResolver,
		})
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ext.InterceptField(ctx, next)
			}
		})
	}
}
