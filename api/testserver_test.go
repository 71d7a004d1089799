package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"feedservice/api/settings"
	"feedservice/internal/gqlclient"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
	"feedservice/store"
	"feedservice/store/storetest"
)

// The backends every API test runs on: real MariaDB and Redis (what
// production runs), and the embedded default (SQLite and in-process Redis).
const (
	backendReal     = "mysql"
	backendEmbedded = "embedded"
)

// testServer is one server instance over HTTP, on its own database and
// Redis key prefix.
type testServer struct {
	URL        string
	MetricsURL string // the metrics listener's (METRICS_ADDR)
	app        *app
	queries    atomic.Int64 // SQL statements run, for the N+1 guard
	// The SQL statements and Redis round trips (a pipeline counts once)
	// run for HTTP requests, not by the background workers: the warm-read
	// test counts what one request costs.
	requestQueries    atomic.Int64
	requestRoundTrips atomic.Int64
}

// backends are the backends the API tests run on: both, except in the
// Redis Cluster pass of the test command (TEST_REDIS_ADDR lists several
// nodes), where the embedded one, which does not touch the cluster and ran
// in the main pass, is left out.
func backends() []string {
	if testenv.RedisCluster() {
		return []string{backendReal}
	}
	return []string{backendReal, backendEmbedded}
}

// forEachBackend runs fn once against each backend, as subtests; change
// adjusts the servers' settings.
func forEachBackend(t *testing.T, fn func(t *testing.T, s *testServer), change ...func(*settings.Settings)) {
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) { fn(t, newTestServer(t, backend, change...)) })
	}
}

// newTestServer starts a server on backend; change adjusts its settings.
// Its log is discarded, or shown from warnings up with -v.
func newTestServer(t testing.TB, backend string, change ...func(*settings.Settings)) *testServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return newTestServerWithLog(t, backend, log, change...)
}

// newTestServerWithLog is newTestServer writing its log to log.
func newTestServerWithLog(t testing.TB, backend string, log *slog.Logger, change ...func(*settings.Settings)) *testServer {
	t.Helper()
	cfg := testConfig(t, backend, change...)
	s := &testServer{}
	a, err := newApp(context.Background(), cfg, log, func(st *store.Store) {
		countQueries(st.DB(), &s.queries, &s.requestQueries)
		if r := st.ReplicaDB(); r != nil {
			countQueries(r, &s.queries, &s.requestQueries)
		}
	})
	if err != nil {
		t.Fatalf("start server on %s: %v", backend, err)
	}
	s.app = a
	if cfg.RedisAddr != "" {
		testenv.CheckSlots(t, a.redis) // a command over several hash slots fails the test
	}
	if a.redis != nil {
		a.redis.AddHook(roundTripCounter{&s.requestRoundTrips})
	}
	hs := httptest.NewServer(markRequests(a.handler()))
	ms := httptest.NewServer(a.metricsHandler())
	s.URL, s.MetricsURL = hs.URL, ms.URL
	t.Cleanup(func() {
		hs.Close()
		ms.Close()
		a.close()
	})
	return s
}

// parseConfig is the settings of args and the environment, as the server
// reads them; a word of args that is not a flag is an error.
func parseConfig(args []string) (settings.Settings, error) {
	c, words, err := settings.Parse(args)
	if err == nil && len(words) > 0 {
		err = fmt.Errorf("unexpected argument %q", words[0])
	}
	return c, err
}

// testConfig is the settings of a test server on backend, on a database and
// Redis key prefix of its own; change adjusts them.
func testConfig(t testing.TB, backend string, change ...func(*settings.Settings)) settings.Settings {
	t.Helper()
	// The defaults of every setting, and FEED_MODE and the other engine
	// settings from the environment, so that the suite can run in any mode.
	cfg, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.TokenSecret = []byte("test-secret-test-secret-test-secret!")
	cfg.TokenTTL = time.Hour
	cfg.BcryptCost = 4 // the minimum: tests sign up many users
	// Tests act fast and from one address: the rate limits, the complexity
	// budget and the bounds on one address's and one user's operations in flight are off
	// but in the tests of them (api_limits_test.go, inflight_test.go).
	cfg.MutationRate, cfg.AuthRate, cfg.ComplexityRate = ratelimit.Rate{}, ratelimit.Rate{}, ratelimit.Rate{}
	cfg.MaxOperationsPerAddress, cfg.MaxOperationsPerViewer = cfg.MaxOperationsInFlight, cfg.MaxOperationsInFlight
	cfg.NodeID = -1
	if backend == backendReal {
		cfg.MySQLDSN = storetest.MySQL(t)
		cfg.MySQLReplicaDSNs = testenv.MySQLReplicas(t, cfg.MySQLDSN)
		_, cfg.KeyPrefix = testenv.Redis(t)
		cfg.RedisAddr = testenv.RedisAddr()
	}
	dsn, replicas := cfg.MySQLDSN, cfg.MySQLReplicaDSNs
	for _, c := range change {
		c(&cfg)
	}
	if cfg.MySQLDSN != dsn && slices.Equal(cfg.MySQLReplicaDSNs, replicas) {
		// Another database (a second instance's, a private MariaDB): its
		// replicas, if it is on the test server.
		cfg.MySQLReplicaDSNs = testenv.MySQLReplicas(t, cfg.MySQLDSN)
	}
	return cfg
}

