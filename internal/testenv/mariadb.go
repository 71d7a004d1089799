package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv/testrun"
)

// MariaDBServer is a private mariadbd on a free port, with its data in a
// directory of the test, that a test can stop and start again (MySQL going
// away and coming back with its data) without touching the shared server
// other tests use. Its root has no password.
type MariaDBServer struct {
	t      testing.TB
	dir    string
	port   string
	cmd    *exec.Cmd
	log    *os.File
	forget func() // drops the process from the run's record
}

// How long a private mariadbd may take to answer once started, and to
// exit on SIGTERM (both stretched by Scale).
const (
	mariadbReadyWait = 30 * time.Second
	mariadbStopWait  = 60 * time.Second
)

// StartMariaDB installs a fresh data directory and runs a private mariadbd
// on it until the test ends.
func StartMariaDB(t testing.TB) *MariaDBServer {
	t.Helper()
	dir := t.TempDir()
	// Its data (some 100 MB) goes if this process dies without removing it.
	t.Cleanup(ownServer(t, "mariadbd data", 0, false, dir))
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user="+currentUser())
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	m := &MariaDBServer{t: t, dir: dir, port: FreePort(t)}
	t.Cleanup(m.Kill)
	m.Start()
	return m
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// DSN is a DSN of the server without a database.
func (m *MariaDBServer) DSN() string { return "root@tcp(127.0.0.1:" + m.port + ")/" }

// CreateDatabase makes a database on the server and returns a DSN that
// selects it.
func (m *MariaDBServer) CreateDatabase(name string) string {
	m.t.Helper()
	db, err := sql.Open("mysql", m.DSN())
	if err != nil {
		m.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		m.t.Fatalf("create database on the private MariaDB: %v", err)
	}
	cfg, _ := mysql.ParseDSN(m.DSN())
	cfg.DBName = name
	return cfg.FormatDSN()
}

// Start runs the server on its data directory and waits until it answers.
func (m *MariaDBServer) Start() {
	m.t.Helper()
	log, err := os.OpenFile(filepath.Join(m.dir, "mariadbd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		m.t.Fatal(err)
	}
	cmd := exec.Command("mariadbd", "--no-defaults", "--user="+currentUser(),
		"--datadir="+filepath.Join(m.dir, "data"), "--socket="+filepath.Join(m.dir, "mariadbd.sock"),
		"--pid-file="+filepath.Join(m.dir, "mariadbd.pid"), "--port="+m.port, "--bind-address=127.0.0.1",
		"--skip-log-bin", "--innodb-buffer-pool-size=32M", "--max-connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	testrun.DieWithParent(cmd, false)
	if err := cmd.Start(); err != nil {
		log.Close()
		m.t.Fatalf("start mariadbd: %v", err)
	}
	m.cmd, m.log = cmd, log
	m.forget = ownServer(m.t, "mariadbd", cmd.Process.Pid, false, "")
	db, _ := sql.Open("mysql", m.DSN()+"?timeout=1s")
	defer db.Close()
	deadline := time.Now().Add(Scale(mariadbReadyWait))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(m.dir, "mariadbd.log"))
			m.t.Fatalf("private mariadbd on port %s does not answer: %v\n%s", m.port, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts the server down cleanly (SIGTERM) and waits until it exited:
// connections are cut, open transactions roll back, committed data stays.
func (m *MariaDBServer) Stop() {
	m.t.Helper()
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- m.cmd.Wait() }()
	within := Scale(mariadbStopWait)
	select {
	case <-done:
	case <-time.After(within):
		m.cmd.Process.Kill()
		<-done
		m.t.Errorf("private mariadbd did not stop within %s; killed", within)
	}
	m.log.Close()
	m.cmd = nil
	m.forget()
}

// Restart stops the server and starts it again on the same data.
func (m *MariaDBServer) Restart() {
	m.t.Helper()
	m.Stop()
	m.Start()
}

// Kill stops the server at once (SIGKILL); InnoDB recovers committed
// transactions at the next start.
func (m *MariaDBServer) Kill() {
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Kill()
	m.cmd.Wait()
	m.log.Close()
	m.cmd = nil
	m.forget()
}

func (m *MariaDBServer) String() string { return fmt.Sprintf("mariadbd on port %s", m.port) }
