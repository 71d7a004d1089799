package settings

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"feedservice/internal/ratelimit"
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
	// DefaultQueryCacheMaxBytes caps the parsed documents kept (a thousand
	// at most) by default, in bytes as the server estimates them (its
	// parsedDocumentBytes): a parsed tree holds 20 to 50 times its text, so a cap on text
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
	// DefaultMaxOperationsInFlight bounds the operations running at once on
	// an instance by default (api/inflight.go): HTTP requests to /query, and
	// queries and mutations over websockets. Each of the costliest the
	// complexity limit lets through holds a few MB while it runs.
	DefaultMaxOperationsInFlight = 128
	// DefaultMaxOperationsPerAddress bounds those of one client address (an
	// IPv6 /64) by default: a thirty-second of the instance's, so that it
	// takes 32 addresses to fill it (16 let 8 addresses do it). An
	// operation holds its place while it runs, not while its answer is
	// sent, so a browser's 6 requests at once to one host rarely meet it.
	DefaultMaxOperationsPerAddress = 4
	// DefaultMaxOperationsPerViewer bounds those of one signed-in user by
	// default, counted apart from their address's: anonymous requests
	// from an address cannot take a signed-in user's places there.
	DefaultMaxOperationsPerViewer = 4
	// DefaultErrorBytesPerRequestByte and DefaultErrorBytesAllowance bound
	// the errors of one answer by default: at most this many times the
	// bytes of its request (document and variables), plus the allowance.
	// Past it the answer is refused whole with RESPONSE_TOO_LARGE: a
	// request may not buy an answer of errors much larger than itself.
	DefaultErrorBytesPerRequestByte = 4
	DefaultErrorBytesAllowance      = 64 << 10
	// DefaultMaxSubscriptionComplexity is the most a subscription may cost
	// by default, a tenth of a query's: its selection runs again on every
	// event, each event spending its price from the viewer's
	// COMPLEXITY_RATE. The app's feedItemAdded costs about 30, unreadCount
	// 21.
	DefaultMaxSubscriptionComplexity = 1000
	// DefaultSubscriptionEventLease is how many events of a subscription's
	// price a viewer's subscriptions on one instance pay for at once from
	// COMPLEXITY_RATE by default (api/events.go, eventLeases), so that an
	// event does not wait on a call to Redis: one budget call per this many
	// events (16 of unreadCount's 20 are 320 of the default 300,000 a
	// minute). It bounds how late the budget's refusal may come: a viewer
	// whose budget is spent elsewhere still runs, on each instance and at
	// each price, the events already paid for, at most this many less one,
	// and the next is refused as before.
	DefaultSubscriptionEventLease = 16
	// DefaultMaxResponseBytes caps the bytes of one answer (a batch's
	// answers together) by default, refused whole with RESPONSE_TOO_LARGE
	// past it: the default complexity limit buys about this much text
	// (resolvers.TextBytesPerUnit); the app's largest page is about 150 KB.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxResponseBytesInFlight caps the bytes of the answers an
	// instance holds at once, being made or sent, by default; one client
	// (a signed-in user, each account apart, or a signed-out address) may
	// hold its share of them, the share of the operations in
	// flight it may run (MaxOperationsPerAddress/MaxOperationsInFlight), but
	// never less than one answer at the cap.
	DefaultMaxResponseBytesInFlight = 128 << 20
	// DefaultMinWriteRate and DefaultMinWriteTime bound how long an answer
	// may take to send by default: MinWriteTime, and a second for each
	// MinWriteRate bytes of it (2 Mbit/s). A client that stops reading is
	// cut off then, not at WriteTimeout: 5.4 s for a page of 100 KB, 21 s
	// for an answer at the cap.
	DefaultMinWriteRate = 256 << 10
	DefaultMinWriteTime = 5 * time.Second
	// DefaultMaxOperationsPerSocket bounds the queries and mutations
	// running at once on one websocket by default (clients send most of
	// theirs by HTTP and subscribe over the socket).
	DefaultMaxOperationsPerSocket = 8
	// DefaultComplexityRate is each viewer's (or signed-out address's)
	// budget of complexity by default, spent by every operation's price: 30
	// operations at the complexity limit a minute, or 50 of the app's feed
	// page at its largest.
	DefaultComplexityRate = "300000/1m"
	// DefaultWebsocketSubscribeRate is how many subscriptions one
	// websocket may start by default, as count/period: a client subscribes
	// to a few fields when it connects and again after a reconnect, where a
	// subscribe-and-complete loop ran 20,000 starts in 11 s.
	DefaultWebsocketSubscribeRate = "60/1m"
	// DefaultWebsocketPingRate is how many pings one websocket may send by
	// default, as count/period: a client pinging every second stays within
	// it; each ping is answered, so a flood cost the server a pong apiece.
	DefaultWebsocketPingRate = "60/1m"
	// DefaultSocketSendBufferBytes is the send buffer asked of the kernel
	// for each accepted connection by default (SO_SNDBUF; Linux keeps
	// twice it for its bookkeeping): the bytes of an answer a client that
	// stopped reading can park in the kernel, where the answer budget no
	// longer counts them. The system's default grows to 4 MiB a connection
	// (tcp_wmem). 256 KiB sustains 2.5 MB/s at a 100 ms round trip, ten
	// times MinWriteRate.
	DefaultSocketSendBufferBytes = 256 << 10
	// DefaultMaxConnections caps the connections open on an instance by
	// default; never more than the open-file limit leaves (see
	// api/connections.go).
	DefaultMaxConnections = 50_000
	// DefaultMetricsAddr is where /metrics is served by default: loopback
	// only, apart from the public listener.
	DefaultMetricsAddr = "127.0.0.1:9090"
)

