package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"feedservice/api/settings"
	"feedservice/store"
)

// Service is one instance of the feed service: its database (migrated),
// Redis, the feed engine, and the HTTP and websocket face over them.
type Service struct {
	app *app
}

// New opens and migrates the database, connects Redis (or starts the
// embedded one) and makes the engine, which Serve starts. What it opens
// lives until ctx ends or Close is called.
func New(ctx context.Context, cfg settings.Settings, log *slog.Logger) (*Service, error) {
	log.Info("starting", cfg.Summary()...)
	log.Info("settings", cfg.Describe()...)
	a, err := openApp(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return &Service{app: a}, nil
}

// Seed loads the demo graph, printing its progress to out. It runs before
// Serve, while the engine has not started. On the embedded Redis, which this
// process started empty, nothing is derived yet: the seed's outbox events
// are recorded as applied, and each inbox, outbox and cached copy is built
// from the database on its first read, instead of a minute of fan-out work
// for nobody. On a Redis of its own (REDIS_ADDR), which may hold what the
// seed changes, the events wait for the dispatcher, as any change's.
func (s *Service) Seed(ctx context.Context, out io.Writer) error {
	if s.app.engineStarted {
		return errors.New("seed runs before Serve")
	}
	return seed(ctx, s.app.engine, s.app.store, s.seedEvents(), defaultSeedSize, out)
}

// seedEvents is what becomes of the seed's outbox events (see Seed).
func (s *Service) seedEvents() store.BulkEvents {
	if s.app.cfg.RedisAddr == "" && !s.app.engineStarted {
		return store.EventsApplied
	}
	return store.EventsPending
}

// Serve starts the engine and listens on the configured address (and
// /metrics on MetricsAddr) until ctx ends, then shuts down gracefully.
func (s *Service) Serve(ctx context.Context) error {
	a := s.app
	if !a.engineStarted {
		a.startEngine()
	}
	defer a.cfg.TuneRuntime()()
	if err := serveMetrics(ctx, a.cfg.MetricsAddr, a.metricsHandler(), a.log); err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	ln, maxConnections, err := listen(a.cfg)
	if err != nil {
		return err
	}
	if maxConnections < a.cfg.MaxConnections {
		// The default above the limit is the usual case, not news.
		level := slog.LevelInfo
		if a.cfg.MaxConnections != settings.DefaultMaxConnections {
			level = slog.LevelWarn
		}
		a.log.Log(ctx, level, "MAX_CONNECTIONS lowered to what the open-file limit leaves", "maxConnections", maxConnections,
			"configured", a.cfg.MaxConnections, "openFileLimit", openFileLimit())
	}
	return serve(ctx, httpServer(a.cfg, a.handler()), ln, a.log, a.websockets.GoAway)
}

// Close stops the engine and closes what New opened.
func (s *Service) Close() { s.app.close() }

// serve listens until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish (within shutdownGrace) while
// goAway closes the websockets (which Shutdown does not see). The engine
// keeps running meanwhile, so what those requests commit is dispatched; the
// caller stops it after serve returns.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, log *slog.Logger, goAway func() int) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	log.Info("listening", "addr", addr, "graphiql", fmt.Sprintf("http://%s/", addr), "endpoint", "/query")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var sockets sync.WaitGroup
	sockets.Go(func() { log.Info("websockets closed", "count", goAway()) })
	err := srv.Shutdown(shutdownCtx)
	sockets.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: in-flight requests did not finish within %s: %w", shutdownGrace, err)
	}
	log.Info("http server stopped; stopping the engine")
	return nil
}
