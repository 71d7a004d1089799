package api

import (
	"strconv"
	"strings"
	"testing"
)

// TestHardeningSettings: each setting of hardeningConfig has its default,
// is read from its environment variable, takes its smallest value and
// refuses one less, which would switch its limit off.
func TestHardeningSettings(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := hardeningConfig{ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout, IdleTimeout: DefaultIdleTimeout,
		MaxConnectionsPerAddress: DefaultMaxConnectionsPerAddress, WebsocketMaxMessageBytes: DefaultWebsocketMaxMessageBytes,
		PersistedQueryMaxEntries: DefaultPersistedQueryMaxEntries, PersistedQueryMaxBytes: DefaultPersistedQueryMaxBytes,
		QueryCacheMaxBytes: DefaultQueryCacheMaxBytes, MaxQuerySelections: DefaultMaxQuerySelections, MetricsAddr: DefaultMetricsAddr}
	if c.hardeningConfig != want {
		t.Fatalf("defaults %+v, want %+v", c.hardeningConfig, want)
	}
	for _, tc := range []struct {
		flag, env, least, below string
		got                     func(config) string
	}{
		{"-read-timeout", "READ_TIMEOUT", "1ns", "0s", func(c config) string { return c.ReadTimeout.String() }},
		{"-write-timeout", "WRITE_TIMEOUT", "1ns", "0s", func(c config) string { return c.WriteTimeout.String() }},
		{"-idle-timeout", "IDLE_TIMEOUT", "1ns", "0s", func(c config) string { return c.IdleTimeout.String() }},
		{"-max-connections-per-address", "MAX_CONNECTIONS_PER_ADDRESS", "1", "0", func(c config) string { return strconv.Itoa(c.MaxConnectionsPerAddress) }},
		{"-ws-max-message-bytes", "WS_MAX_MESSAGE_BYTES", "1", "0", func(c config) string { return strconv.Itoa(c.WebsocketMaxMessageBytes) }},
		{"-persisted-query-max-entries", "PERSISTED_QUERY_MAX_ENTRIES", "1", "0", func(c config) string { return strconv.Itoa(c.PersistedQueryMaxEntries) }},
		{"-persisted-query-max-bytes", "PERSISTED_QUERY_MAX_BYTES", "1", "0", func(c config) string { return strconv.Itoa(c.PersistedQueryMaxBytes) }},
		{"-query-cache-max-bytes", "QUERY_CACHE_MAX_BYTES", "1", "0", func(c config) string { return strconv.Itoa(c.QueryCacheMaxBytes) }},
		{"-max-query-selections", "MAX_QUERY_SELECTIONS", "1", "0", func(c config) string { return strconv.Itoa(c.MaxQuerySelections) }},
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
	t.Setenv("METRICS_ADDR", "")
	if c, err := parseConfig(nil); err != nil || c.MetricsAddr != "" {
		t.Errorf("METRICS_ADDR empty: %v, %q", err, c.MetricsAddr)
	}
}
