// Command feedservice serves the follow-feed GraphQL API.
//
//	go run .            serve on the embedded default (SQLite + in-process Redis)
//	go run . -seed      load the demo graph first
//	go run . migrate    apply schema migrations and exit
//	go run . seed       load the demo graph and exit
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"feedservice/api"
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
	cfg, err := api.ParseConfig(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	svc, err := api.New(ctx, cfg, log) // applies the migrations
	if err != nil {
		return err
	}
	defer svc.Close()
	switch command {
	case "migrate":
		return nil
	case "seed":
		return svc.Seed(ctx, os.Stdout)
	}
	if cfg.Seed {
		if err := svc.Seed(ctx, os.Stdout); err != nil {
			return err
		}
	}
	return svc.Serve(ctx)
}
