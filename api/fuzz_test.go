package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"feedservice/api/settings"
)

// requestCase is one raw GraphQL request: a POST body, or a GET query string.
type requestCase struct {
	get     bool
	payload string
}

// requestCases are requests at the edges of the decoder: well formed, not
// JSON, JSON of the wrong shape, bad UTF-8 and unpaired surrogates, deep
// nesting, and GET queries of each kind. They seed FuzzGraphQLRequest and are
// replayed on both backends by TestGraphQLRequestDecoder.
var requestCases = []requestCase{
	{false, `{"query":"{ viewer { id username } }"}`},
	{false, `{"query":"query Q($u: String!) { user(username: $u) { id } }","operationName":"Q","variables":{"u":"fuzzer"}}`},
	{false, `{"query":"mutation($b: String!) { createPost(input: {body: $b}) { post { id body } } }","variables":{"b":"hi 🙂"}}`},
	{false, `{"query":"mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }","variables":{"b":"\udc00"}}`},
	{false, `{"query":"mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }","variables":{"b":"\ud83d\ude42 \ud83d"}}`},
	{false, `{"query":"mutation { createPost(input: {body: \"\\udc00\"}) { post { id } } }"}`},
	{false, `{"query":"mutation { createPost(input: {body: \"nul\\u0000\"}) { post { id } } }"}`},
	{false, `{"query":"mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }","variables":{"b":"bad \xff\xfe bytes"}}`},
	{false, `{"query":"{ node(id: \"VXNl\\ncjox\") { id } }"}`},
	{false, `{"query":"{ viewer { followers(first: 1, after: \"\\u0000\") { edges { cursor } } } }"}`},
	{false, `{"query":"{ __typename }","variables":null,"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}`},
	{false, `{"query":"{ viewer { id } }","variables":[1]}`},
	{false, `{"query":1}`},
	{false, `{"query":"{"}`},
	{false, `{"query":"{ viewer { id } }"`},
	{false, "\xef\xbb\xbf{\"query\":\"{ __typename }\"}"},
	{false, `{"query":"subscription { unreadCount }"}`},
	{false, `{"query":"subscription { feedItemAdded { cursor } }"}`},
	{true, `query=subscription+%7B+feedItemAdded+%7B+cursor+%7D+%7D`},
	{false, `{"query":"{ a: viewer { id } a: __typename }"}`},
	{false, `{"query":"` + strings.Repeat("{ __typename ", 300) + `"}`},
	{false, strings.Repeat("[", 10000)},
	{false, `null`}, {false, `[]`}, {false, `{}`}, {false, `""`}, {false, ``}, {false, "\x00"},
	{true, `query=%7B+viewer+%7B+id+%7D+%7D`},
	{true, `query=%7B__typename%7D&variables=null&extensions=%7B%7D`},
	{true, `query=mutation+%7B+deletePost(postId%3A+%22x%22)+%7B+deletedPostId+%7D+%7D`},
	{true, `query=%ff%fe`},
	{true, `query=query(%24id%3AID!)%7Bnode(id%3A%24id)%7Bid%7D%7D&variables=%7B%22id%22%3A%22%5Cudc00%22%7D`},
	{true, `query={__typename}&variables=%7B`},
	{true, `query=%7B__typename%7D&extensions=bad`},
	{true, `%zz&query`},
	{true, ``},
}

// graphqlAnswer is what every answer of /query must be: a JSON object with
// data or errors, every error with a message and a code.
type graphqlAnswer struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// checkGraphQLAnswer fails t unless status and body are a GraphQL answer
// that is no server error.
func checkGraphQLAnswer(t *testing.T, c requestCase, status int, body []byte) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("%+q: status %d: %.300s", c.payload, status, body)
	}
	var a graphqlAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%+q: status %d, the answer is not a JSON object (%v): %.300s", c.payload, status, err, body)
	}
	if (len(a.Data) == 0 || string(a.Data) == "null") && len(a.Errors) == 0 {
		t.Fatalf("%+q: status %d, an answer with neither data nor errors: %.300s", c.payload, status, body)
	}
	r := response{Status: status, Errors: a.Errors}
	errsCheck(t, r)
	if t.Failed() {
		t.FailNow()
	}
}

