package settings

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/internal/ratelimit"
)

// TestHardeningSettings: each setting of ClientLimits has its default,
// is read from its environment variable, takes its smallest value and
// refuses one less, which would switch its limit off.
func TestHardeningSettings(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ClientLimits{ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout, IdleTimeout: DefaultIdleTimeout,
		MaxConnectionsPerAddress: DefaultMaxConnectionsPerAddress, WebsocketMaxMessageBytes: DefaultWebsocketMaxMessageBytes,
		PersistedQueryMaxEntries: DefaultPersistedQueryMaxEntries, PersistedQueryMaxBytes: DefaultPersistedQueryMaxBytes,
		QueryCacheMaxBytes: DefaultQueryCacheMaxBytes, MaxQuerySelections: DefaultMaxQuerySelections,
		MaxOperationsInFlight: DefaultMaxOperationsInFlight, MaxOperationsPerAddress: DefaultMaxOperationsPerAddress,
		MaxOperationsPerViewer: DefaultMaxOperationsPerViewer, MaxSubscriptionComplexity: DefaultMaxSubscriptionComplexity,
		SubscriptionEventLease:   DefaultSubscriptionEventLease,
		ErrorBytesPerRequestByte: DefaultErrorBytesPerRequestByte, ErrorBytesAllowance: DefaultErrorBytesAllowance,
		MaxOperationsPerSocket: DefaultMaxOperationsPerSocket, MaxResponseBytes: DefaultMaxResponseBytes,
		MaxResponseBytesInFlight: DefaultMaxResponseBytesInFlight, MinWriteRate: DefaultMinWriteRate, MinWriteTime: DefaultMinWriteTime,
		ComplexityRate:         ratelimit.Rate{Count: 300_000, Period: time.Minute},
		WebsocketSubscribeRate: ratelimit.Rate{Count: 60, Period: time.Minute}, WebsocketPingRate: ratelimit.Rate{Count: 60, Period: time.Minute},
		SocketSendBufferBytes: DefaultSocketSendBufferBytes,
		MaxConnections:        DefaultMaxConnections, MetricsAddr: DefaultMetricsAddr}
	if c.ClientLimits != want {
		t.Fatalf("defaults %+v, want %+v", c.ClientLimits, want)
	}
	for _, tc := range []struct {
		flag, env, least, below string
		got                     func(Settings) string
	}{
		{"-read-timeout", "READ_TIMEOUT", "1ns", "0s", func(c Settings) string { return c.ReadTimeout.String() }},
		{"-write-timeout", "WRITE_TIMEOUT", "1ns", "0s", func(c Settings) string { return c.WriteTimeout.String() }},
		{"-idle-timeout", "IDLE_TIMEOUT", "1ns", "0s", func(c Settings) string { return c.IdleTimeout.String() }},
		{"-max-connections-per-address", "MAX_CONNECTIONS_PER_ADDRESS", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxConnectionsPerAddress) }},
		{"-ws-max-message-bytes", "WS_MAX_MESSAGE_BYTES", "1", "0", func(c Settings) string { return strconv.Itoa(c.WebsocketMaxMessageBytes) }},
		{"-persisted-query-max-entries", "PERSISTED_QUERY_MAX_ENTRIES", "1", "0", func(c Settings) string { return strconv.Itoa(c.PersistedQueryMaxEntries) }},
		{"-persisted-query-max-bytes", "PERSISTED_QUERY_MAX_BYTES", "1", "0", func(c Settings) string { return strconv.Itoa(c.PersistedQueryMaxBytes) }},
		{"-query-cache-max-bytes", "QUERY_CACHE_MAX_BYTES", "1", "0", func(c Settings) string { return strconv.Itoa(c.QueryCacheMaxBytes) }},
		{"-max-query-selections", "MAX_QUERY_SELECTIONS", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxQuerySelections) }},
		{"-max-operations-in-flight", "MAX_OPERATIONS_IN_FLIGHT", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxOperationsInFlight) }},
		{"-max-operations-per-address", "MAX_OPERATIONS_PER_ADDRESS", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxOperationsPerAddress) }},
		{"-max-operations-per-socket", "MAX_OPERATIONS_PER_SOCKET", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxOperationsPerSocket) }},
		{"-max-connections", "MAX_CONNECTIONS", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxConnections) }},
		{"-max-response-bytes", "MAX_RESPONSE_BYTES", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxResponseBytes) }},
		// At least one answer at the cap: below it every such answer is refused.
		{"-max-response-bytes-in-flight", "MAX_RESPONSE_BYTES_IN_FLIGHT", strconv.Itoa(DefaultMaxResponseBytes), strconv.Itoa(DefaultMaxResponseBytes - 1), func(c Settings) string { return strconv.Itoa(c.MaxResponseBytesInFlight) }},
		{"-max-operations-per-viewer", "MAX_OPERATIONS_PER_VIEWER", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxOperationsPerViewer) }},
		{"-max-subscription-complexity", "MAX_SUBSCRIPTION_COMPLEXITY", "1", "0", func(c Settings) string { return strconv.Itoa(c.MaxSubscriptionComplexity) }},
		{"-subscription-event-lease", "SUBSCRIPTION_EVENT_LEASE", "1", "0", func(c Settings) string { return strconv.Itoa(c.SubscriptionEventLease) }},
		{"-error-bytes-per-request-byte", "ERROR_BYTES_PER_REQUEST_BYTE", "0", "-1", func(c Settings) string { return strconv.Itoa(c.ErrorBytesPerRequestByte) }},
		{"-error-bytes-allowance", "ERROR_BYTES_ALLOWANCE", "1", "0", func(c Settings) string { return strconv.Itoa(c.ErrorBytesAllowance) }},
		{"-min-write-rate", "MIN_WRITE_RATE", "1", "0", func(c Settings) string { return strconv.Itoa(c.MinWriteRate) }},
		{"-min-write-time", "MIN_WRITE_TIME", "1ns", "0s", func(c Settings) string { return c.MinWriteTime.String() }},
		{"-socket-send-buffer-bytes", "SOCKET_SEND_BUFFER_BYTES", "1", "0", func(c Settings) string { return strconv.Itoa(c.SocketSendBufferBytes) }},
		// The per-socket rates: one a period is the least; off would lift them.
		{"-ws-subscribe-rate", "WS_SUBSCRIBE_RATE", "1/1ns", "off", func(c Settings) string { return c.WebsocketSubscribeRate.String() }},
		{"-ws-ping-rate", "WS_PING_RATE", "1/1ns", "off", func(c Settings) string { return c.WebsocketPingRate.String() }},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, tc.least)
			c, err := parseConfig(nil)
			if err != nil || tc.got(c) != tc.least {
				t.Fatalf("%s=%s: %v (got %s)", tc.env, tc.least, err, tc.got(c))
			}
			if _, err := parseConfig([]string{tc.flag, tc.below}); err == nil || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("%s %s: %v, want a %s error", tc.flag, tc.below, err, tc.flag)
			}
		})
	}
	// The complexity budget is a rate: count/period, or off; a typo in its
	// variable or flag stops the server.
	t.Run("COMPLEXITY_RATE", func(t *testing.T) {
		t.Setenv("COMPLEXITY_RATE", "10/1s")
		if c, err := parseConfig(nil); err != nil || c.ComplexityRate != (ratelimit.Rate{Count: 10, Period: time.Second}) {
			t.Fatalf("COMPLEXITY_RATE=10/1s: %v, %v", c.ComplexityRate, err)
		}
		if c, err := parseConfig([]string{"-complexity-rate", "off"}); err != nil || !c.ComplexityRate.Off() {
			t.Fatalf("-complexity-rate off: %v, %v", c.ComplexityRate, err)
		}
		if _, err := parseConfig([]string{"-complexity-rate", "10"}); err == nil || !strings.Contains(err.Error(), "complexity-rate") {
			t.Errorf("-complexity-rate 10: %v, want an error naming it", err)
		}
		t.Setenv("COMPLEXITY_RATE", "lots")
		if _, err := parseConfig(nil); err == nil || !strings.Contains(err.Error(), "COMPLEXITY_RATE") {
			t.Errorf("COMPLEXITY_RATE=lots: %v, want an error naming it", err)
		}
	})
	t.Setenv("METRICS_ADDR", "")
	if c, err := parseConfig(nil); err != nil || c.MetricsAddr != "" {
		t.Errorf("METRICS_ADDR empty: %v, %q", err, c.MetricsAddr)
	}
}
