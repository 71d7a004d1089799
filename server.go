// Command feedservice serves the follow-feed GraphQL API.
//
//	go run .            serve on the embedded default (SQLite + in-process Redis)
//	go run . -seed      load the demo graph first
//	go run . migrate    apply schema migrations and exit
//	go run . seed       load the demo graph and exit
//	go run . -h         the commands and every flag
//
// Flags may stand before or after the command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"feedservice/api"
	"feedservice/api/settings"
)

// commands are the words the command line takes besides flags, with what
// each does; serve is the default.
var commands = []struct{ name, does string }{
	{"serve", "serve the API on -addr (the default)"},
	{"migrate", "apply the database migrations and exit"},
	{"seed", "load the demo graph (sign in as alice / " + api.SeedPassword + ") and exit"},
	{"shard-copy", "copy the one database of -copy-from into the sharded layout of -mysql-dsn and -mysql-shards, migrated and empty, and exit"},
}

// usageError is a command line that names no command or flag the server
// knows: it is told on stderr, with exit status 2, before anything starts.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{ReplaceAttr: durationsAsText}))
	err := run(os.Args[1:], os.Stdout, log)
	var usage usageError
	switch {
	case err == nil:
	case errors.As(err, &usage):
		fmt.Fprintf(os.Stderr, "feedservice: %v\nRun with -h for the commands and flags.\n", err)
		os.Exit(2)
	default:
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

// durationsAsText writes a duration in the log as Go writes it (1.5s,
// 250ms, 168h0m0s), where slog's JSON handler writes nanoseconds.
func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// run runs the command of args; -h and --help write the usage to stdout.
func run(args []string, stdout io.Writer, log *slog.Logger) error {
	cfg, words, err := settings.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(stdout)
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	command, err := pickCommand(words)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if command == "shard-copy" {
		return api.ShardCopy(ctx, cfg, stdout)
	}
	svc, err := api.New(ctx, cfg, log) // applies the migrations
	if err != nil {
		return err
	}
	defer svc.Close()
	if command == "migrate" {
		return nil
	}
	if command == "seed" || cfg.Seed {
		if err := svc.Seed(ctx, stdout); err != nil {
			return err
		}
	}
	if command == "seed" {
		return nil
	}
	return svc.Serve(ctx)
}

// pickCommand is the command that words name: serve when none, an error for
// a word that is not a command or for a second one.
func pickCommand(words []string) (string, error) {
	if len(words) == 0 {
		return "serve", nil
	}
	if len(words) > 1 {
		return "", fmt.Errorf("one command at a time: got %q and %q", words[0], words[1])
	}
	for _, c := range commands {
		if c.name == words[0] {
			return c.name, nil
		}
	}
	return "", fmt.Errorf("unknown command %q: the commands are serve, migrate, seed and shard-copy", words[0])
}

// writeUsage writes the commands and every flag.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "Usage: feedservice [flags] [command] [flags]\n\nThe follow-feed GraphQL API. With no configuration it runs on an embedded SQLite file\nand an in-process Redis.\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.does)
	}
	fmt.Fprint(w, "\nFlags (each also read from the environment variable in parentheses):\n")
	settings.WriteFlags(w)
}
