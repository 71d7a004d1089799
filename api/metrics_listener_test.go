package api

import (
	"net"
	"net/http"
	"testing"
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
