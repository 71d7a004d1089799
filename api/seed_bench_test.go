package api

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
)

// BenchmarkSeed times Service.Seed, what `go run . -seed` runs before it
// serves, with the default demo graph (defaultSeedSize) and bcrypt cost,
// into an empty database: on the embedded default (SQLite and the
// in-process Redis, the README's first hour) and on MariaDB and Redis.
// Each iteration opens a fresh instance, outside the timer.
func BenchmarkSeed(b *testing.B) {
	for _, backend := range backends() {
		b.Run(backend, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				cfg := testConfig(b, backend, func(c *settings.Settings) { c.BcryptCost = feedconfig.DefaultBcryptCost })
				a, err := openApp(context.Background(), cfg, slog.New(slog.DiscardHandler))
				if err != nil {
					b.Fatal(err)
				}
				svc := &Service{app: a}
				b.StartTimer()
				if err := svc.Seed(context.Background(), io.Discard); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				svc.Close()
				b.StartTimer()
			}
		})
	}
}
