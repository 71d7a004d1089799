package api

// Black-box tests of the abuse limits, each at its edge: query complexity
// and depth, batched operations, the rate limits (shared by instances over
// one Redis), automatic persisted queries, the introspection and GraphiQL
// switches, and the equal work of sign-up and log-in whether or not a
// username exists.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
)

// limitsPost POSTs a raw body to /query with a token and extra headers.
func limitsPost(t *testing.T, s *testServer, token string, header http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, raw
}

// limitsDo runs one request of query and variables (and extensions, when
// given) and returns its response and the HTTP response.
func limitsDo(t *testing.T, s *testServer, token string, header http.Header, query string, vars, extensions map[string]any) (response, *http.Response) {
	t.Helper()
	req := map[string]any{"variables": vars}
	if query != "" {
		req["query"] = query
	}
	if extensions != nil {
		req["extensions"] = extensions
	}
	body, _ := json.Marshal(req)
	res, raw := limitsPost(t, s, token, header, body)
	return errsDecode(t, res.StatusCode, raw), res
}

// limitsSecondInstance starts another server instance on the same MySQL
// database, Redis and key prefix as s, as a second instance behind one load
// balancer would be.
func limitsSecondInstance(t *testing.T, s *testServer) *testServer {
	t.Helper()
	shared := s.app.cfg
	return newTestServer(t, backendReal, func(c *settings.Settings) { *c = shared })
}

func TestLimitsQueryComplexity(t *testing.T) {
	t.Parallel()
	// viewer 1 + followers (1 + read 100 + 7 x (entry 20 + edges 1 + node 1 + id 1)) = 263.
	const atLimit = `{ viewer { followers(first: 7) { edges { node { id } } } } }`
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryComplexity = 263 })
	ann := s.signUp(t, "ann")
	t.Run("at the limit", func(t *testing.T) {
		ann.mustDo(t, atLimit, nil, nil)
		ann.mustDo(t, `{ viewer { following(last: 7) { edges { node { id } } } } }`, nil, nil)
		ann.mustDo(t, `{ viewer { timeline(first: 7) { edges { node { id } } } } }`, nil, nil)
	})
	t.Run("one over", func(t *testing.T) {
		for _, q := range []string{
			`{ viewer { id followers(first: 7) { edges { node { id } } } } }`,
			`{ viewer { followers(first: 7) { edges { cursor node { id } } } } }`,
			`{ viewer { followers(first: 8) { edges { node { id } } } } }`, // 286
			`{ viewer { followers(last: 8) { edges { node { id } } } } }`,
			`{ viewer { timeline(first: 8) { edges { node { id } } } } }`,
			// No count: the default page of 20 is priced.
			`{ viewer { followers { edges { node { id } } } } }`,
		} {
			r := ann.mustFail(t, "BAD_USER_INPUT", q, nil)
			if !strings.Contains(r.Errors[0].Message, "complexity") {
				t.Errorf("%s: message %q does not name the complexity limit", q, r.Errors[0].Message)
			}
			if string(r.Data) != "" && string(r.Data) != "null" {
				t.Errorf("%s: refused operation has data %s", q, r.Data)
			}
		}
	})
	t.Run("variables count", func(t *testing.T) {
		q := `query($n: Int) { viewer { followers(first: $n) { edges { node { id } } } } }`
		ann.mustDo(t, q, map[string]any{"n": 7}, nil)
		ann.mustFail(t, "BAD_USER_INPUT", q, map[string]any{"n": 8})
	})
	t.Run("the default", func(t *testing.T) {
		s := newTestServer(t, backendReal)
		bob := s.signUp(t, "bob")
		// The app's feed page at the largest page size passes, and so do
		// its followers and timeline pages at the largest size.
		bob.mustDo(t, limitsAppFeedQuery, map[string]any{"first": feedconfig.MaxPageSize}, nil)
		bob.mustDo(t, limitsAppFollowersQuery, map[string]any{"username": "bob", "first": feedconfig.MaxPageSize, "offset": 0}, nil)
		bob.mustDo(t, limitsAppTimelineQuery, map[string]any{"username": "bob", "first": feedconfig.MaxPageSize}, nil)
		// Followers of followers is refused before it runs: at 100 x 100,
		// and at 100 x 30 (about 81,000: it costs about what 80,000 of the feed
		// page's units do, not the 9,300 its fields alone would say).
		for _, nested := range []int{100, 30} {
			bob.mustFail(t, "BAD_USER_INPUT", `query($n: Int) { viewer { followers(first: 100) { edges { node {
				followers(first: $n) { edges { node { id username } } } } } } } }`, map[string]any{"n": nested})
		}
		// A list of ids is priced per id.
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = bob.ID
		}
		bob.mustFail(t, "BAD_USER_INPUT", `query($ids: [ID!]!) { nodes(ids: $ids) { ... on User {
			followers(first: 100) { edges { node { id } } } } } }`, map[string]any{"ids": ids})
	})
}

