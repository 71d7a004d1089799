package testenv

import (
	"context"
	"log"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// libLogHelperEnv makes TestLibraryLogShownOnFailureOnly, run again as a
// child, the test that provokes go-redis's log: "pass" or "fail".
const libLogHelperEnv = "TESTENV_LIBLOG_HELPER"

// stdLine is what the helper writes with the standard log.
const stdLine = "a line of the standard log"

// TestLibraryLogShownOnFailureOnly: a dial that go-redis logs, and a line
// of the standard log, write nothing to the output of a test that passes,
// and show in the log of a test that fails (without the buffer, both go to
// stderr either way, and go test prints it for the whole package).
func TestLibraryLogShownOnFailureOnly(t *testing.T) {
	if mode := os.Getenv(libLogHelperEnv); mode != "" {
		WatchLibraryLog(t)
		// Nothing listens on a reserved port.
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + FreePort(t), DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
		defer rdb.Close()
		if err := rdb.Ping(context.Background()).Err(); err == nil {
			t.Fatal("a Redis answered on a port reserved for nobody")
		}
		log.Print(stdLine)
		if mode == "fail" {
			t.Error("failing on purpose")
		}
		return
	}
	t.Parallel()
	run := func(mode string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLibraryLogShownOnFailureOnly$")
		cmd.Env = append(os.Environ(), libLogHelperEnv+"="+mode)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	const line = "connection pool: failed to dial"
	if out := run("pass"); strings.Contains(out, line) || strings.Contains(out, stdLine) || !strings.Contains(out, "PASS") {
		t.Errorf("a passing test's output holds go-redis's dial error or the standard log's line (or it did not pass):\n%s", out)
	}
	out := run("fail")
	fail := strings.Index(out, "--- FAIL")
	if fail < 0 || !strings.Contains(out[fail:], "go-redis: redis: "+line) || !strings.Contains(out[fail:], stdLine) {
		t.Errorf("a failing test's log lacks go-redis's dial error or the standard log's line:\n%s", out)
	}
	if before := out[:max(fail, 0)]; strings.Contains(before, line) || strings.Contains(before, stdLine) {
		t.Errorf("a library's line was written outside the failing test's log:\n%s", out)
	}
}
