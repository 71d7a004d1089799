package api

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// /metrics serves the engine's metrics in Prometheus' text format, and a
// feed read moves the read-path counter.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	reader := s.signUp(t, "reader")
	reader.mustDo(t, `{ feed(first: 5) { edges { cursor } } }`, nil, nil)
	res, err := http.Get(s.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	for _, name := range []string{
		"feed_reads_total", "feed_inbox_rebuilds_total", "feed_outbox_dispatched_total",
		"feed_fanout_tasks_total", "feed_fanout_entries_total", "feed_outbox_lag_events",
		"feed_outbox_lag_seconds", "feed_stream_lag_entries", "feed_stream_pending_entries",
		"feed_stream_length_entries",
	} {
		if !strings.Contains(string(body), "# TYPE "+name+" ") {
			t.Errorf("metric %s missing", name)
		}
	}
	if !strings.Contains(string(body), `feed_reads_total{path="rebuild"} 1`) &&
		!strings.Contains(string(body), `feed_reads_total{path="pull"} 1`) {
		t.Errorf("the feed read was not counted:\n%s", body)
	}
}

// A mutation sent by GET is refused with a coded error; a query by GET runs.
func TestGetRunsQueriesOnly(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	get := func(query string) (int, string) {
		res, err := http.Get(s.URL + "/query?query=" + url.QueryEscape(query))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	status, body := get(`mutation { signUp(input: {username: "getter", password: "long-enough-pw"}) { token } }`)
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, `"code":"BAD_USER_INPUT"`) {
		t.Fatalf("mutation by GET: %d %s", status, body)
	}
	status, body = get(`{ user(username: "getter") { id } }`)
	if status != http.StatusOK || !strings.Contains(body, `"user":null`) {
		t.Fatalf("query by GET: %d %s (and the refused mutation must not have run)", status, body)
	}
}
