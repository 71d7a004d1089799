package archtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTestCleanStopsWhatTheTestCommandLeaves starts the test-only servers
// with the test command's own scripts (scripts/redis-cluster.sh,
// scripts/mysql-replica.sh, scripts/mysql-shards.sh with one data node),
// moved to free ports and temporary directories
// through FEED_TEST_* (scripts/test-servers.sh) so that the shared ones are
// not touched, then runs `make test-clean`'s script: every port must be
// closed and both data directories gone. A second run finds nothing to do
// and succeeds, and a server the test command did not start (another Redis
// on one of the cluster's ports, its data elsewhere) is left running.
func TestTestCleanStopsWhatTheTestCommandLeaves(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"redis-server", "redis-cli", "mariadbd", "mariadb-install-db", "mariadb-admin"} {
		if _, err := exec.LookPath(tool); err != nil && !(tool == "mariadbd" && fileExists("/usr/sbin/mariadbd")) {
			t.Fatalf("%s is not installed (the test command installs it with scripts/services.sh): %v", tool, err)
		}
	}
	ports := freePorts(t, 11)
	// mariadbd runs as the mysql user, which must reach its data directory.
	dir, err := os.MkdirTemp("", "feed-test-clean-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"FEED_TEST_CLUSTER_PORTS="+strings.Join(ports[:6], " "),
		"FEED_TEST_CLUSTER_DIR="+filepath.Join(dir, "cluster"),
		"FEED_TEST_REPLICA_PRIMARY="+ports[6],
		"FEED_TEST_REPLICA_PORTS="+strings.Join(ports[7:9], " "),
		"FEED_TEST_REPLICA_DIR="+filepath.Join(dir, "replica"),
		"FEED_TEST_SHARD_HEAD="+ports[9],
		"FEED_TEST_SHARD_PORTS="+ports[10],
		"FEED_TEST_SHARD_DIR="+filepath.Join(dir, "shards"),
	)
	script := func(name string) string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join("scripts", name))
		cmd.Dir = repoRoot
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	// Whatever the test started is stopped even if it fails half way.
	t.Cleanup(func() {
		cmd := exec.Command("bash", filepath.Join("scripts", "test-clean.sh"))
		cmd.Dir = repoRoot
		cmd.Env = env
		cmd.Run()
	})
	script("redis-cluster.sh")
	script("mysql-replica.sh")
	script("mysql-shards.sh")
	for _, p := range ports {
		if !listening(p) {
			t.Fatalf("nothing listens on %s after the start scripts", p)
		}
	}
	out := script("test-clean.sh")
	for _, p := range ports {
		if listening(p) {
			t.Errorf("port %s still answers after test-clean.sh:\n%s", p, out)
		}
	}
	for _, d := range []string{"cluster", "replica", "shards"} {
		if fileExists(filepath.Join(dir, d)) {
			t.Errorf("the %s data directory is still there after test-clean.sh:\n%s", d, out)
		}
	}
	if again := script("test-clean.sh"); !strings.Contains(again, "test servers stopped (0)") {
		t.Errorf("a second test-clean.sh: %s", again)
	}

	// Someone else's server on a port of the cluster: not the test
	// command's to stop.
	foreign := filepath.Join(dir, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	start := exec.Command("redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", ports[0],
		"--dir", foreign, "--save", "", "--appendonly", "no")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("starting a foreign redis-server: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("redis-cli", "-p", ports[0], "shutdown", "nosave").Run() })
	deadline := time.Now().Add(30 * time.Second)
	for !listening(ports[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("the foreign redis-server on %s did not come up", ports[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	out = script("test-clean.sh")
	if !listening(ports[0]) {
		t.Errorf("test-clean.sh stopped a redis-server it did not start (port %s):\n%s", ports[0], out)
	}
	if !strings.Contains(out, "left alone: the server on 127.0.0.1:"+ports[0]) {
		t.Errorf("test-clean.sh does not say it left the foreign server alone:\n%s", out)
	}
}

// repoRoot is the repository's top, where the tests of this package that
// check the repository itself (its pages, links and scripts) read it.
const repoRoot = "../.."

// freePorts returns n ports that nothing listens on now.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	var held []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		ports = append(ports, fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range held {
		l.Close()
	}
	return ports
}

func listening(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
