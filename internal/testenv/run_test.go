package testenv

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv/testrun"
)

// killedHelperEnv makes TestKilledRunIsSwept, run again as a child, the
// test process that gets killed.
const killedHelperEnv = "TESTENV_KILLED_HELPER"

// killedLeft is what the killed test process made, as it reports it.
type killedLeft struct {
	Run        string
	Database   string
	Template   string // the database a MySQLTemplate made
	Prefix     string
	RedisPID   int
	MariaDBPID int
	MariaDBDir string
}

// TestKilledRunIsSwept: a test process killed with SIGKILL in the middle
// of a test (no cleanup runs) takes its private servers (a redis-server
// and a mariadbd) with it at once, and the next sweep removes the rest: its
// databases (a test's, and a MySQLTemplate's template) and keys on the
// shared servers, the private MariaDB's data directory and its record.
func TestKilledRunIsSwept(t *testing.T) {
	if os.Getenv(killedHelperEnv) == "1" {
		killedHelper(t)
		return
	}
	t.Parallel()
	child := exec.Command(os.Args[0], "-test.run=^TestKilledRunIsSwept$", "-test.timeout=10m")
	child.Env = append(os.Environ(), killedHelperEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	var left killedLeft
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "LEFT "); ok {
			if err := json.Unmarshal([]byte(rest), &left); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if left.Run == "" {
		t.Fatalf("the helper reported nothing: %v", lines.Err())
	}
	t.Logf("the helper made %+v; killing it", left)
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()

	// The private servers end with it.
	for _, pid := range []int{left.RedisPID, left.MariaDBPID} {
		deadline := time.Now().Add(Scale(5 * time.Second))
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("private server %d outlived the killed test process", pid)
		}
	}

	ctx := context.Background()
	// Another package's tests may end runs of their own at the same time
	// (testrun's stand-in runs, with servers that never answer): only an
	// error about this run fails the test.
	swept, err := testrun.Sweep(ctx)
	if err != nil && strings.Contains(err.Error(), "run "+left.Run+" ") {
		t.Fatalf("sweep: %v", err)
	} else if err != nil {
		t.Logf("sweep, of other runs: %v", err)
	}
	t.Logf("swept %s", swept)
	cfg, _ := mysql.ParseDSN(MySQLServerDSN())
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, database := range []string{left.Database, left.Template} {
		var name string
		switch err := db.QueryRow("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", database).Scan(&name); {
		case err == nil:
			t.Errorf("database %s is still there", database)
		case !errors.Is(err, sql.ErrNoRows):
			t.Fatal(err)
		}
	}
	rdb, _ := Redis(t)
	if keys, err := Keys(ctx, rdb, left.Prefix); err != nil || len(keys) != 0 {
		t.Errorf("keys under %s: %v (%v), want none", left.Prefix, keys, err)
	}
	if _, err := os.Stat(left.MariaDBDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private MariaDB's directory %s: %v, want it removed", left.MariaDBDir, err)
	}
	if _, err := os.Stat(filepath.Join(testrun.Dir(), left.Run+".run")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's record: %v, want it removed", err)
	}
}

// killedHelper makes a database, a template and its copy, keys and two
// private servers, reports them and waits to be killed.
func killedHelper(t *testing.T) {
	dsn := MySQL(t)
	tpl := NewMySQLTemplate(func(ctx context.Context, dsn string) error {
		return execAll(ctx, dsn, "CREATE TABLE a (id INT PRIMARY KEY)")
	})
	tpl.Copy(t)
	rdb, prefix := Redis(t)
	for i := range 5 {
		rdb.Set(context.Background(), prefix+"k{"+strconv.Itoa(i)+"}", "v", time.Hour)
	}
	r := StartRedis(t)
	m := StartMariaDB(t)
	cfg, _ := mysql.ParseDSN(dsn)
	b, _ := json.Marshal(killedLeft{
		Run: thisRun().ID(), Database: cfg.DBName, Template: tpl.made.name, Prefix: prefix,
		RedisPID: r.cmd.Process.Pid, MariaDBPID: m.cmd.Process.Pid, MariaDBDir: m.dir,
	})
	os.Stdout.WriteString("LEFT " + string(b) + "\n")
	time.Sleep(time.Hour)
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || len(b) < i+3 || b[i+2] != 'Z'
}
