package fanout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"feedservice/feed/internal/redisx"

	"github.com/redis/go-redis/v9"
)

// Redis replicates asynchronously: a master acknowledges a write before
// its replicas hold it, and a master that dies then takes the write with
// it when a replica is promoted. For the fan-out stream that would lose
// posts for good, as the dispatcher marks an event dispatched once the
// stream took it (and a worker acknowledges the event whose tasks it
// added). So an append to the stream is complete only once
// Config.StreamReplicas of the stream master's replicas hold it (WAIT on
// the connection that added it), or all of them when it has fewer; an
// append that no replica confirmed within Config.StreamReplicaTimeout
// fails, and its caller tries again (a second copy of an entry is
// harmless: every handler is idempotent).

// errNotReplicated is an append the replicas did not confirm in time.
type errNotReplicated struct{ got, want int64 }

func (n errNotReplicated) Error() string {
	return fmt.Sprintf("fan-out stream entries held by %d replicas of %d within the wait", n.got, n.want)
}

// appendStream adds entries (each the field-value list of one stream
// entry) to the fan-out stream, and waits until the stream master's
// replicas hold them.
func (st *Stream) appendStream(ctx context.Context, entries [][]any) error {
	if len(entries) == 0 {
		return nil
	}
	node, err := st.streamNode(ctx)
	if err != nil {
		return err
	}
	if node == nil {
		// A client that is neither one server nor a cluster: no
		// connection of its own to wait on.
		_, err := st.d.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
			st.queueAppends(ctx, p, entries)
			return nil
		})
		return err
	}
	// One connection for the appends and the WAIT: WAIT counts the
	// replicas that hold the writes made on its own connection.
	conn := node.Conn()
	defer conn.Close()
	var replicas *redis.Cmd
	cmds, _ := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		st.queueAppends(ctx, p, entries)
		if st.d.Cfg.StreamReplicas > 0 {
			replicas = st.queueReplicas(ctx, p)
		}
		return nil
	})
	for _, c := range cmds {
		if c != replicas && c.Err() != nil {
			st.streamNodeFailed(ctx, c.Err())
			return c.Err()
		}
	}
	if replicas == nil {
		return nil
	}
	want := min(int64(st.d.Cfg.StreamReplicas), st.replicasOf(replicas))
	if want == 0 {
		return nil
	}
	got, err := conn.Wait(ctx, int(want), st.d.Cfg.StreamReplicaTimeout).Result()
	if err != nil {
		return err
	}
	if got < want {
		return errNotReplicated{got, want}
	}
	return nil
}

// queueAppends queues the XADDs of entries on p.
func (st *Stream) queueAppends(ctx context.Context, p redis.Pipeliner, entries [][]any) {
	for _, values := range entries {
		p.XAdd(ctx, &redis.XAddArgs{Stream: st.d.Keys.Stream(), MaxLen: streamMaxLen, Approx: true, Values: values})
	}
}

// streamNode is the client of the server that holds the stream: the one
// Redis, or the master of the stream's slot on a cluster (as the cluster
// client knows it now); nil for any other kind of client.
func (st *Stream) streamNode(ctx context.Context) (*redis.Client, error) {
	switch c := st.d.Redis.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, st.d.Keys.Stream())
	}
	return nil, nil
}

// streamNodeFailed has the cluster client map the slots again after an
// append failed on the node it took for the stream's master: a failover
// or a slot move (MOVED) makes that node's answers wrong until then.
func (st *Stream) streamNodeFailed(ctx context.Context, err error) {
	if c, ok := st.d.Redis.(*redis.ClusterClient); ok && !errors.Is(err, context.Canceled) {
		c.ReloadState(ctx)
	}
}

// queueReplicas queues on p the question of which replicas the stream's
// master has: on a cluster its view of the cluster (CLUSTER NODES), which
// lists a replica that lost its link too, so that a master whose replica
// was cut off waits for it rather than acknowledge alone; on one Redis,
// ROLE, which lists the replicas linked now.
func (st *Stream) queueReplicas(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
	if redisx.OnCluster(st.d.Redis) {
		return p.Do(ctx, "CLUSTER", "NODES")
	}
	return p.Do(ctx, "ROLE")
}

// replicasOf counts the replicas in the answer of queueReplicas' command;
// a server that knows neither command counts none. On a cluster, a
// replica the cluster declared failed (flag "fail") is not counted: waiting
// for it would stop the fan-out until it is back.
func (st *Stream) replicasOf(cmd *redis.Cmd) int64 {
	if redisx.OnCluster(st.d.Redis) {
		text, err := cmd.Text()
		if err != nil {
			return 0
		}
		return clusterReplicas(text)
	}
	v, err := cmd.Slice()
	if err != nil || len(v) < 3 || v[0] != "master" {
		return 0
	}
	replicas, _ := v[2].([]any)
	return int64(len(replicas))
}

// clusterReplicas counts, in a CLUSTER NODES answer, the replicas of the
// node that answered ("myself") that are not flagged failed.
func clusterReplicas(nodes string) int64 {
	var self string
	type node struct{ flags, master string }
	var all []node
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		flags := strings.Split(f[2], ",")
		if slices.Contains(flags, "myself") {
			self = f[0]
		}
		all = append(all, node{f[2], f[3]})
	}
	var n int64
	for _, nd := range all {
		if self != "" && nd.master == self && !slices.Contains(strings.Split(nd.flags, ","), "fail") {
			n++
		}
	}
	return n
}
