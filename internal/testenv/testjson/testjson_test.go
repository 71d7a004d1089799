package testjson

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// stream is the -json events of a run of three packages: one passing with
// a chatty test, one whose test failed in a subtest, one killed by its
// timeout in the middle of a test; and a build error.
func stream(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	emit := func(action, pkg, test, output string, elapsed float64) {
		line, err := json.Marshal(event{Time: time.Now(), Action: action, Package: pkg, Test: test, Output: output, Elapsed: elapsed})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	emit("start", "m/ok", "", "", 0)
	emit("run", "m/ok", "TestChatty", "", 0)
	emit("output", "m/ok", "TestChatty", "=== RUN   TestChatty\n", 0)
	emit("output", "m/ok", "TestChatty", "    chatty_test.go:9: a log line of a passing test\n", 0)
	emit("output", "m/ok", "TestChatty", "--- PASS: TestChatty (2.50s)\n", 0)
	emit("pass", "m/ok", "TestChatty", "", 2.5)
	emit("output", "m/ok", "", "PASS\n", 0)
	emit("output", "m/ok", "", "ok  \tm/ok\t2.6s\n", 0)
	emit("pass", "m/ok", "", "", 2.6)

	emit("run", "m/bad", "TestFast", "", 0)
	emit("pass", "m/bad", "TestFast", "", 0.1)
	emit("run", "m/bad", "TestParent", "", 0)
	emit("output", "m/bad", "TestParent", "=== RUN   TestParent\n", 0)
	emit("run", "m/bad", "TestParent/child", "", 0)
	emit("output", "m/bad", "TestParent/child", "    bad_test.go:20: got 1, want 2\n", 0)
	emit("output", "m/bad", "TestParent/child", "    --- FAIL: TestParent/child (0.30s)\n", 0)
	emit("fail", "m/bad", "TestParent/child", "", 0.3)
	emit("output", "m/bad", "TestParent", "--- FAIL: TestParent (7.00s)\n", 0)
	emit("fail", "m/bad", "TestParent", "", 7)
	emit("output", "m/bad", "", "FAIL\n", 0)
	emit("output", "m/bad", "", "FAIL\tm/bad\t7.2s\n", 0)
	emit("fail", "m/bad", "", "", 7.2)

	emit("run", "m/hung", "TestHangs", "", 0)
	emit("output", "m/hung", "TestHangs", "=== RUN   TestHangs\n", 0)
	emit("output", "m/hung", "TestHangs", "panic: test timed out after 1m0s\n", 0)
	emit("output", "m/hung", "", "FAIL\tm/hung\t60.0s\n", 0)
	emit("fail", "m/hung", "", "", 60)

	emit("output", "m/none", "", "?   \tm/none\t[no test files]\n", 0)
	emit("skip", "m/none", "", "", 0)

	b.WriteString(`{"ImportPath":"m/broken","Action":"build-output","Output":"broken.go:3:1: syntax error\n"}` + "\n")
	b.WriteString("go: a line of the go command\n")
	return b.String()
}

func TestConvertPrintsWhatAPlainRunShows(t *testing.T) {
	var out strings.Builder
	if _, err := Convert(strings.NewReader(stream(t)), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tm/ok\t2.6s\n",
		"    bad_test.go:20: got 1, want 2\n    --- FAIL: TestParent/child (0.30s)\n",
		"--- FAIL: TestParent (7.00s)\n",
		"FAIL\tm/bad\t7.2s\n",
		"panic: test timed out after 1m0s\n",
		"broken.go:3:1: syntax error\n",
		"go: a line of the go command\n",
		"?   \tm/none\t[no test files]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "panic: test timed out") > strings.Index(got, "FAIL\tm/hung") {
		t.Errorf("the hung test's output comes after its package's FAIL line:\n%s", got)
	}
	for _, not := range []string{"a log line of a passing test", "--- PASS", "=== RUN", "PASS\n"} {
		if strings.Contains(got, not) {
			t.Errorf("output has %q, which a plain run does not show:\n%s", not, got)
		}
	}
}

func TestConvertTimesPackagesAndTopLevelTests(t *testing.T) {
	rep, err := Convert(strings.NewReader(stream(t)), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs, tests []string
	for _, p := range rep.Packages {
		pkgs = append(pkgs, p.Package+" "+p.Elapsed.String()+" "+p.Result)
	}
	for _, p := range rep.Tests {
		tests = append(tests, p.Test+" "+p.Elapsed.String()+" "+p.Result)
	}
	// A package without tests is no pole.
	if got, want := strings.Join(pkgs, ", "), "m/hung 1m0s fail, m/bad 7.2s fail, m/ok 2.6s pass"; got != want {
		t.Errorf("packages: %s; want %s", got, want)
	}
	// Subtests are inside their parents' time; a test that never ended has none.
	if got, want := strings.Join(tests, ", "), "TestParent 7s fail, TestChatty 2.5s pass, TestFast 100ms pass"; got != want {
		t.Errorf("tests: %s; want %s", got, want)
	}
	var w strings.Builder
	rep.Write(&w, 2)
	for _, want := range []string{"longest packages (of 3):\n", "     60.0s  m/hung (failed)\n", "longest tests (of 3):\n", "      7.0s  m/bad TestParent (failed)\n"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, w.String())
		}
	}
	if strings.Contains(w.String(), "TestFast") {
		t.Errorf("report of the 2 longest lists the third:\n%s", w.String())
	}
}