// ClientLimits is the settings of the limits above; Settings embeds it.
type ClientLimits struct {
	ReadTimeout               time.Duration
	WriteTimeout              time.Duration
	IdleTimeout               time.Duration
	MaxConnectionsPerAddress  int
	WebsocketMaxMessageBytes  int
	PersistedQueryMaxEntries  int
	PersistedQueryMaxBytes    int
	QueryCacheMaxBytes        int
	MaxQuerySelections        int
	MaxOperationsInFlight     int
	MaxOperationsPerAddress   int
	MaxOperationsPerViewer    int
	MaxSubscriptionComplexity int
	SubscriptionEventLease    int // events
	ErrorBytesPerRequestByte  int
	ErrorBytesAllowance       int
	MaxOperationsPerSocket    int
	MaxResponseBytes          int
	MaxResponseBytesInFlight  int
	MinWriteRate              int // bytes per second
	MinWriteTime              time.Duration
	ComplexityRate            ratelimit.Rate
	WebsocketSubscribeRate    ratelimit.Rate // per socket
	WebsocketPingRate         ratelimit.Rate // per socket
	SocketSendBufferBytes     int
	MaxConnections            int
	MetricsAddr               string
	MetricsPprof              bool
}

// flags registers the settings on fs, their defaults from the environment.
func (h *ClientLimits) flags(fs *flag.FlagSet, env *environment) {
	fs.DurationVar(&h.ReadTimeout, "read-timeout", env.duration("READ_TIMEOUT", DefaultReadTimeout), "how long a client may take to send a request, headers and body; websockets are exempt once upgraded (READ_TIMEOUT)")
	fs.DurationVar(&h.WriteTimeout, "write-timeout", env.duration("WRITE_TIMEOUT", DefaultWriteTimeout), "how long a plain response may take from the end of the request's headers; websockets are exempt (WRITE_TIMEOUT)")
	fs.DurationVar(&h.IdleTimeout, "idle-timeout", env.duration("IDLE_TIMEOUT", DefaultIdleTimeout), "how long a keep-alive connection may wait for its next request (IDLE_TIMEOUT)")
	fs.IntVar(&h.MaxConnectionsPerAddress, "max-connections-per-address", env.int("MAX_CONNECTIONS_PER_ADDRESS", DefaultMaxConnectionsPerAddress), "connections one peer address may hold open at once; TRUSTED_PROXIES are exempt (MAX_CONNECTIONS_PER_ADDRESS)")
	fs.IntVar(&h.WebsocketMaxMessageBytes, "ws-max-message-bytes", env.int("WS_MAX_MESSAGE_BYTES", DefaultWebsocketMaxMessageBytes), "longest websocket message, connection_init included (WS_MAX_MESSAGE_BYTES)")
	fs.IntVar(&h.PersistedQueryMaxEntries, "persisted-query-max-entries", env.int("PERSISTED_QUERY_MAX_ENTRIES", DefaultPersistedQueryMaxEntries), "documents the persisted-query cache keeps (PERSISTED_QUERY_MAX_ENTRIES)")
	fs.IntVar(&h.PersistedQueryMaxBytes, "persisted-query-max-bytes", env.int("PERSISTED_QUERY_MAX_BYTES", DefaultPersistedQueryMaxBytes), "bytes of documents the persisted-query cache keeps (PERSISTED_QUERY_MAX_BYTES)")
	fs.IntVar(&h.QueryCacheMaxBytes, "query-cache-max-bytes", env.int("QUERY_CACHE_MAX_BYTES", DefaultQueryCacheMaxBytes), "bytes of parsed documents (their text and tree, as estimated) the cache of parsed documents keeps (QUERY_CACHE_MAX_BYTES)")
	fs.IntVar(&h.MaxQuerySelections, "max-query-selections", env.int("MAX_QUERY_SELECTIONS", DefaultMaxQuerySelections), "fields, fragment spreads and inline fragments written in a document, checked before validation (MAX_QUERY_SELECTIONS)")
	fs.IntVar(&h.MaxOperationsInFlight, "max-operations-in-flight", env.int("MAX_OPERATIONS_IN_FLIGHT", DefaultMaxOperationsInFlight), "HTTP requests to /query and websocket queries and mutations running at once on this instance; past it they are refused at once (MAX_OPERATIONS_IN_FLIGHT)")
	fs.IntVar(&h.MaxOperationsPerAddress, "max-operations-per-address", env.int("MAX_OPERATIONS_PER_ADDRESS", DefaultMaxOperationsPerAddress), "of those, from one client address (an IPv6 /64) (MAX_OPERATIONS_PER_ADDRESS)")
	fs.IntVar(&h.MaxOperationsPerViewer, "max-operations-per-viewer", env.int("MAX_OPERATIONS_PER_VIEWER", DefaultMaxOperationsPerViewer), "of those, of one signed-in user, counted apart from their address's (MAX_OPERATIONS_PER_VIEWER)")
	fs.IntVar(&h.MaxSubscriptionComplexity, "max-subscription-complexity", env.int("MAX_SUBSCRIPTION_COMPLEXITY", DefaultMaxSubscriptionComplexity), "the most a subscription may cost; each of its events spends that again from COMPLEXITY_RATE (MAX_SUBSCRIPTION_COMPLEXITY)")
	fs.IntVar(&h.SubscriptionEventLease, "subscription-event-lease", env.int("SUBSCRIPTION_EVENT_LEASE", DefaultSubscriptionEventLease), "events of a subscription's price a viewer's subscriptions on this instance pay for at once from COMPLEXITY_RATE, one call to Redis each time; a refusal may come this many events less one late (SUBSCRIPTION_EVENT_LEASE)")
	fs.IntVar(&h.ErrorBytesPerRequestByte, "error-bytes-per-request-byte", env.int("ERROR_BYTES_PER_REQUEST_BYTE", DefaultErrorBytesPerRequestByte), "an answer's errors may hold this many bytes per byte of its request, plus ERROR_BYTES_ALLOWANCE; past it RESPONSE_TOO_LARGE (ERROR_BYTES_PER_REQUEST_BYTE)")
	fs.IntVar(&h.ErrorBytesAllowance, "error-bytes-allowance", env.int("ERROR_BYTES_ALLOWANCE", DefaultErrorBytesAllowance), "bytes of errors any answer may hold, beside those per byte of its request (ERROR_BYTES_ALLOWANCE)")
	fs.IntVar(&h.MaxOperationsPerSocket, "max-operations-per-socket", env.int("MAX_OPERATIONS_PER_SOCKET", DefaultMaxOperationsPerSocket), "queries and mutations running at once on one websocket (MAX_OPERATIONS_PER_SOCKET)")
	fs.IntVar(&h.MaxResponseBytes, "max-response-bytes", env.int("MAX_RESPONSE_BYTES", DefaultMaxResponseBytes), "bytes of one answer (a batch's together); a larger one is refused whole with RESPONSE_TOO_LARGE (MAX_RESPONSE_BYTES)")
	fs.IntVar(&h.MaxResponseBytesInFlight, "max-response-bytes-in-flight", env.int("MAX_RESPONSE_BYTES_IN_FLIGHT", DefaultMaxResponseBytesInFlight), "bytes of the answers this instance holds at once, being made or sent; one client (a signed-in user, or a signed-out address) may hold its share, as of operations in flight; past it RATE_LIMITED (MAX_RESPONSE_BYTES_IN_FLIGHT)")
	fs.IntVar(&h.MinWriteRate, "min-write-rate", env.int("MIN_WRITE_RATE", DefaultMinWriteRate), "bytes per second a client must read an answer at: sending one may take MIN_WRITE_TIME and a second per MIN_WRITE_RATE bytes, then its connection is closed (MIN_WRITE_RATE)")
	fs.DurationVar(&h.MinWriteTime, "min-write-time", env.duration("MIN_WRITE_TIME", DefaultMinWriteTime), "how long sending any answer may take, beside its bytes at MIN_WRITE_RATE (MIN_WRITE_TIME)")
	h.ComplexityRate = env.rate("COMPLEXITY_RATE", DefaultComplexityRate)
	fs.Var(rateValue{&h.ComplexityRate}, "complexity-rate", "complexity per viewer, or per client address when signed out, as count/period; every operation spends its price; off for none (COMPLEXITY_RATE)")
	h.WebsocketSubscribeRate = env.rate("WS_SUBSCRIBE_RATE", DefaultWebsocketSubscribeRate)
	fs.Var(rateValue{&h.WebsocketSubscribeRate}, "ws-subscribe-rate", "subscriptions one websocket may start, as count/period; past it a subscribe is refused with RATE_LIMITED (WS_SUBSCRIBE_RATE)")
	h.WebsocketPingRate = env.rate("WS_PING_RATE", DefaultWebsocketPingRate)
	fs.Var(rateValue{&h.WebsocketPingRate}, "ws-ping-rate", "pings one websocket may send, as count/period; past it the socket is closed with 4429 (WS_PING_RATE)")
	fs.IntVar(&h.SocketSendBufferBytes, "socket-send-buffer-bytes", env.int("SOCKET_SEND_BUFFER_BYTES", DefaultSocketSendBufferBytes), "send buffer asked of the kernel for each accepted connection, bounding the answer bytes a client that stops reading parks there (SOCKET_SEND_BUFFER_BYTES)")
	fs.IntVar(&h.MaxConnections, "max-connections", env.int("MAX_CONNECTIONS", DefaultMaxConnections), "connections open on this instance, at most the open-file limit less what the server needs besides (MAX_CONNECTIONS)")
	fs.StringVar(&h.MetricsAddr, "metrics-addr", env.text("METRICS_ADDR", DefaultMetricsAddr), "listen address of /metrics, apart from -addr; empty: no metrics listener (METRICS_ADDR)")
	fs.BoolVar(&h.MetricsPprof, "metrics-pprof", env.bool("METRICS_PPROF", false), "serve Go's profiles (net/http/pprof) at /debug/pprof/ on the metrics listener (METRICS_PPROF)")
}

