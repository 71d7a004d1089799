package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	gqlexecutor "github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/api/extensions"
)

// TestTransportsAnswerAsGqlgens: the server's GET and POST transports
// (extensions.GET and POST, which copy the executor's data as it is)
// answer every request as gqlgen's own do, through the whole handler:
// the same status, content type and JSON, byte for byte once the
// characters json.Marshal escapes in strings (<, >, &, U+2028, U+2029)
// are escaped in ours too. The answers cover data, field errors with
// partial data, refusals before the operation runs, both content types,
// and a GET of a mutation.
func TestTransportsAnswerAsGqlgens(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	ann := s.signUp(t, "ann")
	body := "<b>5 > 4 & 3 < 4</b>\u2028 \"quoted\" \\ é 😀"
	ann.mustDo(t, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": body}, nil)
	ours := s.app.handler()
	s.app.gqlgenTransports = true
	theirs := s.app.handler()
	s.app.gqlgenTransports = false

	timeline := `query($u: String!) { user(username: $u) { username timeline(first: 5) { edges { node { body } } } } }`
	type request struct {
		name, method, accept string
		token                bool
		query                string
		vars                 map[string]any
	}
	requests := []request{
		{name: "data", method: http.MethodPost, query: timeline, vars: map[string]any{"u": "ann"}},
		{name: "data by GET", method: http.MethodGet, query: timeline, vars: map[string]any{"u": "ann"}},
		{name: "signed in", method: http.MethodPost, token: true, query: `{ viewer { username } feed(first: 2) { edges { cursor } } }`},
		{name: "a field error beside data", method: http.MethodPost, query: `{ viewer { username } feed(first: 2) { edges { cursor } } }`},
		{name: "a field error by GET", method: http.MethodGet, query: `{ feed(first: 2) { edges { cursor } } }`},
		{name: "a document that does not parse", method: http.MethodPost, query: `{ viewer { `},
		{name: "a document that does not parse, GraphQL response", method: http.MethodPost, accept: "application/graphql-response+json", query: `{ viewer { `},
		{name: "a document that does not validate", method: http.MethodGet, query: `{ viewer { nope } }`},
		{name: "a document that does not validate, GraphQL response", method: http.MethodGet, accept: "application/graphql-response+json", query: `{ viewer { nope } }`},
		{name: "a mutation by GET", method: http.MethodGet, query: `mutation { markFeedRead }`},
		{name: "no user", method: http.MethodPost, query: timeline, vars: map[string]any{"u": "nobody"}},
	}
	for _, r := range requests {
		t.Run(r.name, func(t *testing.T) {
			send := func(h http.Handler) *httptest.ResponseRecorder {
				var req *http.Request
				if r.method == http.MethodGet {
					q := url.Values{"query": {r.query}}
					if r.vars != nil {
						vars, _ := json.Marshal(r.vars)
						q.Set("variables", string(vars))
					}
					req = httptest.NewRequest(http.MethodGet, "/query?"+q.Encode(), nil)
				} else {
					b, _ := json.Marshal(map[string]any{"query": r.query, "variables": r.vars})
					req = httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(b))
					req.Header.Set("Content-Type", "application/json")
				}
				if r.accept != "" {
					req.Header.Set("Accept", r.accept)
				}
				if r.token {
					req.Header.Set("Authorization", "Bearer "+ann.Token)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			got := send(ours)
			sameAnswer(t, got, send(theirs))
			if strings.HasPrefix(r.name, "data") && !bytes.Contains(got.Body.Bytes(), []byte(`"<b>5 > 4 & 3 < 4</b>`)) {
				t.Errorf("the post's body is not in the answer as itself: %s", got.Body.Bytes())
			}
		})
	}
}

// sameAnswer fails t unless ours answers as theirs, gqlgen's transport,
// once ours is escaped as json.Marshal escapes strings.
func sameAnswer(t *testing.T, ours, theirs *httptest.ResponseRecorder) {
	t.Helper()
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, ours.Body.Bytes())
	if ours.Code != theirs.Code || ours.Header().Get("Content-Type") != theirs.Header().Get("Content-Type") ||
		!bytes.Equal(escaped.Bytes(), theirs.Body.Bytes()) {
		t.Errorf("ours: %d %s\n%s\ngqlgen's: %d %s\n%s", ours.Code, ours.Header().Get("Content-Type"), ours.Body.Bytes(),
			theirs.Code, theirs.Header().Get("Content-Type"), theirs.Body.Bytes())
	}
	if !json.Valid(ours.Body.Bytes()) {
		t.Errorf("ours is not JSON: %s", ours.Body.Bytes())
	}
}

// TestTransportsLeaveUndecodableRequestsToGqlgens: a POST body or a GET
// query string that does not decode, which the server's checks refuse
// before any transport reads it, is answered by extensions.POST and GET
// as gqlgen's transports answer it, body read error included.
func TestTransportsLeaveUndecodableRequestsToGqlgens(t *testing.T) {
	t.Parallel()
	exec := gqlexecutor.New(&graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return &ast.Schema{} },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 0, false },
	})
	cases := []struct {
		name       string
		ours, them graphql.Transport
		request    func() *http.Request
	}{
		{"a body that is not JSON", extensions.POST{}, transport.POST{}, func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(`{"query": `))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
		{"a body that cannot be read", extensions.POST{}, transport.POST{}, func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(`{"query": "{ viewer { id } }"}`))
			r.Header.Set("Content-Type", "application/json")
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 5)
			return r
		}},
		{"variables that are not JSON", extensions.GET{}, transport.GET{}, func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/query?query=%7B+viewer+%7B+id+%7D+%7D&variables=%7B", nil)
		}},
		{"extensions that are not JSON", extensions.GET{}, transport.GET{}, func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/query?query=%7B+viewer+%7B+id+%7D+%7D&extensions=%5B%5D%5D", nil)
		}},
		{"a query string that does not decode", extensions.GET{}, transport.GET{}, func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/query?query=%zz", nil)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ours, theirs := httptest.NewRecorder(), httptest.NewRecorder()
			c.ours.Do(ours, c.request(), exec)
			c.them.Do(theirs, c.request(), exec)
			sameAnswer(t, ours, theirs)
		})
	}
}

// WriteResponse writes what json.Marshal writes for every member of a
// response, the data copied as it is.
func TestWriteResponseWritesWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	yes := true
	responses := []*graphql.Response{
		{},
		{Data: json.RawMessage(`{"a":"<&>"}`)},
		{Data: json.RawMessage(`null`), Errors: graphql.ErrorResponse(t.Context(), "no %s", "<thing>").Errors},
		{Data: json.RawMessage(`{"a":1}`), Label: "l", Path: nil, HasNext: &yes, Extensions: map[string]any{"code": "X", "n": 2}},
		{Errors: graphql.ErrorResponse(t.Context(), "refused").Errors, Extensions: map[string]any{"x": []int{1}}},
	}
	for _, res := range responses {
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var got, escaped bytes.Buffer
		if err := extensions.WriteResponse(&got, res); err != nil {
			t.Fatal(err)
		}
		json.HTMLEscape(&escaped, got.Bytes())
		if !bytes.Equal(escaped.Bytes(), want) {
			t.Errorf("WriteResponse wrote %s, json.Marshal %s", got.Bytes(), want)
		}
	}
}
