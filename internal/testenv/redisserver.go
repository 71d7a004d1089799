package testenv

import (
	"os/exec"
	"testing"

	"feedservice/internal/testenv/testrun"
)

// RedisServer is a private redis-server, without persistence, that a test
// can kill and start again on the same port (Redis going away and coming
// back empty) without touching the shared server other tests use.
type RedisServer struct {
	t      testing.TB
	port   string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
	forget func()        // drops the process from the run's record
}

// StartRedis runs a private redis-server on a port reserved for the test
// (FreePort) until the test ends.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	r := &RedisServer{t: t, port: FreePort(t)}
	WatchLibraryLog(t)
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
	testrun.DieWithParent(cmd, false)
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	r.forget = ownServer(r.t, "redis-server", cmd.Process.Pid, false, "")
	go func() { cmd.Wait(); close(r.exited) }()
	if err := waitForPing(r.Addr(), r.exited); err != nil {
		r.Kill()
		r.t.Fatalf("redis-server on port %s: %v", r.port, err)
	}
}

// Kill stops the server at once, losing its data.
func (r *RedisServer) Kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
	r.forget()
}
