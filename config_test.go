package main

import (
	"strings"
	"testing"
)

// A setting that does not parse stops the server with the variable's name,
// instead of quietly running on the default.
func TestConfigRefusesUnparseableEnvironment(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"INBOX_CAP", "abc", "INBOX_CAP"},
		{"GRAPHIQL", "maybe", "GRAPHIQL"},
		{"INBOX_TTL", "7days", "INBOX_TTL"},
		{"FEED_MODE", "sideways", "sideways"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			_, err := parseConfig(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s=%s: error %v, want one naming %s", tc.name, tc.value, err, tc.want)
			}
		})
	}
}

// The same values well formed are taken, and a flag wins over the environment.
func TestConfigReadsEnvironmentAndFlags(t *testing.T) {
	t.Setenv("INBOX_CAP", "50")
	t.Setenv("INBOX_TTL", "2h")
	t.Setenv("GRAPHIQL", "false")
	c, err := parseConfig([]string{"-inbox-cap", "70"})
	if err != nil {
		t.Fatal(err)
	}
	if c.InboxCap != 70 || c.InboxTTL.String() != "2h0m0s" || c.GraphiQL {
		t.Fatalf("got cap %d ttl %s graphiql %v, want 70 2h0m0s false", c.InboxCap, c.InboxTTL, c.GraphiQL)
	}
}
