package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"feedservice/internal/testenv/testrun"
)

// This process's test run (testrun): registered, and the leftovers of
// ended runs swept, at the first name or private server a test asks for.
var runState struct {
	once sync.Once
	run  *testrun.Run
}

// startSweepTimeout bounds the sweep a test process runs at its start.
const startSweepTimeout = time.Minute

// thisRun is this process's run, nil when it could not be registered (the
// test then goes on: only the sweep of what it leaves depends on it).
func thisRun() *testrun.Run {
	runState.once.Do(func() {
		run, err := testrun.Self()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v; what this run leaves behind cannot be swept\n", err)
			return
		}
		runState.run = run
		ctx, cancel := context.WithTimeout(context.Background(), startSweepTimeout)
		defer cancel()
		swept, err := testrun.Sweep(ctx)
		if swept.Runs > 0 {
			fmt.Fprintf(os.Stderr, "testenv: swept after %s\n", swept)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: the sweep of ended test runs left some behind (tried again at the next start): %v\n", err)
		}
	})
	return runState.run
}

// Name returns a fresh name for a database or a key prefix: prefix, this
// run's id, "_" and random hex digits. Whatever is made under it on the
// test servers is swept once this process has ended, if the test did not
// remove it (a test binary killed by a signal or by its timeout).
func Name(prefix string) string {
	if run := thisRun(); run != nil {
		name, err := run.Name(prefix)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		}
		return name
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	return prefix + hex.EncodeToString(buf)
}

// usesServers records that this run makes databases on the MySQL server
// dsn and keys on the Redis at redisAddrs (either may be empty).
func usesServers(t testing.TB, dsn, redisAddrs string) {
	t.Helper()
	run := thisRun()
	if run == nil {
		return
	}
	if dsn != "" {
		if err := run.UsesMySQL(dsn); err != nil {
			t.Logf("testenv: %v", err)
		}
	}
	if redisAddrs != "" {
		if err := run.UsesRedis(redisAddrs); err != nil {
			t.Logf("testenv: %v", err)
		}
	}
}

// ownServer records a private server's process (and the directory of its
// data), so that a sweep ends it if this process ends without doing so;
// the returned func forgets it once the test stopped it.
func ownServer(t testing.TB, what string, pid int, group bool, dir string) (forget func()) {
	t.Helper()
	run := thisRun()
	if run == nil {
		return func() {}
	}
	forget, err := run.AddServer(what, pid, group, dir)
	if err != nil {
		t.Logf("testenv: %v", err)
	}
	return forget
}

// FreePort reserves a TCP port on 127.0.0.1 for a private server until
// the test ends: no other test, of this run or another, gets it meanwhile,
// and no outgoing connection takes it (see testrun.ReservePort).
func FreePort(t testing.TB) string {
	t.Helper()
	port, release, err := testrun.ReservePort()
	if err != nil {
		t.Fatalf("reserve a port: %v", err)
	}
	t.Cleanup(release)
	return port
}

// Scale stretches a test's deadline d by the machine's time scale
// (testrun.TimeScale: TEST_TIME_SCALE when set, otherwise the load per
// CPU, from 1 on a quiet machine up to 10). Every fixed wait of the tests
// for something that must happen goes through it; a bound that is the
// subject of a test (a configured timeout the server must keep) does not.
func Scale(d time.Duration) time.Duration {
	scaled, err := testrun.Scale(d)
	if err != nil {
		panic("testenv: " + err.Error())
	}
	return scaled
}

// ScaleFactor is the factor Scale applies now, for a child process that
// stretches its own deadlines (node's tests take it as TEST_TIME_SCALE).
func ScaleFactor() float64 {
	f, err := testrun.TimeScale()
	if err != nil {
		panic("testenv: " + err.Error())
	}
	return f
}

// TimeScaleEnv is TEST_TIME_SCALE=<the factor Scale applies now>, for the
// environment of a child process that stretches its own deadlines (the
// Node tests of clients/ multiply theirs by it).
func TimeScaleEnv() string {
	return testrun.TimeScaleEnv + "=" + strconv.FormatFloat(ScaleFactor(), 'f', 2, 64)
}

// NodeTestTimeout is node --test's flag that bounds each test file by d,
// stretched by Scale.
func NodeTestTimeout(d time.Duration) string {
	return "--test-timeout=" + strconv.FormatInt(Scale(d).Milliseconds(), 10)
}

// EndWithTest makes cmd (not yet started) end when this test process does,
// however it ends (testrun.DieWithParent); group also puts it in a process
// group of its own.
func EndWithTest(cmd *exec.Cmd, group bool) { testrun.DieWithParent(cmd, group) }
