package gqlclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Post sends the document, the variables, the token and the extra headers,
// and returns what the server answered, status included; Do fails for an
// answer with errors or a status other than 200, and for a body that is
// not JSON.
func TestPostAndDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string
			Variables map[string]any
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		switch {
		case r.URL.Path != "/query" || r.Header.Get("Content-Type") != "application/json":
			w.WriteHeader(http.StatusNotFound)
		case req.Query == "notjson":
			w.Write([]byte("<html>"))
		case r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Extra") != "1":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"errors":[{"message":"who?","extensions":{"code":"UNAUTHENTICATED"}}]}`))
		default:
			json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"echo": req.Variables["v"]}})
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := &Client{URL: srv.URL, Header: http.Header{"X-Extra": {"1"}}}

	var out struct{ Echo string }
	if err := c.Do(ctx, "tok", "q", map[string]any{"v": "hi"}, &out); err != nil || out.Echo != "hi" {
		t.Fatalf("Do: %v, %+v", err, out)
	}
	r, err := c.Post(ctx, "", "q", nil)
	if err != nil || r.Status != http.StatusUnauthorized || r.Code() != "UNAUTHENTICATED" {
		t.Fatalf("Post signed out: %+v, %v", r, err)
	}
	if err := c.Do(ctx, "", "q", nil, nil); err == nil || !strings.Contains(err.Error(), "UNAUTHENTICATED") {
		t.Fatalf("Do with errors: %v", err)
	}
	if _, err := c.Post(ctx, "tok", "notjson", nil); err == nil {
		t.Fatal("a body that is not JSON is not an error")
	}
}
