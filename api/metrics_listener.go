package api

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"feedservice/api/settings"
)

// metricsHandler serves GET /metrics (Prometheus text). It is not on the
// public listener: the metrics tell the users' activity, the pools' sizes
// and the error rates to whoever asks, so they are served on METRICS_ADDR,
// loopback by default, for the scraper next to the server. With
// METRICS_PPROF it also serves Go's profiles at /debug/pprof/ (off by
// default: a profile costs CPU while it runs, and the goroutine dump shows
// requests in flight).
func (a *app) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.metrics.gatherer(a.engine), promhttp.HandlerOpts{}))
	if a.cfg.MetricsPprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index) // and the named profiles: heap, goroutine, mutex, block, ...
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// serveMetrics listens on addr (nothing when it is empty) and serves h
// until ctx ends. A listener that cannot open is an error at start, not a
// server that runs without its metrics.
func serveMetrics(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: settings.DefaultReadTimeout, WriteTimeout: settings.DefaultWriteTimeout, IdleTimeout: settings.DefaultIdleTimeout}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { srv.Close() })
	log.Info("metrics listening", "addr", ln.Addr().String(), "endpoint", "/metrics")
	return nil
}
