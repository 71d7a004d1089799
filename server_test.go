package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runMainEnv makes the test binary run main instead of the tests, so that
// the tests can see main's exit status and output as a shell would.
const runMainEnv = "FEEDSERVICE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("FEEDSERVICE_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs main with args in a process of its own, in dir, and returns
// its exit status, stdout and stderr. A server it started by mistake is
// killed after a few seconds, and the test fails.
func runMain(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "FEEDSERVICE_TEST_ARGS="+strings.Join(args, " "), "METRICS_ADDR=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not exit within a minute (a server?)\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
	}
	status := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return status, stdout.String(), stderr.String()
}

// TestHelpListsCommandsAndFlags: -h and --help exit 0 with the commands and
// the flags on stdout, the common settings (where it listens, its data,
// MySQL, Redis, the feed mode, the demo graph) above the seventy others.
func TestHelpListsCommandsAndFlags(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "--help", "-help"} {
		status, stdout, stderr := runMain(t, t.TempDir(), arg)
		if status != 0 {
			t.Fatalf("%s: exit status %d, want 0; stderr: %s", arg, status, stderr)
		}
		for _, want := range []string{"Commands:", "serve", "migrate", "seed", "-addr", "(ADDR", "-metrics-addr", "-data"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: the usage lacks %q:\n%s", arg, want, stdout)
			}
		}
		// where is the line that starts a flag's entry (a bool flag's name
		// ends its line; the others' are followed by their type).
		where := func(flag string) int {
			if i := strings.Index(stdout, "\n  "+flag+" "); i >= 0 {
				return i
			}
			return strings.Index(stdout, "\n  "+flag+"\n")
		}
		for _, common := range []string{"-mysql-dsn", "-redis-addr", "-seed", "-feed-mode"} {
			if i := where(common); i < 0 || i > where("-allowed-origins") {
				t.Errorf("%s: %s is missing or listed below the uncommon -allowed-origins:\n%s", arg, common, stdout)
			}
		}
	}
}

// TestUnknownCommandIsRefused: a word that is not a command, or a second
// command, stops the program with status 2 and a message naming it, before
// anything opens: never a server.
func TestUnknownCommandIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serv"}, `unknown command "serv"`},
		{[]string{"-addr", "127.0.0.1:0", "serv"}, `unknown command "serv"`},
		{[]string{"migrate", "seed"}, `one command at a time`},
		{[]string{"-no-such-flag"}, `flag provided but not defined: -no-such-flag`},
	} {
		dir := t.TempDir()
		status, _, stderr := runMain(t, dir, tc.args...)
		if status != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "-h") {
			t.Errorf("%v: exit status %d, stderr %q; want 2 and %q with a pointer to -h", tc.args, status, stderr, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the data directory was made (%v): something started", tc.args, err)
		}
	}
}

// TestCommandAfterFlags: the command may follow the flags, or come first.
// Each migrate applies the migrations into the -data directory and exits 0.
func TestCommandAfterFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-addr", "127.0.0.1:0", "-data", "store", "migrate"},
		{"migrate", "-addr", "127.0.0.1:0", "-data", "store"},
		{"-addr", "127.0.0.1:0", "migrate", "-data", "store"},
	} {
		dir := t.TempDir()
		status, _, stderr := runMain(t, dir, args...)
		if status != 0 {
			t.Fatalf("%v: exit status %d; stderr: %s", args, status, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "store", "feed.db")); err != nil {
			t.Errorf("%v: no database under -data: %v", args, err)
		}
		if strings.Contains(stderr, `"msg":"listening"`) {
			t.Errorf("%v: a server started: %s", args, stderr)
		}
	}
}

// TestPickCommand: no word is serve; each command is itself.
func TestPickCommand(t *testing.T) {
	for words, want := range map[string]string{"": "serve", "serve": "serve", "migrate": "migrate", "seed": "seed"} {
		got, err := pickCommand(strings.Fields(words))
		if err != nil || got != want {
			t.Errorf("pickCommand(%q) = %q, %v; want %q", words, got, err, want)
		}
	}
}

// TestLogStartsShortWithDurationsAsText: the log's first line names the
// common settings in a line one can read at a glance (the full "settings"
// line follows it), and a duration is written as text, not nanoseconds.
func TestLogStartsShortWithDurationsAsText(t *testing.T) {
	t.Parallel()
	status, _, stderr := runMain(t, t.TempDir(), "migrate")
	if status != 0 {
		t.Fatalf("migrate: exit status %d; stderr: %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if first := lines[0]; len(first) > 300 || !strings.Contains(first, `"msg":"starting"`) || !strings.Contains(first, `"addr":`) {
		t.Errorf("the first log line is %d bytes: %s", len(first), first)
	}
	if !strings.Contains(stderr, `"msg":"settings"`) {
		t.Errorf("no settings line: %s", stderr)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: durationsAsText}))
	log.Info("took", "wait", 1500*time.Millisecond)
	if !strings.Contains(buf.String(), `"wait":"1.5s"`) {
		t.Errorf("a duration in the log: %s, want \"1.5s\"", buf.String())
	}
}