// countQueries counts every SQL statement gorm runs on db in n, and those
// run for an HTTP request (markRequests) in inRequest.
func countQueries(db *gorm.DB, n, inRequest *atomic.Int64) {
	count := func(db *gorm.DB) {
		n.Add(1)
		if db.Statement != nil && db.Statement.Context != nil && db.Statement.Context.Value(inRequestKey{}) != nil {
			inRequest.Add(1)
		}
	}
	cb := db.Callback()
	cb.Query().After("gorm:query").Register("test:count", count)
	cb.Row().After("gorm:row").Register("test:count", count)
	cb.Raw().After("gorm:raw").Register("test:count", count)
	cb.Create().After("gorm:create").Register("test:count", count)
	cb.Update().After("gorm:update").Register("test:count", count)
	cb.Delete().After("gorm:delete").Register("test:count", count)
}

// inRequestKey marks the context of an HTTP request's work.
type inRequestKey struct{}

// markRequests marks each request's context, so that the counters can tell
// its statements and round trips from the background workers'.
func markRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inRequestKey{}, true)))
	})
}

// roundTripCounter counts the Redis round trips of requests: a command or
// a pipeline is one (on a cluster a pipeline is one per node, in parallel).
type roundTripCounter struct{ n *atomic.Int64 }

func (c roundTripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c roundTripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(inRequestKey{}) != nil {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c roundTripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(inRequestKey{}) != nil {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(p)))
	return len(p), nil
}

// settle waits until the server has fanned out every committed change.
func (s *testServer) settle(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(20*time.Second))
	defer cancel()
	if err := s.app.engine.WaitIdle(ctx); err != nil {
		t.Fatalf("workers did not settle: %v", err)
	}
}

// client speaks GraphQL over HTTP POST as one user (or signed out).
type client struct {
	s      *testServer
	Token  string
	ID     string // the user's global id
	Name   string
	Header http.Header // extra headers
}

// gqlError is one error of a GraphQL response.
type gqlError = gqlclient.Error

// response is a GraphQL response with its HTTP status.
type response = gqlclient.Response

// anon is a signed-out client.
func (s *testServer) anon() *client { return &client{s: s} }

// signUp creates a user and returns a client signed in as them.
func (s *testServer) signUp(t *testing.T, username string) *client {
	t.Helper()
	var out struct {
		SignUp struct {
			Token string
			User  struct{ ID string }
		}
	}
	s.anon().mustDo(t, `mutation($u: String!, $p: String!) { signUp(input: {username: $u, password: $p}) { token user { id } } }`,
		map[string]any{"u": username, "p": "password-" + username}, &out)
	return &client{s: s, Token: out.SignUp.Token, ID: out.SignUp.User.ID, Name: username}
}

// do runs a document and returns the response, whatever it holds. It first
// waits for the server's fan-out workers to settle, so that a feed read
// sees every change made before it, in every feed mode.
func (c *client) do(t *testing.T, query string, vars map[string]any) response {
	t.Helper()
	c.s.settle(t)
	gc := gqlclient.Client{URL: c.s.URL, Header: c.Header}
	r, err := gc.Post(context.Background(), c.Token, query, vars)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	return r
}

// mustDo runs a document that must succeed and decodes its data into out.
func (c *client) mustDo(t *testing.T, query string, vars map[string]any, out any) {
	t.Helper()
	r := c.do(t, query, vars)
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v\nquery: %s", r.Errors, query)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
}

// mustFail runs a document that must fail with code.
func (c *client) mustFail(t *testing.T, code, query string, vars map[string]any) response {
	t.Helper()
	r := c.do(t, query, vars)
	if r.Code() != code {
		t.Fatalf("want error %s, got %+v (data %s)\nquery: %s", code, r.Errors, r.Data, query)
	}
	if r.Status >= 500 {
		t.Fatalf("status %d for a client error", r.Status)
	}
	return r
}

func (c *client) String() string { return fmt.Sprintf("client(%s)", c.Name) }

// pageGuard bounds a test's paging loop, so that a server that keeps
// claiming another page fails the test instead of hanging it.
type pageGuard struct {
	t       testing.TB
	what    string
	cursors []string // followed so far, for the message
}

// follow is called before asking for the page after cursor, of a list that
// holds entries entries. Asking for more pages than that (at least one),
// from no cursor, or from a cursor already followed fails the test, with
// the cursors followed.
func (g *pageGuard) follow(cursor *string, entries int) {
	g.t.Helper()
	switch {
	case cursor == nil:
		g.t.Fatalf("%s: page %d claims another without a cursor; cursors followed: %q", g.what, len(g.cursors)+1, g.cursors)
	case len(g.cursors)+2 > max(entries, 1):
		g.t.Fatalf("%s: page %d asked of a list of %d entries; cursors followed: %q, then %q", g.what, len(g.cursors)+2, entries, g.cursors, *cursor)
	}
	for _, c := range g.cursors {
		if c == *cursor {
			g.t.Fatalf("%s: page %d asked again from cursor %q; cursors followed: %q", g.what, len(g.cursors)+2, c, g.cursors)
		}
	}
	g.cursors = append(g.cursors, *cursor)
}