// A page of a user's list nested in the entries of another is priced as a
// read per entry: followers of followers at 100 x 30, which reads 100 pages
// of 30, costs 81,501 (its fields alone are 9,301), and runs at a limit of
// exactly that and not one below.
func TestLimitsNestedPagesPricedPerRead(t *testing.T) {
	t.Parallel()
	const nested = `{ user(username: "ann") { followers(first: 100) { edges { node { username
		followers(first: 30) { edges { node { username } } } } } } } }`
	// followers of followers: 1 + 100 + 100 x (20 + edges 1 + node 1 + username 1
	//   + (1 + 100 + 30 x (20 + edges 1 + node 1 + username 1))), and user 1.
	const price = 1 + (1 + 100 + 100*(20+3+(1+100+30*(20+3))))
	if got := priceOf(t, nested, nil); got != price || price != 81_502 {
		t.Fatalf("priced %d, want %d", got, price)
	}
	for _, limit := range []int{price, price - 1} {
		s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryComplexity = limit })
		ann := s.signUp(t, "ann")
		if limit == price {
			ann.mustDo(t, nested, nil, nil)
		} else {
			ann.mustFail(t, "BAD_USER_INPUT", nested, nil)
		}
	}
}

// limitsAppFeedQuery is the web app's feed page (web/src/graphql.ts), with
// the __typename fields Apollo's client adds. The documents under
// extensions/testdata are shared with the extensions' tests.
var limitsAppFeedQuery = testDocument("app-feed.graphql")

// testDocument is the GraphQL document of extensions/testdata/name.
func testDocument(name string) string {
	doc, err := os.ReadFile(filepath.Join("extensions", "testdata", name))
	if err != nil {
		panic(err)
	}
	return string(doc)
}

// limitsAppFollowersQuery and limitsAppTimelineQuery are the web app's
// followers page (by number) and timeline page.
const (
	limitsAppFollowersQuery = `query FollowersPage($username: String!, $first: Int, $offset: Int) {
  user(username: $username) { id
    followers(first: $first, offset: $offset) {
      edges { cursor followedAt node { id username displayName viewerIsFollowing followsViewer __typename } __typename }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor __typename }
      totalCount __typename } __typename } }`
	limitsAppTimelineQuery = `query Timeline($username: String!, $first: Int, $after: String) {
  user(username: $username) { id
    timeline(first: $first, after: $after) {
      edges { cursor node { id body createdAt repostCount author { id username displayName __typename }
        repostOf { id body createdAt repostCount author { id username displayName __typename } __typename } __typename } __typename }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor __typename } __typename } __typename } }`
)

func TestLimitsQueryDepth(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryDepth = 5 })
	ann := s.signUp(t, "ann")
	t.Run("at the limit", func(t *testing.T) {
		for _, q := range []string{
			`{ viewer { followers { edges { node { id } } } } }`,
			`{ viewer { ...F } } fragment F on User { followers { edges { node { id } } } }`,
			`{ viewer { ... on User { followers { edges { ... on UserEdge { node { id } } } } } } }`,
		} {
			ann.mustDo(t, q, nil, nil)
		}
	})
	t.Run("one over", func(t *testing.T) {
		for _, q := range []string{
			`{ viewer { followers { edges { node { followers { totalCount } } } } } }`,
			`{ viewer { ...F } } fragment F on User { followers { edges { node { ...G } } } } fragment G on User { followers { totalCount } }`,
			`{ viewer { ... on User { followers { edges { ... on UserEdge { node { following { totalCount } } } } } } } }`,
			`mutation { logIn(input: {username: "ann", password: "password-ann"}) { user { followers { edges { node { id } } } } } }`,
		} {
			r := ann.mustFail(t, "BAD_USER_INPUT", q, nil)
			if !strings.Contains(r.Errors[0].Message, "MaxQueryDepth") {
				t.Errorf("%s: message %q does not name the depth limit", q, r.Errors[0].Message)
			}
		}
	})
	t.Run("GraphiQL's introspection passes the default", func(t *testing.T) {
		s := newTestServer(t, backendReal)
		var out struct {
			Schema struct {
				QueryType struct{ Name string }
				Types     []struct{ Name string }
			} `json:"__schema"`
		}
		s.anon().mustDo(t, limitsGraphiQLIntrospection, nil, &out)
		if out.Schema.QueryType.Name != "Query" || len(out.Schema.Types) < 10 {
			t.Fatalf("introspection answered %+v", out.Schema)
		}
	})
}