// check refuses settings that would switch a limit off by accident.
func (h ClientLimits) check() error {
	for name, d := range map[string]time.Duration{"read-timeout": h.ReadTimeout, "write-timeout": h.WriteTimeout, "idle-timeout": h.IdleTimeout, "min-write-time": h.MinWriteTime} {
		if d <= 0 {
			return fmt.Errorf("-%s must be more than 0", name)
		}
	}
	for name, n := range map[string]int{"max-connections-per-address": h.MaxConnectionsPerAddress, "ws-max-message-bytes": h.WebsocketMaxMessageBytes,
		"persisted-query-max-entries": h.PersistedQueryMaxEntries, "persisted-query-max-bytes": h.PersistedQueryMaxBytes,
		"query-cache-max-bytes": h.QueryCacheMaxBytes, "max-query-selections": h.MaxQuerySelections,
		"max-operations-in-flight": h.MaxOperationsInFlight, "max-operations-per-address": h.MaxOperationsPerAddress,
		"max-operations-per-socket": h.MaxOperationsPerSocket, "max-connections": h.MaxConnections,
		"max-operations-per-viewer": h.MaxOperationsPerViewer, "error-bytes-allowance": h.ErrorBytesAllowance,
		"max-subscription-complexity": h.MaxSubscriptionComplexity, "subscription-event-lease": h.SubscriptionEventLease,
		"max-response-bytes": h.MaxResponseBytes, "max-response-bytes-in-flight": h.MaxResponseBytesInFlight, "min-write-rate": h.MinWriteRate,
		"socket-send-buffer-bytes": h.SocketSendBufferBytes} {
		if n < 1 {
			return fmt.Errorf("-%s must be at least 1", name)
		}
	}
	for name, r := range map[string]ratelimit.Rate{"ws-subscribe-rate": h.WebsocketSubscribeRate, "ws-ping-rate": h.WebsocketPingRate} {
		if r.Off() {
			return fmt.Errorf("-%s may not be off", name)
		}
	}
	if h.ErrorBytesPerRequestByte < 0 {
		return errors.New("-error-bytes-per-request-byte must be at least 0")
	}
	if h.MaxResponseBytesInFlight < h.MaxResponseBytes {
		return fmt.Errorf("-max-response-bytes-in-flight (%d) must be at least -max-response-bytes (%d): below it every answer at the cap is refused", h.MaxResponseBytesInFlight, h.MaxResponseBytes)
	}
	return nil
}

