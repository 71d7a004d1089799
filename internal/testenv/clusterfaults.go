package testenv

import (
	"context"
	"net"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// ReplicaOf is the address of a replica of the master at addr, as the
// master's ROLE lists them.
func (c *RedisClusterServer) ReplicaOf(master string) string {
	c.t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
	defer cl.Close()
	role, err := cl.Do(context.Background(), "ROLE").Slice()
	if err != nil {
		c.t.Fatalf("ROLE on %s: %v", master, err)
	}
	if len(role) < 3 || role[0] != "master" {
		c.t.Fatalf("ROLE on %s: %v, want a master", master, role)
	}
	replicas, _ := role[2].([]any)
	for _, r := range replicas {
		if f, ok := r.([]any); ok && len(f) >= 2 {
			host, _ := f[0].(string)
			port, _ := f[1].(string)
			return net.JoinHostPort(host, port)
		}
	}
	c.t.Fatalf("master %s has no replica", master)
	return ""
}

// CutReplicas closes the replication links of the master at addr
// (CLIENT KILL TYPE replica); a frozen replica cannot link again, and
// the master goes on acknowledging writes that reach no replica.
func (c *RedisClusterServer) CutReplicas(master string) {
	c.t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
	defer cl.Close()
	if err := cl.Do(context.Background(), "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		c.t.Fatalf("CLIENT KILL TYPE replica on %s: %v", master, err)
	}
}

// Freeze stops the node at addr (SIGSTOP) until Thaw: it keeps its
// connections but answers nothing. A frozen replica leaves its master's
// writes unreplicated once its link is cut (CutReplicas): the window in
// which a master's death loses the writes it acknowledged. (Frozen alone,
// it would still receive them: the kernel buffers its socket.)
func (c *RedisClusterServer) Freeze(addr string) { c.signal(addr, syscall.SIGSTOP) }

// Thaw resumes a frozen node (SIGCONT).
func (c *RedisClusterServer) Thaw(addr string) { c.signal(addr, syscall.SIGCONT) }

func (c *RedisClusterServer) signal(addr string, sig syscall.Signal) {
	c.t.Helper()
	for _, n := range c.nodes {
		if "127.0.0.1:"+n.port == addr && n.cmd != nil {
			if err := n.cmd.Process.Signal(sig); err != nil {
				c.t.Fatalf("signal %s to %s: %v", sig, addr, err)
			}
			return
		}
	}
	c.t.Fatalf("no live node at %s", addr)
}

// LiveAddrs are the addresses of the nodes not killed.
func (c *RedisClusterServer) LiveAddrs() []string {
	var out []string
	for _, n := range c.nodes {
		if n.cmd != nil {
			out = append(out, "127.0.0.1:"+n.port)
		}
	}
	return out
}