func TestLimitsBatch(t *testing.T) {
	t.Parallel()
	const max = 4
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxBatchOperations = max })
	ann := s.signUp(t, "ann")
	post := func(body string) map[string]any {
		return map[string]any{"query": `mutation($b: String!) { createPost(input: {body: $b}) { post { body author { username postCount } } } }`,
			"variables": map[string]any{"b": body}}
	}
	postCount := func() int {
		var out struct{ Viewer struct{ PostCount int } }
		ann.mustDo(t, `{ viewer { postCount } }`, nil, &out)
		return out.Viewer.PostCount
	}
	batch := func(ops ...any) (*http.Response, []byte) {
		body, _ := json.Marshal(ops)
		return limitsPost(t, s, ann.Token, nil, body)
	}
	t.Run("at the limit", func(t *testing.T) {
		res, raw := batch(post("one"), post("two"),
			map[string]any{"query": `query Who { viewer { username } }`, "operationName": "Who"},
			map[string]any{"query": `{ user(username: "ann") { timeline(first: -1) { totalCount } } }`})
		var results []response
		if err := json.Unmarshal(raw, &results); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("status %d, body %s: %v", res.StatusCode, raw, err)
		}
		if len(results) != max {
			t.Fatalf("%d results for %d operations: %s", len(results), max, raw)
		}
		for i, want := range []string{`"one"`, `"two"`, `"ann"`} {
			if len(results[i].Errors) > 0 || !strings.Contains(string(results[i].Data), want) {
				t.Errorf("result %d: %s %+v, want %s", i, results[i].Data, results[i].Errors, want)
			}
		}
		// Operations run in order, each seeing the ones before it.
		if !strings.Contains(string(results[1].Data), `"postCount":2`) {
			t.Errorf("the second post's author shows %s, want postCount 2", results[1].Data)
		}
		// One operation's error is its own, coded like any other.
		if results[3].Code() != "BAD_USER_INPUT" {
			t.Errorf("a bad page size in a batch: %+v", results[3].Errors)
		}
	})
	t.Run("one over", func(t *testing.T) {
		before := postCount()
		ops := make([]any, max+1)
		for i := range ops {
			ops[i] = post(fmt.Sprint("over ", i))
		}
		res, raw := batch(ops...)
		r := errsDecode(t, res.StatusCode, raw)
		errsCheck(t, r)
		if res.StatusCode != http.StatusBadRequest || r.Code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "MaxBatchOperations") {
			t.Fatalf("a batch of %d: status %d, %s", max+1, res.StatusCode, raw)
		}
		if after := postCount(); after != before {
			t.Errorf("a refused batch ran: postCount %d -> %d", before, after)
		}
	})
	t.Run("empty and malformed", func(t *testing.T) {
		for _, body := range []string{`[]`, ` [ {"query": "{ viewer { id } }"} `, `[1, 2]`} {
			res, raw := limitsPost(t, s, ann.Token, nil, []byte(body))
			r := errsDecode(t, res.StatusCode, raw)
			errsCheck(t, r)
			if r.Code() != "BAD_USER_INPUT" {
				t.Errorf("batch body %s: status %d, %s", body, res.StatusCode, raw)
			}
		}
	})
	t.Run("a single operation is not a batch", func(t *testing.T) {
		res, raw := limitsPost(t, s, ann.Token, nil, []byte(` {"query": "{ viewer { username } }"}`))
		if r := errsDecode(t, res.StatusCode, raw); len(r.Errors) > 0 || !strings.Contains(string(r.Data), "ann") {
			t.Errorf("a single operation: %s", raw)
		}
	})
}

// limitsRateLimited checks that r is refused by a rate limit, with a
// retryAfter in the error and the Retry-After header.
func limitsRateLimited(t *testing.T, r response, res *http.Response, what string) {
	t.Helper()
	if r.Code() != "RATE_LIMITED" {
		t.Fatalf("%s: want RATE_LIMITED, got %+v (data %s)", what, r.Errors, r.Data)
	}
	retry, ok := r.Errors[0].Extensions["retryAfter"].(float64)
	if !ok || retry <= 0 {
		t.Errorf("%s: extensions.retryAfter %v, want seconds > 0", what, r.Errors[0].Extensions["retryAfter"])
	}
	if h, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || h < int(retry) || h <= 0 {
		t.Errorf("%s: Retry-After header %q, want at least %v", what, res.Header.Get("Retry-After"), retry)
	}
}

