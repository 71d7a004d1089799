package api

import (
	"flag"
	"fmt"
	"time"
)

// Defaults of the settings that bound what one client can hold of the
// server: its connections, its time on them, its websocket messages and its
// share of the persisted-query cache.
const (
	// DefaultReadTimeout is how long a client may take to send a whole
	// request, headers and body, by default; a stalled or dripping body is
	// cut off there. Websocket upgrades are exempt once accepted.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout is how long a plain response may take, from the
	// end of the request's headers to its last byte, by default; longer
	// than any operation the complexity limit lets through. Websockets are
	// exempt.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request by default.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxConnectionsPerAddress is how many connections one peer
	// address may hold open at once by default: a household behind one
	// address with several browsers and their websockets, far below the
	// open-file limit.
	DefaultMaxConnectionsPerAddress = 256
	// DefaultWebsocketMaxMessageBytes is the longest websocket message,
	// connection_init included, by default.
	DefaultWebsocketMaxMessageBytes = 64 << 10
	// DefaultPersistedQueryMaxEntries and DefaultPersistedQueryMaxBytes cap
	// the persisted-query cache by default: a real client has a few hundred
	// documents of a few kilobytes.
	DefaultPersistedQueryMaxEntries = 10000
	DefaultPersistedQueryMaxBytes   = 32 << 20
	// DefaultQueryCacheMaxBytes caps the parsed documents kept (QueryCacheSize
	// of them at most) by default, in bytes as parsedDocumentBytes estimates
	// them: a parsed tree holds 20 to 50 times its text, so a cap on text
	// (16 MiB, a thousand documents) let a thousand refused documents of 5.9
	// KB hold 415 MB.
	DefaultQueryCacheMaxBytes = 16 << 20
	// DefaultMaxQuerySelections caps the selections (fields, fragment
	// spreads, inline fragments) written in a document by default, checked
	// before validation, whose work grows with their square: GraphiQL's
	// introspection query has 81, the app's feed page 40; 300 validate in
	// under 10 ms where the 1,996 of a document within the token limit took
	// 0.2 CPU-s.
	DefaultMaxQuerySelections = 300
	// DefaultMetricsAddr is where /metrics is served by default: loopback
	// only, apart from the public listener.
	DefaultMetricsAddr = "127.0.0.1:9090"
)

// hardeningConfig is the settings of the limits above; config embeds it.
type hardeningConfig struct {
	ReadTimeout              time.Duration
	WriteTimeout             time.Duration
	IdleTimeout              time.Duration
	MaxConnectionsPerAddress int
	WebsocketMaxMessageBytes int
	PersistedQueryMaxEntries int
	PersistedQueryMaxBytes   int
	QueryCacheMaxBytes       int
	MaxQuerySelections       int
	MetricsAddr              string
	MetricsPprof             bool
}

// flags registers the settings on fs, their defaults from the environment.
func (h *hardeningConfig) flags(fs *flag.FlagSet) {
	fs.DurationVar(&h.ReadTimeout, "read-timeout", envDuration("READ_TIMEOUT", DefaultReadTimeout), "how long a client may take to send a request, headers and body; websockets are exempt once upgraded (READ_TIMEOUT)")
	fs.DurationVar(&h.WriteTimeout, "write-timeout", envDuration("WRITE_TIMEOUT", DefaultWriteTimeout), "how long a plain response may take from the end of the request's headers; websockets are exempt (WRITE_TIMEOUT)")
	fs.DurationVar(&h.IdleTimeout, "idle-timeout", envDuration("IDLE_TIMEOUT", DefaultIdleTimeout), "how long a keep-alive connection may wait for its next request (IDLE_TIMEOUT)")
	fs.IntVar(&h.MaxConnectionsPerAddress, "max-connections-per-address", envInt("MAX_CONNECTIONS_PER_ADDRESS", DefaultMaxConnectionsPerAddress), "connections one peer address may hold open at once; TRUSTED_PROXIES are exempt (MAX_CONNECTIONS_PER_ADDRESS)")
	fs.IntVar(&h.WebsocketMaxMessageBytes, "ws-max-message-bytes", envInt("WS_MAX_MESSAGE_BYTES", DefaultWebsocketMaxMessageBytes), "longest websocket message, connection_init included (WS_MAX_MESSAGE_BYTES)")
	fs.IntVar(&h.PersistedQueryMaxEntries, "persisted-query-max-entries", envInt("PERSISTED_QUERY_MAX_ENTRIES", DefaultPersistedQueryMaxEntries), "documents the persisted-query cache keeps (PERSISTED_QUERY_MAX_ENTRIES)")
	fs.IntVar(&h.PersistedQueryMaxBytes, "persisted-query-max-bytes", envInt("PERSISTED_QUERY_MAX_BYTES", DefaultPersistedQueryMaxBytes), "bytes of documents the persisted-query cache keeps (PERSISTED_QUERY_MAX_BYTES)")
	fs.IntVar(&h.QueryCacheMaxBytes, "query-cache-max-bytes", envInt("QUERY_CACHE_MAX_BYTES", DefaultQueryCacheMaxBytes), "bytes of parsed documents (their text and tree, as estimated) the cache of parsed documents keeps (QUERY_CACHE_MAX_BYTES)")
	fs.IntVar(&h.MaxQuerySelections, "max-query-selections", envInt("MAX_QUERY_SELECTIONS", DefaultMaxQuerySelections), "fields, fragment spreads and inline fragments written in a document, checked before validation (MAX_QUERY_SELECTIONS)")
	fs.StringVar(&h.MetricsAddr, "metrics-addr", env("METRICS_ADDR", DefaultMetricsAddr), "listen address of /metrics, apart from -addr; empty: no metrics listener (METRICS_ADDR)")
	fs.BoolVar(&h.MetricsPprof, "metrics-pprof", envBool("METRICS_PPROF", false), "serve Go's profiles (net/http/pprof) at /debug/pprof/ on the metrics listener (METRICS_PPROF)")
}

// check refuses settings that would switch a limit off by accident.
func (h hardeningConfig) check() error {
	for name, d := range map[string]time.Duration{"read-timeout": h.ReadTimeout, "write-timeout": h.WriteTimeout, "idle-timeout": h.IdleTimeout} {
		if d <= 0 {
			return fmt.Errorf("-%s must be more than 0", name)
		}
	}
	for name, n := range map[string]int{"max-connections-per-address": h.MaxConnectionsPerAddress, "ws-max-message-bytes": h.WebsocketMaxMessageBytes,
		"persisted-query-max-entries": h.PersistedQueryMaxEntries, "persisted-query-max-bytes": h.PersistedQueryMaxBytes,
		"query-cache-max-bytes": h.QueryCacheMaxBytes, "max-query-selections": h.MaxQuerySelections} {
		if n < 1 {
			return fmt.Errorf("-%s must be at least 1", name)
		}
	}
	return nil
}

// describe lists the settings for the start-up log.
func (h hardeningConfig) describe() []any {
	return []any{"readTimeout", h.ReadTimeout, "writeTimeout", h.WriteTimeout, "idleTimeout", h.IdleTimeout,
		"maxConnectionsPerAddress", h.MaxConnectionsPerAddress, "wsMaxMessageBytes", h.WebsocketMaxMessageBytes,
		"persistedQueryMaxEntries", h.PersistedQueryMaxEntries, "persistedQueryMaxBytes", h.PersistedQueryMaxBytes,
		"queryCacheMaxBytes", h.QueryCacheMaxBytes, "maxQuerySelections", h.MaxQuerySelections, "metricsAddr", h.MetricsAddr, "metricsPprof", h.MetricsPprof}
}
