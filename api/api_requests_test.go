package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestErrorsRequestFormat: a request that no transport takes (a method, a
// Content-Type, a body that is not JSON) gets a GraphQL error with
// extensions.code and a message that says what is wrong: never gqlgen's
// bare "transport not supported", and a truncated body is told it is
// malformed, not too large. The same request well formed is answered.
func TestErrorsRequestFormat(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	const query = `{"query": "{ viewer { id } }"}`
	send := func(method, contentType, body string) (int, response) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+"/query", strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, errsDecode(t, res.StatusCode, raw)
	}
	for _, tc := range []struct {
		name, method, contentType, body string
		status                          int
		says                            []string
	}{
		{"curl's default Content-Type", http.MethodPost, "application/x-www-form-urlencoded", query, http.StatusUnsupportedMediaType,
			[]string{"Content-Type: application/json", `"application/x-www-form-urlencoded"`, "curl"}},
		{"no Content-Type", http.MethodPost, "", query, http.StatusUnsupportedMediaType, []string{"Content-Type: application/json", "has none"}},
		{"text/plain", http.MethodPost, "text/plain", query, http.StatusUnsupportedMediaType, []string{`"text/plain"`}},
		{"truncated JSON", http.MethodPost, "application/json", `{"query": "{ viewer { id } }"`, http.StatusBadRequest,
			[]string{"not well-formed JSON", "unexpected end of JSON input"}},
		{"a stray comma", http.MethodPost, "application/json", `{"query": "{ viewer { id } }",}`, http.StatusBadRequest,
			[]string{"not well-formed JSON", "at byte 31 of 31"}},
		{"empty body", http.MethodPost, "application/json", "", http.StatusBadRequest, []string{"the request body is empty"}},
		{"a JSON string", http.MethodPost, "application/json", `"{ viewer { id } }"`, http.StatusBadRequest, []string{"must be a JSON object"}},
		{"PUT", http.MethodPut, "application/json", query, http.StatusMethodNotAllowed, []string{"PUT is not a way", "POST a JSON body"}},
		{"DELETE", http.MethodDelete, "", "", http.StatusMethodNotAllowed, []string{"DELETE is not a way"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, r := send(tc.method, tc.contentType, tc.body)
			errsCheck(t, r)
			if status != tc.status || r.Code() != "BAD_USER_INPUT" || len(r.Errors) != 1 {
				t.Fatalf("status %d, errors %+v; want %d and one BAD_USER_INPUT", status, r.Errors, tc.status)
			}
			msg := r.Errors[0].Message
			for _, want := range tc.says {
				if !strings.Contains(msg, want) {
					t.Errorf("the message %q does not say %q", msg, want)
				}
			}
			for _, wrong := range []string{"transport not supported", "at most"} {
				if strings.Contains(msg, wrong) {
					t.Errorf("the message %q says %q", msg, wrong)
				}
			}
		})
	}
	for _, contentType := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		if status, r := send(http.MethodPost, contentType, query); status != http.StatusOK || len(r.Errors) != 0 {
			t.Errorf("Content-Type %s: status %d, errors %+v; want the query answered", contentType, status, r.Errors)
		}
	}
	res, err := http.Post(s.URL+"/query", "application/json", strings.NewReader("["+query+","+query+"]"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(string(raw), `[{"data"`) {
		t.Errorf("a batch: status %d, %s", res.StatusCode, raw)
	}
}