// TestLimitsComplexityBudget: every operation spends its price from its
// viewer's budget (COMPLEXITY_RATE), or its address's signed out, in Redis.
// At a budget of three operations' price three run and the fourth is
// refused with RATE_LIMITED and retryAfter, over HTTP and over a
// websocket; one unit less and the third is refused; another viewer, a
// signed-out client and a batch's operations spend their own way; a second
// instance spends from the same budget.
func TestLimitsComplexityBudget(t *testing.T) {
	t.Parallel()
	const op = `{ viewer { followers(first: 7) { edges { node { id } } } } }` // 263
	for _, c := range []struct{ budget, runs int }{{3 * 263, 3}, {3*263 - 1, 2}} {
		s := newTestServer(t, backendReal, func(cfg *settings.Settings) { cfg.ComplexityRate = ratelimit.Rate{Count: c.budget, Period: time.Hour} })
		ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
		for i := range c.runs {
			if r, _ := limitsDo(t, s, ann.Token, nil, op, nil, nil); len(r.Errors) > 0 {
				t.Fatalf("budget %d: operation %d of %d: %+v", c.budget, i+1, c.runs, r.Errors)
			}
		}
		r, res := limitsDo(t, s, ann.Token, nil, op, nil, nil)
		limitsRateLimited(t, r, res, fmt.Sprintf("budget %d: operation %d", c.budget, c.runs+1))
		if !strings.Contains(r.Errors[0].Message, "COMPLEXITY_RATE") || (string(r.Data) != "" && string(r.Data) != "null") {
			t.Errorf("budget %d: refusal %q with data %s, want one naming COMPLEXITY_RATE and no data", c.budget, r.Errors[0].Message, r.Data)
		}
		if c.runs < 3 {
			continue
		}
		ws := liveConnect(t, s, liveTransportWS, ann.Token)
		res2, end, err := ws.event(ws.subscribe(op), 10*time.Second)
		if code := liveErrorCode(res2, end); err != nil || code != "RATE_LIMITED" {
			t.Errorf("over a websocket: %s %+v %v", code, res2, err)
		}
		bob.mustDo(t, op, nil, nil)
		if r, _ := limitsDo(t, s, "", nil, op, nil, nil); len(r.Errors) > 0 {
			t.Errorf("signed out, from an address with a budget of its own: %+v", r.Errors)
		}
		// bob has spent one; a batch of three spends three more, the third refused.
		body, _ := json.Marshal([]map[string]any{{"query": op}, {"query": op}, {"query": op}})
		_, raw := limitsPost(t, s, bob.Token, nil, body)
		var results []response
		if err := json.Unmarshal(raw, &results); err != nil || len(results) != 3 || len(results[0].Errors)+len(results[1].Errors) > 0 || results[2].Code() != "RATE_LIMITED" {
			t.Errorf("a batch past the budget: %s", raw)
		}
		other := limitsSecondInstance(t, s)
		r, res = limitsDo(t, other, ann.Token, nil, op, nil, nil)
		limitsRateLimited(t, r, res, "on a second instance")
	}
}