// describe lists the settings for the start-up log.
func (h ClientLimits) describe() []any {
	return []any{"readTimeout", h.ReadTimeout, "writeTimeout", h.WriteTimeout, "idleTimeout", h.IdleTimeout,
		"maxConnectionsPerAddress", h.MaxConnectionsPerAddress, "websocketMaxMessageBytes", h.WebsocketMaxMessageBytes,
		"persistedQueryMaxEntries", h.PersistedQueryMaxEntries, "persistedQueryMaxBytes", h.PersistedQueryMaxBytes,
		"queryCacheMaxBytes", h.QueryCacheMaxBytes, "maxQuerySelections", h.MaxQuerySelections,
		"maxOperationsInFlight", h.MaxOperationsInFlight, "maxOperationsPerAddress", h.MaxOperationsPerAddress,
		"maxOperationsPerSocket", h.MaxOperationsPerSocket, "maxOperationsPerViewer", h.MaxOperationsPerViewer,
		"maxSubscriptionComplexity", h.MaxSubscriptionComplexity, "subscriptionEventLease", h.SubscriptionEventLease,
		"errorBytesPerRequestByte", h.ErrorBytesPerRequestByte, "errorBytesAllowance", h.ErrorBytesAllowance, "maxResponseBytes", h.MaxResponseBytes,
		"maxResponseBytesInFlight", h.MaxResponseBytesInFlight, "minWriteRate", h.MinWriteRate, "minWriteTime", h.MinWriteTime,
		"complexityRate", h.ComplexityRate.String(), "websocketSubscribeRate", h.WebsocketSubscribeRate.String(),
		"websocketPingRate", h.WebsocketPingRate.String(), "socketSendBufferBytes", h.SocketSendBufferBytes,
		"maxConnections", h.MaxConnections, "metricsAddr", h.MetricsAddr, "metricsPprof", h.MetricsPprof}
}

// rateValue is a flag of a ratelimit.Rate, written count/period or off.
type rateValue struct{ r *ratelimit.Rate }

func (v rateValue) String() string {
	if v.r == nil {
		return ""
	}
	return v.r.String()
}

func (v rateValue) Set(s string) error {
	r, err := ratelimit.ParseRate(s)
	if err != nil {
		return err
	}
	*v.r = r
	return nil
}
