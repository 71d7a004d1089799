package api

import (
	"net"
	"net/http"
	"testing"

	"feedservice/api/settings"
)

// TestMetricsListener: the server process serves /metrics on METRICS_ADDR
// and not on its public address.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := l.Addr().String()
	l.Close()
	p := startServerProcess(t, buildServer(t), "METRICS_ADDR="+metricsAddr)
	if res, _ := errsGet(t, p.URL+"/metrics", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the public address: status %d", res.StatusCode)
	}
	if res, _ := errsGet(t, "http://"+metricsAddr+"/metrics", nil); res.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics on METRICS_ADDR: status %d", res.StatusCode)
	}
}

// TestMetricsPprof: Go's profiles are served on the metrics listener only
// with METRICS_PPROF, and never on the public address.
func TestMetricsPprof(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.MetricsPprof = on })
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/profile?seconds=1"} {
			if res, _ := errsGet(t, s.MetricsURL+path, nil); res.StatusCode != want {
				t.Errorf("METRICS_PPROF=%t: GET %s on the metrics listener: status %d, want %d", on, path, res.StatusCode, want)
			}
			if res, _ := errsGet(t, s.URL+path, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("METRICS_PPROF=%t: GET %s on the public address: status %d", on, path, res.StatusCode)
			}
		}
	}
}
