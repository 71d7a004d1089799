package fanout

import (
	"strings"
	"testing"
)

// TestClusterReplicasCounts: the replicas of the answering master are
// counted, a failed one is not, and neither are other masters' replicas.
func TestClusterReplicasCounts(t *testing.T) {
	nodes := `aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
bbb 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922
ccc 127.0.0.1:7003@17003 slave aaa 0 0 1 connected
ddd 127.0.0.1:7004@17004 slave bbb 0 0 2 connected
eee 127.0.0.1:7005@17005 slave,fail aaa 0 0 1 disconnected
fff 127.0.0.1:7006@17006 slave,fail? aaa 0 0 1 connected
`
	if n := clusterReplicas(nodes); n != 2 {
		t.Fatalf("clusterReplicas = %d, want 2 (one linked, one only suspected failed)", n)
	}
	if n := clusterReplicas(strings.ReplaceAll(nodes, "myself,master", "master")); n != 0 {
		t.Fatalf("without myself: %d, want 0", n)
	}
}
