// Command feedservice serves the follow-feed GraphQL API.
//
//	go run .            serve on the embedded default (SQLite + in-process Redis)
//	go run . -seed      load the demo graph first
//	go run . migrate    apply schema migrations and exit
//	go run . seed       load the demo graph and exit
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(os.Args[1:], log); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(args []string, log *slog.Logger) error {
	command := "serve"
	if len(args) > 0 && (args[0] == "migrate" || args[0] == "seed" || args[0] == "serve") {
		command, args = args[0], args[1:]
	}
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	log.Info("settings", cfg.describe()...)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	a, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	switch command {
	case "migrate":
		return nil // newApp migrated
	case "seed":
		return seed(ctx, a.engine, defaultSeedSize, os.Stdout)
	}
	if cfg.Seed {
		if err := seed(ctx, a.engine, defaultSeedSize, os.Stdout); err != nil {
			return err
		}
	}
	if err := serveMetrics(ctx, cfg.MetricsAddr, a.metricsHandler(), log); err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	ln, err := cfg.listen()
	if err != nil {
		return err
	}
	return serve(ctx, cfg.httpServer(a.handler()), ln, log, a.websockets.goAway)
}

// serve listens until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish (within ShutdownGrace) while
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
	log.Info("shutting down", "grace", ShutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	var sockets sync.WaitGroup
	sockets.Go(func() { log.Info("websockets closed", "count", goAway()) })
	err := srv.Shutdown(shutdownCtx)
	sockets.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: in-flight requests did not finish within %s: %w", ShutdownGrace, err)
	}
	log.Info("http server stopped; stopping the engine")
	return nil
}