// newRequest builds c as a request to base + "/query".
func (c requestCase) newRequest(base, token string) *http.Request {
	method, body := http.MethodPost, io.Reader(strings.NewReader(c.payload))
	if c.get {
		method, body = http.MethodGet, nil
	}
	req, err := http.NewRequest(method, base+"/query", body)
	if err != nil {
		panic(err) // base is a URL of the test's own
	}
	if c.get {
		req.URL.RawQuery = c.payload
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// FuzzGraphQLRequest sends arbitrary POST bodies and GET query strings to
// the server's handler, signed in or not. No input may crash the server or
// get anything but a GraphQL answer whose errors all carry a code. It runs
// on the embedded backend for speed (it is the decoder under test);
// TestGraphQLRequestDecoder replays the interesting inputs on MariaDB and
// Redis.
func FuzzGraphQLRequest(f *testing.F) {
	s := newTestServer(f, backendEmbedded)
	auth, err := s.app.engine.SignUp(context.Background(), "fuzzer", "password-fuzzer", nil)
	if err != nil {
		f.Fatal(err)
	}
	h := s.app.handler()
	for _, c := range requestCases {
		f.Add(c.get, false, []byte(c.payload))
		f.Add(c.get, true, []byte(c.payload))
	}
	f.Fuzz(func(t *testing.T, get, signedIn bool, payload []byte) {
		c := requestCase{get: get, payload: string(payload)}
		token := ""
		if signedIn {
			token = auth.Token
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, c.newRequest("", token))
		checkGraphQLAnswer(t, c, rec.Code, rec.Body.Bytes())
	})
}

// TestGraphQLRequestDecoder sends the fuzz target's interesting inputs over
// HTTP to a server on each backend, signed in and out, and checks the same
// properties; then that the server still answers.
func TestGraphQLRequestDecoder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		for _, token := range []string{"", alice.Token} {
			for _, c := range requestCases {
				res, err := http.DefaultClient.Do(c.newRequest(s.URL, token))
				if err != nil {
					t.Fatalf("%+q: %v", c.payload, err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				checkGraphQLAnswer(t, c, res.StatusCode, body)
			}
		}
		var out struct{ Viewer struct{ Username string } }
		alice.mustDo(t, `{ viewer { username } }`, nil, &out)
		if out.Viewer.Username != "alice" {
			t.Fatalf("after the requests, viewer = %+v", out.Viewer)
		}
	})
}

// A subscription sent by POST is refused at once; before, feedItemAdded's
// request hung until a post arrived (found by the decoder's cases).
func TestSubscriptionByPostRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		for _, doc := range []string{`subscription { unreadCount }`, `subscription { feedItemAdded { cursor } }`} {
			errsExpect(t, alice, "BAD_USER_INPUT", doc, nil)
		}
	})
}

// A document of MaxQueryTokens tokens runs and one more is refused, before
// validation, whose cost is the square of the fields (FuzzGraphQLRequest's
// stalls: 10,000 repeated fields took a minute of CPU uncapped).
func TestLimitsQueryTokens(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		// "{", n names and "}": n+2 tokens.
		doc := func(tokens int) string { return "{" + strings.Repeat(" __typename", tokens-2) + " }" }
		alice.mustDo(t, doc(settings.DefaultMaxQueryTokens), nil, nil)
		r := errsExpect(t, alice, "BAD_USER_INPUT", doc(settings.DefaultMaxQueryTokens+1), nil)
		if !strings.Contains(r.Errors[0].Message, "token limit") {
			t.Errorf("message %q does not name the limit", r.Errors[0].Message)
		}
		errsExpect(t, alice, "BAD_USER_INPUT", "{"+strings.Repeat(" viewer { id }", 10000)+" }", nil)
	}, func(c *settings.Settings) {
		// A document at the token limit has about as many fields: the
		// field and selection limits, tested in api_walk_test.go, must not
		// refuse it first.
		c.MaxQueryFields = settings.DefaultMaxQueryTokens
		c.MaxQuerySelections = settings.DefaultMaxQueryTokens
	})
}