// The operations of a batch share one complexity limit: at a limit of three
// operations' price, a batch of three runs whole, and in a batch of four
// the fourth is refused (before, each was held to the limit alone, so a
// batch of ten ran ten times it). A cheaper operation after a refused one
// runs if it fits in what is left.
func TestLimitsBatchSharesComplexity(t *testing.T) {
	t.Parallel()
	const op = `{ viewer { followers(first: 7) { edges { node { id } } } } }` // 263
	const cheap = `{ viewer { username } }`                                   // 2
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryComplexity = 3*263 + 2 })
	ann := s.signUp(t, "ann")
	batch := func(queries ...string) []response {
		t.Helper()
		ops := make([]map[string]any, len(queries))
		for i, q := range queries {
			ops[i] = map[string]any{"query": q}
		}
		body, _ := json.Marshal(ops)
		res, raw := limitsPost(t, s, ann.Token, nil, body)
		var results []response
		if err := json.Unmarshal(raw, &results); err != nil || res.StatusCode != http.StatusOK || len(results) != len(queries) {
			t.Fatalf("status %d, body %s: %v", res.StatusCode, raw, err)
		}
		return results
	}
	for i, r := range batch(op, op, op) {
		if len(r.Errors) > 0 {
			t.Errorf("three at the limit: operation %d refused: %+v", i, r.Errors)
		}
	}
	results := batch(op, op, op, op, cheap)
	for i, r := range results[:3] {
		if len(r.Errors) > 0 {
			t.Errorf("four over the limit: operation %d refused: %+v", i, r.Errors)
		}
	}
	if r := results[3]; r.Code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "batch") || (string(r.Data) != "" && string(r.Data) != "null") {
		t.Errorf("four over the limit: the fourth answered %s %+v, want BAD_USER_INPUT naming the batch", r.Data, r.Errors)
	}
	if r := results[4]; len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"ann"`) {
		t.Errorf("a cheap operation that fits what is left: %s %+v", r.Data, r.Errors)
	}
}

func TestLimitsRateMutationsPerViewer(t *testing.T) {
	t.Parallel()
	const n = 3
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MutationRate = ratelimit.Rate{Count: n, Period: time.Hour} })
	ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
	create := `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`
	for i := range n {
		if r, _ := limitsDo(t, s, ann.Token, nil, create, map[string]any{"b": fmt.Sprint("post ", i)}, nil); len(r.Errors) > 0 {
			t.Fatalf("mutation %d of %d: %+v", i+1, n, r.Errors)
		}
	}
	r, res := limitsDo(t, s, ann.Token, nil, create, map[string]any{"b": "one too many"}, nil)
	limitsRateLimited(t, r, res, "mutation n+1")
	var out struct{ Viewer struct{ PostCount int } }
	ann.mustDo(t, `{ viewer { postCount } }`, nil, &out)
	if out.Viewer.PostCount != n {
		t.Errorf("postCount %d after %d allowed and one refused", out.Viewer.PostCount, n)
	}
	// Queries are not mutations; another viewer has a budget of their own.
	ann.mustDo(t, `{ viewer { id } }`, nil, nil)
	bob.mustDo(t, create, map[string]any{"b": "bob's"}, nil)
	// Each mutation field spends, however many share an operation.
	bob.mustDo(t, `mutation { a: createPost(input: {body: "a"}) { post { id } } b: createPost(input: {body: "b"}) { post { id } } }`, nil, nil)
	// A second instance over the same Redis spends from the same budget.
	other := limitsSecondInstance(t, s)
	r, res = limitsDo(t, other, ann.Token, nil, create, map[string]any{"b": "elsewhere"}, nil)
	limitsRateLimited(t, r, res, "mutation n+1 on a second instance")
	r, res = limitsDo(t, other, bob.Token, nil, create, map[string]any{"b": "elsewhere"}, nil)
	limitsRateLimited(t, r, res, "bob's mutation n+1 on a second instance")
}

func TestLimitsRateAuthPerIP(t *testing.T) {
	t.Parallel()
	const n = 3
	logIn := `mutation($u: String!, $p: String!) { logIn(input: {username: $u, password: $p}) { token } }`
	signUp := `mutation($u: String!) { signUp(input: {username: $u, password: "long-enough-password"}) { token } }`
	t.Run("per address, across instances", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) { c.AuthRate = ratelimit.Rate{Count: n, Period: time.Hour} })
		if r, _ := limitsDo(t, s, "", nil, signUp, map[string]any{"u": "ann"}, nil); len(r.Errors) > 0 {
			t.Fatalf("sign-up: %+v", r.Errors)
		}
		// A wrong password spends like a right one: guesses are what it limits.
		if r, _ := limitsDo(t, s, "", nil, logIn, map[string]any{"u": "ann", "p": "wrong password"}, nil); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("wrong password: %+v", r.Errors)
		}
		if r, _ := limitsDo(t, s, "", nil, logIn, map[string]any{"u": "ann", "p": "long-enough-password"}, nil); len(r.Errors) > 0 {
			t.Fatalf("log-in %d of %d: %+v", n, n, r.Errors)
		}
		r, res := limitsDo(t, s, "", nil, logIn, map[string]any{"u": "ann", "p": "long-enough-password"}, nil)
		limitsRateLimited(t, r, res, "log-in n+1")
		r, res = limitsDo(t, s, "", nil, signUp, map[string]any{"u": "bob"}, nil)
		limitsRateLimited(t, r, res, "sign-up after the budget is spent")
		if errsUserExists(t, s, "bob") {
			t.Errorf("a rate-limited sign-up created its user")
		}
		other := limitsSecondInstance(t, s)
		r, res = limitsDo(t, other, "", nil, logIn, map[string]any{"u": "ann", "p": "long-enough-password"}, nil)
		limitsRateLimited(t, r, res, "log-in n+1 on a second instance")
	})
	t.Run("X-Forwarded-For from a trusted proxy", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) {
			c.AuthRate = ratelimit.Rate{Count: n, Period: time.Hour}
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
		})
		from := func(chain string) http.Header { return http.Header{"X-Forwarded-For": {chain}} }
		for i := range n {
			// The client's own claim (left) is not believed; the proxies' are.
			chain := fmt.Sprintf("198.51.100.%d, 203.0.113.7, 10.1.2.3", i)
			if r, _ := limitsDo(t, s, "", from(chain), logIn, map[string]any{"u": "nobody", "p": "wrong password"}, nil); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("attempt %d from 203.0.113.7: %+v", i+1, r.Errors)
			}
		}
		r, res := limitsDo(t, s, "", from("203.0.113.7"), logIn, map[string]any{"u": "nobody", "p": "wrong password"}, nil)
		limitsRateLimited(t, r, res, "attempt n+1 from 203.0.113.7")
		if r, _ := limitsDo(t, s, "", from("203.0.113.8"), logIn, map[string]any{"u": "nobody", "p": "wrong password"}, nil); r.Code() != "UNAUTHENTICATED" {
			t.Errorf("another address behind the proxy: %+v", r.Errors)
		}
	})
	t.Run("X-Forwarded-For from anyone else", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) { c.AuthRate = ratelimit.Rate{Count: n, Period: time.Hour} })
		for i := range n {
			from := http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}}
			if r, _ := limitsDo(t, s, "", from, logIn, map[string]any{"u": "nobody", "p": "wrong password"}, nil); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("attempt %d: %+v", i+1, r.Errors)
			}
		}
		from := http.Header{"X-Forwarded-For": {"203.0.113.99"}}
		r, res := limitsDo(t, s, "", from, logIn, map[string]any{"u": "nobody", "p": "wrong password"}, nil)
		limitsRateLimited(t, r, res, "a forged X-Forwarded-For")
	})
	t.Run("signed-out mutations per address", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MutationRate = ratelimit.Rate{Count: n, Period: time.Hour} })
		follow := `mutation { follow(userId: "VXNlcjox") { user { id } } }`
		for i := range n {
			if r, _ := limitsDo(t, s, "", nil, follow, nil, nil); r.Code() == "RATE_LIMITED" || len(r.Errors) == 0 {
				t.Fatalf("signed-out mutation %d: %+v", i+1, r.Errors)
			}
		}
		r, res := limitsDo(t, s, "", nil, follow, nil, nil)
		limitsRateLimited(t, r, res, "signed-out mutation n+1")
	})
	t.Run("embedded default", func(t *testing.T) {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.AuthRate = ratelimit.Rate{Count: 1, Period: time.Hour} })
		if r, _ := limitsDo(t, s, "", nil, signUp, map[string]any{"u": "ann"}, nil); len(r.Errors) > 0 {
			t.Fatalf("sign-up: %+v", r.Errors)
		}
		r, res := limitsDo(t, s, "", nil, signUp, map[string]any{"u": "bob"}, nil)
		limitsRateLimited(t, r, res, "sign-up 2 of 1 on the embedded default")
	})
}

// TestLimitsRateAuthWithRedisDown: with Redis down (a private server,
// killed) the auth limit still holds, per address, in each instance's own
// budget: n log-ins pass, wrong passwords spending like right ones, and
// the next is RATE_LIMITED, and so is a sign-up; another address behind a
// trusted proxy has a budget of its own.
func TestLimitsRateAuthWithRedisDown(t *testing.T) {
	t.Parallel()
	const n = 5
	logIn := `mutation($u: String!, $p: String!) { logIn(input: {username: $u, password: $p}) { token } }`
	signUp := `mutation($u: String!) { signUp(input: {username: $u, password: "long-enough-password"}) { token } }`
	r := testenv.StartRedis(t)
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.RedisAddr = r.Addr()
		c.AuthRate = ratelimit.Rate{Count: n, Period: time.Hour}
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }
	if r, _ := limitsDo(t, s, "", from("203.0.113.1"), signUp, map[string]any{"u": "ann"}, nil); len(r.Errors) > 0 {
		t.Fatalf("sign-up: %+v", r.Errors)
	}
	r.Kill()
	for i := range n {
		password := "long-enough-password"
		if i%2 == 1 {
			password = "wrong password"
		}
		res, _ := limitsDo(t, s, "", from("203.0.113.2"), logIn, map[string]any{"u": "ann", "p": password}, nil)
		if code := res.Code(); code == "RATE_LIMITED" || (i%2 == 0) != (len(res.Errors) == 0) {
			t.Fatalf("log-in %d of %d with Redis down: %+v", i+1, n, res.Errors)
		}
	}
	res, raw := limitsDo(t, s, "", from("203.0.113.2"), logIn, map[string]any{"u": "ann", "p": "long-enough-password"}, nil)
	limitsRateLimited(t, res, raw, "log-in n+1 with Redis down")
	res, raw = limitsDo(t, s, "", from("203.0.113.2"), signUp, map[string]any{"u": "bob"}, nil)
	limitsRateLimited(t, res, raw, "sign-up past the budget with Redis down")
	if res, _ := limitsDo(t, s, "", from("203.0.113.3"), logIn, map[string]any{"u": "ann", "p": "long-enough-password"}, nil); len(res.Errors) > 0 {
		t.Fatalf("another address with Redis down: %+v", res.Errors)
	}
}

// limitsPersisted is the APQ extension of a request sending hash.
func limitsPersisted(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

func TestLimitsPersistedQueries(t *testing.T) {
	t.Parallel()
	const doc = `query Who($u: String!) { user(username: $u) { username } }`
	sum := sha256.Sum256([]byte(doc))
	hash := hex.EncodeToString(sum[:])
	vars := map[string]any{"u": "ann"}
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann := s.signUp(t, "ann")
		answered := func(r response, what string) {
			t.Helper()
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"ann"`) {
				t.Fatalf("%s: %s %+v", what, r.Data, r.Errors)
			}
		}
		r, _ := limitsDo(t, s, "", nil, "", vars, limitsPersisted(hash))
		if r.Code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Fatalf("an unknown hash: %+v", r.Errors)
		}
		// Signed out, a document sent with its hash runs but is not kept.
		r, _ = limitsDo(t, s, "", nil, doc, vars, limitsPersisted(hash))
		answered(r, "hash with its document, signed out")
		r, _ = limitsDo(t, s, "", nil, "", vars, limitsPersisted(hash))
		if r.Code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Fatalf("a document a signed-out client sent was kept: %s %+v", r.Data, r.Errors)
		}
		r, _ = limitsDo(t, s, ann.Token, nil, doc, vars, limitsPersisted(hash))
		answered(r, "hash with its document")
		r, _ = limitsDo(t, s, "", nil, "", vars, limitsPersisted(hash))
		answered(r, "the hash alone, afterwards")
		// Apollo sends hashed queries by GET too.
		ext, _ := json.Marshal(limitsPersisted(hash))
		v, _ := json.Marshal(vars)
		res, body := errsGet(t, s.URL+"/query?extensions="+url.QueryEscape(string(ext))+"&variables="+url.QueryEscape(string(v)), nil)
		answered(errsDecode(t, res.StatusCode, body), "the hash alone by GET")
		if s.app.cfg.RedisAddr != "" {
			other := limitsSecondInstance(t, s)
			r, _ = limitsDo(t, other, "", nil, "", vars, limitsPersisted(hash))
			answered(r, "the hash alone on a second instance")
		}
		wrong := strings.Repeat("0", 64)
		r, _ = limitsDo(t, s, "", nil, doc, vars, limitsPersisted(wrong))
		errsCheck(t, r)
		if r.Code() != "BAD_USER_INPUT" {
			t.Errorf("a hash that is not the document's: %+v", r.Errors)
		}
		r, _ = limitsDo(t, s, "", nil, "", vars, limitsPersisted(wrong))
		if r.Code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("a wrong hash was kept: %+v", r.Errors)
		}
		r, _ = limitsDo(t, s, "", nil, doc, vars, map[string]any{"persistedQuery": map[string]any{"version": 2, "sha256Hash": hash}})
		errsCheck(t, r)
		if r.Code() != "BAD_USER_INPUT" {
			t.Errorf("an unknown APQ version: %+v", r.Errors)
		}
	})
}

