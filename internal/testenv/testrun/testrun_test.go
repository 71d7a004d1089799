package testrun_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv"
	"feedservice/internal/testenv/testrun"
)

// owner starts a process that stands for a test run's owner (or a server
// it started) and returns it; it is killed when the test ends.
func owner(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// end kills cmd and waits until it is gone (reaped).
func end(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Kill()
	cmd.Wait()
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return len(b) > i+2 && b[i+2] != 'Z'
		}
	}
	return true
}

// made is what a run made in the test: a database, keys, a server process
// and its data directory.
type made struct {
	run    *testrun.Run
	owner  *exec.Cmd
	db     string
	prefix string
	server *exec.Cmd
	dir    string
}

func makeRun(t *testing.T, admin *sql.DB) made {
	t.Helper()
	m := made{owner: owner(t)}
	run, err := testrun.Register(m.owner.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	m.run = run
	if err := run.UsesMySQL(testenv.MySQLServerDSN()); err != nil {
		t.Fatal(err)
	}
	if err := run.UsesRedis(testenv.RedisAddr()); err != nil {
		t.Fatal(err)
	}
	if m.db, err = run.Name("feedtest_"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + m.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + m.db); err != nil {
			t.Errorf("dropping %s: %v", m.db, err)
		}
	})
	if m.prefix, err = run.Name("t"); err != nil {
		t.Fatal(err)
	}
	m.server = owner(t)
	m.dir = filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "file"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run.AddServer("sleep", m.server.Process.Pid, false, m.dir); err != nil {
		t.Fatal(err)
	}
	return m
}

