package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv/testrun"
)

// RedisClusterServer is a private Redis Cluster of six redis-server
// processes on free ports (three masters, each with one replica), without
// persistence, its node files in a directory of the test: a cluster a test
// may break (kill a master and watch its replica take over) without
// touching the shared one the test command starts.
type RedisClusterServer struct {
	t     testing.TB
	nodes []*clusterNode
}

type clusterNode struct {
	port   string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
	forget func()        // drops the process from the run's record
}

// kill ends the node's process (SIGKILL) and waits for it.
func (n *clusterNode) kill() {
	n.cmd.Process.Kill()
	<-n.exited
	n.cmd = nil
	n.forget()
}

// nodeStartAttempts is how many fresh ports a node is tried on: the ports
// are reserved (FreePort) below the ephemeral range, but a process outside
// the tests may still bind one before redis-server does, which then exits
// at once.
const nodeStartAttempts = 3

// ClusterNodeTimeout is the private cluster's cluster-node-timeout: how
// long a master must be unreachable before the others mark it failed and
// its replica is promoted. Short, so a test's failover takes seconds.
const ClusterNodeTimeout = time.Second

// clusterSize is three masters and one replica for each.
const clusterSize = 6

// StartRedisCluster starts the six nodes, joins them with redis-cli
// --cluster create, and waits until every node sees a healthy cluster. The
// processes are killed when the test ends.
func StartRedisCluster(t testing.TB) *RedisClusterServer {
	t.Helper()
	dir := t.TempDir()
	c := &RedisClusterServer{t: t}
	t.Cleanup(c.killAll)
	for range clusterSize {
		c.nodes = append(c.nodes, startClusterNode(t, dir))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitHealthy(clusterFormWait)
	return c
}

// clusterFormWait is how long a new private cluster may take to become
// healthy (stretched by Scale, as WaitHealthy does).
const clusterFormWait = 30 * time.Second

// startClusterNode starts one cluster-enabled redis-server on free ports
// under dir and waits until it answers; a server that exits first (its
// port taken meanwhile) is started again on other ports.
func startClusterNode(t testing.TB, dir string) *clusterNode {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port, busPort := FreePort(t), FreePort(t)
		nodeDir := filepath.Join(dir, port)
		if err := os.MkdirAll(nodeDir, 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", nodeDir,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", busPort,
			"--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout.Milliseconds())),
			// However long its master was away, a replica may take over:
			// the test decides when a master dies, not how stale it is.
			"--cluster-replica-validity-factor", "0",
			"--save", "", "--appendonly", "no", "--logfile", filepath.Join(nodeDir, "redis.log"))
		testrun.DieWithParent(cmd, false)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		n := &clusterNode{port: port, cmd: cmd, exited: make(chan struct{})}
		n.forget = ownServer(t, "redis-server (cluster node)", cmd.Process.Pid, false, nodeDir)
		go func() { cmd.Wait(); close(n.exited) }()
		err := waitForPing("127.0.0.1:"+port, n.exited)
		if err == nil {
			return n
		}
		n.kill()
		log, _ := os.ReadFile(filepath.Join(nodeDir, "redis.log"))
		if attempt == nodeStartAttempts {
			t.Fatalf("redis-server on %s: %v (attempt %d of %d); its log:\n%s", port, err, attempt, nodeStartAttempts, log)
		}
		t.Logf("redis-server on %s: %v; trying other ports. Its log:\n%s", port, err, log)
	}
}

// redisReadyWait is how long a private redis-server may take to answer
// (stretched by Scale).
const redisReadyWait = 10 * time.Second

// waitForPing waits until the server at addr answers PING, for at most
// redisReadyWait (scaled), or until exited is closed (the server ended).
func waitForPing(addr string, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	within := Scale(redisReadyWait)
	deadline := time.Now().Add(within)
	for c.Ping(context.Background()).Err() != nil {
		select {
		case <-exited:
			return errors.New("the server exited before it answered")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %s", within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// Addrs are the addresses of the six nodes, as a cluster client takes them.
func (c *RedisClusterServer) Addrs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, "127.0.0.1:"+n.port)
	}
	return out
}

// WaitHealthy waits until every live node reports cluster_state:ok with
// all 16384 slots served and every live replica is in sync with its
// master, for at most within stretched by Scale.
func (c *RedisClusterServer) WaitHealthy(within time.Duration) {
	c.t.Helper()
	within = Scale(within)
	deadline := time.Now().Add(within)
	for {
		err := c.healthy()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("private Redis Cluster not healthy after %s: %v", within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *RedisClusterServer) healthy() error {
	ctx := context.Background()
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + n.port, MaxRetries: -1})
		info, err := cl.ClusterInfo(ctx).Result()
		cl.Close()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return fmt.Errorf("node %s: %s", n.port, strings.Fields(info)[0])
		}
		// A replica takes over only once it has its master's data.
		cl = redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + n.port, MaxRetries: -1})
		repl, err := cl.Info(ctx, "replication").Result()
		cl.Close()
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync with its master", n.port)
		}
	}
	return nil
}

// WaitFailover waits until a live node serves slot, whose master was
// dead (killed), and the cluster is healthy again: the dead master's
// replica took over. It returns the slot's new master. It waits at most
// within stretched by Scale.
func (c *RedisClusterServer) WaitFailover(dead string, slot int, within time.Duration) string {
	c.t.Helper()
	within = Scale(within)
	deadline := time.Now().Add(within)
	for {
		if m := c.MasterOf(slot); m != dead && c.healthy() == nil {
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no replica took over slot %d from %s within %s", slot, dead, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MasterOf is the address of the master that serves slot now, as the node
// at any live address says.
func (c *RedisClusterServer) MasterOf(slot int) string {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + n.port, MaxRetries: -1})
		ranges, err := cl.ClusterSlots(context.Background()).Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, r := range ranges {
			if slot >= r.Start && slot <= r.End {
				return r.Nodes[0].Addr
			}
		}
	}
	c.t.Fatalf("no live node knows the master of slot %d", slot)
	return ""
}

// Kill ends the node at addr at once (SIGKILL), as a crashed machine.
func (c *RedisClusterServer) Kill(addr string) {
	c.t.Helper()
	for _, n := range c.nodes {
		if "127.0.0.1:"+n.port == addr && n.cmd != nil {
			n.kill()
			return
		}
	}
	c.t.Fatalf("no live node at %s", addr)
}

func (c *RedisClusterServer) killAll() {
	for _, n := range c.nodes {
		if n.cmd != nil {
			n.kill()
		}
	}
}