func TestLimitsIntrospectionAndGraphiQLSwitches(t *testing.T) {
	t.Parallel()
	introspect := []string{`{ __schema { queryType { name } } }`, `{ __type(name: "User") { name } }`,
		`{ viewer { id } ...F } fragment F on Query { __schema { types { name } } }`}
	t.Run("off", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) { c.Introspection, c.GraphiQL = false, false })
		for _, q := range introspect {
			r := s.anon().mustFail(t, "BAD_USER_INPUT", q, nil)
			errsCheck(t, r)
		}
		s.anon().mustDo(t, `{ __typename viewer { __typename } }`, nil, nil)
		for _, path := range []string{"/", "/graphiql/"} {
			if res, _ := errsGet(t, s.URL+path, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s with GraphiQL off: status %d", path, res.StatusCode)
			}
		}
	})
	t.Run("on by default", func(t *testing.T) {
		s := newTestServer(t, backendReal)
		for _, q := range introspect {
			s.anon().mustDo(t, q, nil, nil)
		}
		if res, _ := errsGet(t, s.URL+"/", nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET / with GraphiQL on: status %d", res.StatusCode)
		}
	})
}

// limitsPasswordHashes reads the server's count of bcrypt evaluations by use.
func limitsPasswordHashes(t *testing.T, s *testServer) (hash, compare float64) {
	t.Helper()
	families, err := s.app.engine.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "feed_password_hashes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			switch m.GetLabel()[0].GetValue() {
			case "hash":
				hash = m.GetCounter().GetValue()
			case "compare":
				compare = m.GetCounter().GetValue()
			}
		}
	}
	return hash, compare
}