func dbExists(t *testing.T, admin *sql.DB, name string) bool {
	t.Helper()
	var got string
	err := admin.QueryRow("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func recordExists(id string) bool {
	_, err := os.Stat(filepath.Join(testrun.Dir(), id+".run"))
	return err == nil
}

// TestSweepCleansEndedRunsOnly: of two runs that made the same things, the
// one whose owner ended loses its database, its keys, its server process,
// the server's data directory and its record; the one whose owner lives
// keeps all of it, and so do a database and keys whose names carry no run
// id (made by a test command of older code, which may still be running).
func TestSweepCleansEndedRunsOnly(t *testing.T) {
	cfg, err := mysql.ParseDSN(testenv.MySQLServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	// Closed by the first cleanup registered, so after the others (they
	// run last-in first-out), which still need it: a deferred Close ran
	// before them, and the legacy database's DROP failed unseen.
	t.Cleanup(func() { admin.Close() })
	rdb, _ := testenv.Redis(t)
	ctx := context.Background()

	ended, alive := makeRun(t, admin), makeRun(t, admin)
	for _, m := range []made{ended, alive} {
		for i := range 3 {
			if err := rdb.Set(ctx, m.prefix+":k{"+strconv.Itoa(i)+"}", "v", time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}
		// The rate limiter's library writes its own prefix first.
		if err := rdb.Set(ctx, testrun.RateKeyPrefix+m.prefix+":ratelimit:x", "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Del(ctx, testrun.RateKeyPrefix+m.prefix+":ratelimit:x") })
	}
	// Names of older code: the prefixes without a run id.
	legacyDB := "feedtest_" + ended.run.ID() + "0000"
	if _, err := admin.Exec("CREATE DATABASE " + legacyDB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + legacyDB); err != nil {
			t.Errorf("dropping %s: %v", legacyDB, err)
		}
	})
	legacyKey := "t" + ended.run.ID() + "0000:k"
	rdb.Set(ctx, legacyKey, "v", time.Hour)
	t.Cleanup(func() { rdb.Del(ctx, legacyKey) })

	end(t, ended.owner)
	swept, err := testrun.Sweep(ctx)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	t.Logf("swept %s", swept)

	keys := func(prefix string) int {
		got, err := testenv.Keys(ctx, rdb, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	// The ended run: nothing left.
	if dbExists(t, admin, ended.db) {
		t.Errorf("the ended run's database %s is still there", ended.db)
	}
	if n := keys(ended.prefix); n != 0 {
		t.Errorf("the ended run's prefix %s still has %d keys", ended.prefix, n)
	}
	if n := keys(testrun.RateKeyPrefix + ended.prefix); n != 0 {
		t.Errorf("the ended run's rate-limit keys (%s%s) are still there: %d", testrun.RateKeyPrefix, ended.prefix, n)
	}
	if waitGone(ended.server.Process.Pid); running(ended.server.Process.Pid) {
		t.Errorf("the ended run's server (pid %d) still runs", ended.server.Process.Pid)
	}
	if _, err := os.Stat(ended.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the ended run's server directory %s: %v, want it removed", ended.dir, err)
	}
	if recordExists(ended.run.ID()) {
		t.Errorf("the ended run's record is still there")
	}
	// The live run: everything kept.
	if !dbExists(t, admin, alive.db) {
		t.Errorf("the live run's database %s was dropped", alive.db)
	}
	if n := keys(alive.prefix); n != 3 {
		t.Errorf("the live run's prefix %s has %d keys, want 3", alive.prefix, n)
	}
	if n := keys(testrun.RateKeyPrefix + alive.prefix); n != 1 {
		t.Errorf("the live run's rate-limit key was deleted")
	}
	if !running(alive.server.Process.Pid) {
		t.Errorf("the live run's server was killed")
	}
	if _, err := os.Stat(filepath.Join(alive.dir, "file")); err != nil {
		t.Errorf("the live run's server directory: %v", err)
	}
	if !recordExists(alive.run.ID()) {
		t.Errorf("the live run's record was removed")
	}
	// Names without a run id: kept.
	if !dbExists(t, admin, legacyDB) {
		t.Errorf("database %s, whose name holds no run id, was dropped", legacyDB)
	}
	if n := keys(legacyKey); n != 1 {
		t.Errorf("key %s, whose name holds no run id, was deleted", legacyKey)
	}

	// Once its owner ends, the other run goes the same way.
	end(t, alive.owner)
	if _, err := testrun.Sweep(ctx); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if dbExists(t, admin, alive.db) || keys(alive.prefix) != 0 || recordExists(alive.run.ID()) {
		t.Errorf("the second run, ended, was not swept")
	}
}

// waitGone gives a killed process (reaped by its parent, this test) a
// moment to go.
func waitGone(pid int) {
	for deadline := time.Now().Add(testenv.Scale(5 * time.Second)); running(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReservePort: a reserved port is below the kernel's ephemeral range,
// free, and no one else's until it is released.
func TestReservePort(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatalf("this test reads Linux's ephemeral port range: %v", err)
	}
	var low int
	for i, c := range string(b) {
		if c < '0' || c > '9' {
			low, _ = strconv.Atoi(string(b)[:i])
			break
		}
	}
	seen := map[string]bool{}
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for range 20 {
		port, release, err := testrun.ReservePort()
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
		if seen[port] {
			t.Fatalf("port %s reserved twice", port)
		}
		seen[port] = true
		if p, _ := strconv.Atoi(port); p >= low || p < low-10000 {
			t.Fatalf("port %s outside [%d, %d)", port, low-10000, low)
		}
		// Another holder (any process: the lock is flock's) cannot have it.
		if _, err := testrun.Lock("port-"+port, 0); !errors.Is(err, testrun.ErrBusy) {
			t.Fatalf("port %s: reserved, yet its lock was free (%v)", port, err)
		}
	}
	port, release, err := testrun.ReservePort()
	if err != nil {
		t.Fatal(err)
	}
	release()
	unlock, err := testrun.Lock("port-"+port, 0)
	if err != nil {
		t.Fatalf("port %s: released, yet its lock is held: %v", port, err)
	}
	unlock()
}

// TestTimeScale: TEST_TIME_SCALE fixes the factor; unset, it is the load
// per CPU, from 1 to MaxMeasuredScale; a value that is not a positive
// number is an error.
func TestTimeScale(t *testing.T) {
	t.Setenv(testrun.TimeScaleEnv, "3")
	if d, err := testrun.Scale(2 * time.Second); err != nil || d != 6*time.Second {
		t.Errorf("TEST_TIME_SCALE=3: Scale(2s) = %s, %v; want 6s", d, err)
	}
	t.Setenv(testrun.TimeScaleEnv, "0.5")
	if d, err := testrun.Scale(2 * time.Second); err != nil || d != time.Second {
		t.Errorf("TEST_TIME_SCALE=0.5: Scale(2s) = %s, %v; want 1s", d, err)
	}
	for _, bad := range []string{"fast", "0", "-2", "NaN"} {
		t.Setenv(testrun.TimeScaleEnv, bad)
		if _, err := testrun.TimeScale(); err == nil {
			t.Errorf("TEST_TIME_SCALE=%s: no error", bad)
		}
	}
	t.Setenv(testrun.TimeScaleEnv, "")
	f, err := testrun.TimeScale()
	if err != nil || f < 1 || f > testrun.MaxMeasuredScale {
		t.Errorf("measured scale %v (%v), want within [1, %d]", f, err, testrun.MaxMeasuredScale)
	}
	t.Logf("measured time scale now: %.2f", f)
}

// TestDieWithParent: a process started with DieWithParent ends when the
// process that started it is killed (SIGKILL, no cleanup run).
func TestDieWithParent(t *testing.T) {
	if os.Getenv("TESTRUN_HELPER_PARENT") == "1" {
		child := exec.Command("sleep", "600")
		testrun.DieWithParent(child, false)
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		time.Sleep(time.Hour)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestDieWithParent$")
	parent.Env = append(os.Environ(), "TESTRUN_HELPER_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { parent.Process.Kill(); parent.Wait() }()
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(buf[:n-1]))
	if err != nil {
		t.Fatalf("helper printed %q", buf[:n])
	}
	if !running(pid) {
		t.Fatalf("the child %d is not running", pid)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	waitGone(pid)
	if running(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the child %d outlived its killed parent", pid)
	}
}

// TestSweepKeepsWhatItCannotClean: an ended run whose servers do not
// answer keeps its record for a later sweep (the sweep says so), and does
// not hold up the sweep of the others.
func TestSweepKeepsWhatItCannotClean(t *testing.T) {
	o := owner(t)
	run, err := testrun.Register(o.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens on reserved ports.
	port := testenv.FreePort(t)
	run.UsesMySQL("root@tcp(127.0.0.1:" + port + ")/")
	run.UsesRedis("127.0.0.1:" + port)
	run.Name("feedtest_")
	t.Cleanup(func() { os.Remove(filepath.Join(testrun.Dir(), run.ID()+".run")) })
	cfg, _ := mysql.ParseDSN(testenv.MySQLServerDSN())
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after makeRun's cleanup, which needs it
	other := makeRun(t, admin)
	end(t, o)
	end(t, other.owner)
	start := time.Now()
	_, err = testrun.Sweep(context.Background())
	if err == nil {
		t.Errorf("the sweep reported no error for servers that do not answer")
	}
	t.Logf("sweep in %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !recordExists(run.ID()) {
		t.Errorf("the record of a run whose servers did not answer was removed")
	}
	if dbExists(t, admin, other.db) || recordExists(other.run.ID()) {
		t.Errorf("the other ended run was not swept")
	}
}
