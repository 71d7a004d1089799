// Package serverproc builds the feedservice binary and runs it as a process
// of its own, for the tests, the benchmark and the soak, which need the
// server as production runs it: its own process, stopped by a signal.
package serverproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"feedservice/internal/testenv/testrun"
)

// Package is the import path of the service's main package, which go build
// finds from any directory of the module.
const Package = "feedservice"

// Build builds the feedservice binary to bin, writing the compiler's output
// to out.
func Build(ctx context.Context, bin string, out io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, Package)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s %s: %w", bin, Package, err)
	}
	return nil
}

// FreeAddr is an address on 127.0.0.1 with a port nobody listens on,
// reserved for this process until it ends (testrun.ReservePort): another
// test run on the machine does not get it, and no outgoing connection
// takes it before the server binds it.
func FreeAddr() (string, error) {
	port, _, err := testrun.ReservePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", port), nil
}

// Options say how to run the server.
type Options struct {
	Bin  string   // the binary Build made
	Args []string // command-line flags
	Env  []string // settings as environment variables, added to this process's environment
	// Addr is where the server listens (given as ADDR); a free port when empty.
	Addr string
	// DataDir is the server's -data directory (DATA_DIR), when given.
	DataDir string
	// Log receives the server's stdout and stderr, one write at a time (as
	// exec.Cmd writes to one writer given as both); read it once the server
	// has exited.
	Log io.Writer
	// Ready is how long the server may take to answer /readyz with 200,
	// stretched by the machine's time scale (testrun.TimeScale).
	Ready time.Duration
	// OwnGroup runs the server in a process group of its own, so that a
	// signal to the caller's group does not reach it.
	OwnGroup bool
}

// Process is a running server.
type Process struct {
	URL    string // http://Addr
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Start runs the server and waits until it is ready. A server that exits or
// is not ready in time is an error (and is killed).
// The server ends with the process that started it, whatever ends that one
// (testrun.DieWithParent), and is in that process's test run record
// (testrun) until it exits, so that a sweep ends it if it outlived its
// starter all the same.
func Start(ctx context.Context, o Options) (*Process, error) {
	if o.Addr == "" {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		o.Addr = addr
	}
	p := &Process{URL: "http://" + o.Addr, Addr: o.Addr, exited: make(chan struct{})}
	p.cmd = exec.Command(o.Bin, o.Args...)
	env := append(os.Environ(), "ADDR="+o.Addr)
	if o.DataDir != "" {
		env = append(env, "DATA_DIR="+o.DataDir)
	}
	p.cmd.Env = append(env, o.Env...)
	if o.Log != nil {
		p.cmd.Stdout, p.cmd.Stderr = o.Log, o.Log
	}
	if o.OwnGroup {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	testrun.DieWithParent(p.cmd, o.OwnGroup)
	ready, err := testrun.Scale(o.Ready)
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	forget := func() {}
	if run, err := testrun.Self(); err == nil {
		forget, _ = run.AddServer("feedservice", p.cmd.Process.Pid, o.OwnGroup, "")
	}
	go func() {
		p.err = p.cmd.Wait()
		forget()
		close(p.exited)
	}()
	if err := p.waitReady(ctx, ready); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		res, err := http.Get(p.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("server exited at start: %v", p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready within %s", within)
		}
	}
}

// Pid is the server's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the server.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited is closed when the server has exited; Err then says how.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is how the server exited (nil for status 0); valid once Exited is
// closed.
func (p *Process) Err() error { return p.err }

// ErrStillRunning is Stop's answer for a server that outlived its grace.
var ErrStillRunning = errors.New("server still running after SIGTERM")

// Stop sends SIGTERM and waits up to grace for the server to exit, then
// kills it. It returns how the server exited, or ErrStillRunning when it had
// to be killed.
func (p *Process) Stop(grace time.Duration) error {
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("%w (%s)", ErrStillRunning, grace)
	}
}

// Kill ends the server at once and waits for it to exit.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
}