// Whether a username exists must not show in how long sign-up or log-in
// take. Rather than time them, count the bcrypt runs (all of their cost):
// the answer for a taken name does the same work as for a free one.
func TestLimitsPasswordWorkHidesUsernames(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	s.signUp(t, "ann")
	work := func(query string, vars map[string]any) (hash, compare float64) {
		t.Helper()
		h0, c0 := limitsPasswordHashes(t, s)
		s.anon().do(t, query, vars)
		h1, c1 := limitsPasswordHashes(t, s)
		return h1 - h0, c1 - c0
	}
	signUp := `mutation($u: String!) { signUp(input: {username: $u, password: "long-enough-password"}) { token } }`
	fh, fc := work(signUp, map[string]any{"u": "fresh"})
	th, tc := work(signUp, map[string]any{"u": "ann"})
	if fh != 1 || fc != 0 || th != fh || tc != fc {
		t.Errorf("sign-up bcrypt runs (hash, compare): free name (%v, %v), taken name (%v, %v); want (1, 0) both", fh, fc, th, tc)
	}
	logIn := `mutation($u: String!) { logIn(input: {username: $u, password: "wrong password"}) { token } }`
	wh, wc := work(logIn, map[string]any{"u": "ann"})
	uh, uc := work(logIn, map[string]any{"u": "nobody"})
	if wc != 1 || wh != 0 || uh != wh || uc != wc {
		t.Errorf("log-in bcrypt runs (hash, compare): wrong password (%v, %v), unknown user (%v, %v); want (0, 1) both", wh, wc, uh, uc)
	}
}

