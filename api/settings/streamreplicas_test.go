package settings

import (
	"strings"
	"testing"

	feedconfig "feedservice/feed/config"
)

// TestStreamReplicasBounds: -stream-replicas defaults to one replica,
// takes 0 (wait for none: the engine gets a negative setting) and refuses
// less; -stream-replica-timeout takes a nanosecond and refuses 0 and less.
func TestStreamReplicasBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.StreamReplicas != feedconfig.DefaultStreamReplicas || c.StreamReplicaTimeout != feedconfig.DefaultStreamReplicaTimeout {
		t.Fatalf("default: %v, %d, %s; want %d, %s", err, c.StreamReplicas, c.StreamReplicaTimeout, feedconfig.DefaultStreamReplicas, feedconfig.DefaultStreamReplicaTimeout)
	}
	if got := streamReplicas(c.StreamReplicas); got != feedconfig.DefaultStreamReplicas {
		t.Errorf("the engine gets %d replicas for the default, want %d", got, feedconfig.DefaultStreamReplicas)
	}
	t.Setenv("STREAM_REPLICAS", "0")
	t.Setenv("STREAM_REPLICA_TIMEOUT", "1ns")
	if c, err = parseConfig(nil); err != nil || c.StreamReplicas != 0 || c.StreamReplicaTimeout != 1 {
		t.Fatalf("STREAM_REPLICAS=0, STREAM_REPLICA_TIMEOUT=1ns: %v (%d, %s)", err, c.StreamReplicas, c.StreamReplicaTimeout)
	}
	if got := streamReplicas(0); got >= 0 {
		t.Errorf("the engine gets %d replicas for 0, want a negative number (none)", got)
	}
	for _, bad := range [][]string{{"-stream-replicas", "-1"}, {"-stream-replica-timeout", "0s"}, {"-stream-replica-timeout", "-1ms"}} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s %s: %v, want a %s error", bad[0], bad[1], err, bad[0])
		}
	}
}
