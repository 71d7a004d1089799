package api

import (
	"log/slog"
	"strings"
	"testing"

	"feedservice/api/settings"
)

// TestIntrospectionOnInProductionWarns: a start with MySQL configured (a
// production set-up) and introspection on logs one warning naming
// INTROSPECTION; with introspection off, or on the embedded default, none.
func TestIntrospectionOnInProductionWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backend       string
		introspection bool
		warnings      int
	}{{backendReal, true, 1}, {backendReal, false, 0}, {backendEmbedded, true, 0}} {
		var log syncBuffer
		newTestServerWithLog(t, tc.backend, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
			func(c *settings.Settings) { c.Introspection = tc.introspection })
		if got := strings.Count(log.String(), "INTROSPECTION is on"); got != tc.warnings {
			t.Errorf("%s, introspection %v: %d warnings naming INTROSPECTION, want %d; log:\n%s", tc.backend, tc.introspection, got, tc.warnings, log.String())
		}
	}
}