// limitsGraphiQLIntrospection is the introspection query of the embedded
// GraphiQL (5.4, graphql-js 16 getIntrospectionQuery with typeDepth 9): 15
// fields deep.
var limitsGraphiQLIntrospection = testDocument("graphiql-introspection.graphql")

// liveMutate runs a mutation over websocket c and returns its result.
func liveMutate(t *testing.T, c *liveConn, query string) liveResult {
	t.Helper()
	id := c.subscribe(query)
	res, end, err := c.event(id, 5*time.Second)
	if err != nil {
		t.Fatalf("mutation over the websocket: %v", err)
	}
	if end != nil {
		json.Unmarshal(end.Payload, &res.Errors)
	}
	return res
}

// TestLimitsRateMutationsOverWebsocket: gqlgen's websocket transport runs
// a mutation sent in a subscribe message as it does by POST, and the
// mutation budget holds there too: the viewer's own (the one POST spends),
// every mutation field counted, RATE_LIMITED with retryAfter past it,
// and the socket stays open for the rest.
func TestLimitsRateMutationsOverWebsocket(t *testing.T) {
	t.Parallel()
	const n = 3
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MutationRate = ratelimit.Rate{Count: n, Period: time.Hour} })
	ann, bob := s.signUp(t, "ann"), s.signUp(t, "bob")
	ws := liveConnect(t, s, liveTransportWS, ann.Token)
	create := func(body string) string {
		return `mutation { createPost(input: {body: "` + body + `"}) { post { id } } }`
	}
	if res := liveMutate(t, ws, create("one")); len(res.Errors) > 0 || !strings.Contains(string(res.Data), `"createPost":{"post":{"id":`) {
		t.Fatalf("mutation 1 of %d over the websocket: %s %+v", n, res.Data, res.Errors)
	}
	// Two fields in one operation spend two.
	if res := liveMutate(t, ws, `mutation { a: createPost(input: {body: "two"}) { post { id } } b: createPost(input: {body: "three"}) { post { id } } }`); len(res.Errors) > 0 {
		t.Fatalf("mutations 2 and 3 of %d over the websocket: %+v", n, res.Errors)
	}
	res := liveMutate(t, ws, create("one too many"))
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "RATE_LIMITED" {
		t.Fatalf("mutation n+1 over the websocket: %s %+v, want RATE_LIMITED", res.Data, res.Errors)
	}
	if retry, ok := res.Errors[0].Extensions["retryAfter"].(float64); !ok || retry <= 0 {
		t.Errorf("extensions.retryAfter %v, want seconds > 0", res.Errors[0].Extensions["retryAfter"])
	}
	// The same budget as POST; queries on the socket still run; another
	// viewer's budget is their own.
	r, httpRes := limitsDo(t, s, ann.Token, nil, create("by POST"), nil, nil)
	limitsRateLimited(t, r, httpRes, "POST after the websocket spent the budget")
	if res := liveMutate(t, ws, `query { viewer { postCount } }`); len(res.Errors) > 0 || string(res.Data) != fmt.Sprintf(`{"viewer":{"postCount":%d}}`, n) {
		t.Fatalf("query after the refusal: %s %+v, want postCount %d", res.Data, res.Errors, n)
	}
	bobWS := liveConnect(t, s, liveTransportWS, bob.Token)
	if res := liveMutate(t, bobWS, create("bob's")); len(res.Errors) > 0 {
		t.Fatalf("bob's mutation over his websocket: %+v", res.Errors)
	}
}
