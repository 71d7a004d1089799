package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"feedservice/internal/gqlclient"
)

// deferDoc is the document of the report: a fragment with a non-null
// connection, deferred. It was answered with followers null, hasNext true
// and no later part, on either executor, by POST with or without
// Accept: multipart/mixed.
const deferDoc = `{ viewer { id ... @defer(label: "x") { username followers(first: 2) { totalCount } } } }`

// A document that would defer a fragment is refused before anything runs,
// with BAD_USER_INPUT and a message naming @defer, by POST (as Apollo
// Client sends it, asking for multipart/mixed, or not), by GET, in a batch and on
// both websocket protocols, on gqlgen's executor and the fast one. A
// @defer that would not defer runs inline and answers every field.
func TestDeferRefused(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	alice := s.signUp(t, "alice")
	for _, exec := range []struct {
		name  string
		stock bool
	}{{"stock", true}, {"fast", false}} {
		s.app.gqlgenExecutor = exec.stock
		hs := httptest.NewServer(s.app.handler())
		t.Cleanup(hs.Close)
		es := &testServer{URL: hs.URL, app: s.app}
		t.Run(exec.name, func(t *testing.T) {
			on := &client{s: es, Token: alice.Token, Name: alice.Name}
			refused := []struct {
				doc  string
				vars map[string]any
			}{
				{deferDoc, nil},
				{`{ viewer { id ...F @defer } } fragment F on User { followers(first: 2) { totalCount } }`, nil},
				{`query($d: Boolean!) { viewer { id ... @defer(if: $d) { followers(first: 2) { totalCount } } } }`, map[string]any{"d": true}},
				{`{ viewer { ... on User { ...G } } } fragment G on User { ... @defer { followers(first: 2) { totalCount } } }`, nil},
				{`{ viewer { ... @include(if: true) { ... @defer { followers(first: 2) { totalCount } } } } }`, nil},
				{`mutation { markFeedRead { ... @defer { unreadCount } } }`, nil},
			}
			for _, c := range refused {
				r := errsExpect(t, on, "BAD_USER_INPUT", c.doc, c.vars)
				if !strings.Contains(r.Errors[0].Message, "@defer") || len(r.Data) > 0 && string(r.Data) != "null" {
					t.Errorf("%s: answered %d %+v data %s, want a refusal naming @defer and no data", c.doc, r.Status, r.Errors, r.Data)
				}
				if r.Status != http.StatusUnprocessableEntity {
					t.Errorf("%s: status %d, want 422 as for any document that does not validate", c.doc, r.Status)
				}
			}

			// @stream is no directive of the schema: validation refuses it.
			errsExpect(t, on, "BAD_USER_INPUT", `{ viewer { followers(first: 2) @stream { edges { cursor } } } }`, nil)

			// What does not defer runs, whole.
			inline := []struct {
				doc  string
				vars map[string]any
			}{
				{`query($d: Boolean!) { viewer { id ... @defer(if: $d) { username followers(first: 2) { totalCount } } } }`, map[string]any{"d": false}},
				{`query($d: Boolean = false) { viewer { id ... @defer(if: $d) { username followers(first: 2) { totalCount } } } }`, nil},
				{`{ viewer { id username ... @skip(if: true) { ... @defer { followers(first: 2) { totalCount } } } followers(first: 2) { totalCount } } }`, nil},
				{`query($i: Boolean!) { viewer { id username ...F @include(if: $i) followers(first: 2) { totalCount } } } fragment F on User { ... @defer { id } }`, map[string]any{"i": false}},
			}
			for _, c := range inline {
				var out struct {
					Viewer struct {
						ID, Username string
						Followers    *struct{ TotalCount *int }
					}
				}
				on.mustDo(t, c.doc, c.vars, &out)
				if out.Viewer.Username != "alice" || out.Viewer.Followers == nil || out.Viewer.Followers.TotalCount == nil || *out.Viewer.Followers.TotalCount != 0 {
					t.Errorf("%s: answered %+v, want alice with 0 followers", c.doc, out.Viewer)
				}
			}

			// Apollo Client asks for multipart/mixed when a document defers:
			// the refusal is one JSON answer, nothing of a part.
			body, _ := json.Marshal(map[string]any{"query": deferDoc})
			req, _ := http.NewRequest(http.MethodPost, es.URL+"/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824,application/json")
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			res, raw := deferSend(t, req)
			var r gqlclient.Response
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || json.Unmarshal(raw, &r) != nil ||
				r.Code() != "BAD_USER_INPUT" || strings.Contains(string(raw), "hasNext") {
				t.Errorf("multipart/mixed asked: %d %s %s, want a JSON BAD_USER_INPUT refusal", res.StatusCode, ct, raw)
			}

			// By GET (Apollo's persisted queries send their hashes so).
			req, _ = http.NewRequest(http.MethodGet, es.URL+"/query?query="+url.QueryEscape(deferDoc), nil)
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			res, raw = deferSend(t, req)
			r = gqlclient.Response{}
			if json.Unmarshal(raw, &r) != nil || r.Code() != "BAD_USER_INPUT" || !strings.Contains(string(raw), "@defer") {
				t.Errorf("GET: %d %s, want a BAD_USER_INPUT refusal naming @defer", res.StatusCode, raw)
			}

			// In a batch (Apollo's BatchHttpLink), the operation that defers
			// is refused in its place, and the other runs.
			batch, _ := json.Marshal([]map[string]any{{"query": deferDoc}, {"query": `{ viewer { username } }`}})
			req, _ = http.NewRequest(http.MethodPost, es.URL+"/query", bytes.NewReader(batch))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			res, raw = deferSend(t, req)
			var answers []gqlclient.Response
			if err := json.Unmarshal(raw, &answers); err != nil || len(answers) != 2 || answers[0].Code() != "BAD_USER_INPUT" ||
				answers[1].Code() != "" || !strings.Contains(string(answers[1].Data), "alice") {
				t.Errorf("batch: %d %s, want the first refused and the second answered", res.StatusCode, raw)
			}

			for _, proto := range []string{liveTransportWS, liveLegacyWS} {
				ws := liveConnect(t, es, proto, alice.Token)
				id := ws.subscribe(deferDoc)
				m, err := ws.take(5*time.Second, func(m liveMsg) bool { return m.ID == id })
				if err != nil {
					t.Fatalf("%s: nothing for the operation: %v (queued %v)", proto, err, ws.queued())
				}
				var errs []gqlError
				switch m.Type {
				case "error":
					json.Unmarshal(m.Payload, &errs)
				case "next", "data":
					var res liveResult
					json.Unmarshal(m.Payload, &res)
					if len(res.Data) > 0 && string(res.Data) != "null" {
						t.Errorf("%s: the operation ran: %s", proto, m)
					}
					errs = res.Errors
				}
				if len(errs) == 0 || errs[0].Code() != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "@defer") {
					t.Errorf("%s: answered %s, want a BAD_USER_INPUT refusal naming @defer", proto, m)
				}
				// The socket serves on.
				id = ws.subscribe(`{ viewer { username } }`)
				res, end, err := ws.event(id, 5*time.Second)
				if err != nil || end != nil || !strings.Contains(string(res.Data), "alice") {
					t.Errorf("%s: after the refusal, a query answered %s %v %v", proto, res.Data, end, err)
				}
			}
		})
	}
}

// deferSend sends req and returns the response with its whole body.
func deferSend(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, raw
}
