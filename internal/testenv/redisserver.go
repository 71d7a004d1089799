package testenv

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server, without persistence, that a test
// can kill and start again on the same port (Redis going away and coming
// back empty) without touching the shared server other tests use.
type RedisServer struct {
	t    testing.TB
	port string
	cmd  *exec.Cmd
}

// StartRedis runs a private redis-server on a free port until the test ends.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	r := &RedisServer{t: t, port: port}
	t.Cleanup(r.Kill)
	r.Start()
	return r
}

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + r.port }

// Start runs the server and waits until it answers.
func (r *RedisServer) Start() {
	r.t.Helper()
	cmd := exec.Command("redis-server", "--port", r.port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.cmd = cmd
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %s does not answer", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server at once, losing its data.
func (r *RedisServer) Kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}
