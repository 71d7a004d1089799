// Package testjson reads the events of `go test -json` and writes what a
// person reads of a plain `go test` run: a line per package, and the whole
// output of each test that failed or never ended. It also keeps each
// package's and each test's time, so that every run of the test command
// ends with its long poles (docs/testing.md).
package testjson

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64 // seconds
	Output     string
	ImportPath string // build-output and build-fail events
}

// Timing is how long a package or a top-level test took, as `go test`
// reports it: a package from its binary's start to its end, a test from
// its start (or from its resumption, for a parallel test) to its end,
// its subtests included.
type Timing struct {
	Package string
	Test    string // empty for a package
	Elapsed time.Duration
	Result  string // pass, fail or skip
}

// Report is the timings of one run, longest first.
type Report struct {
	Packages []Timing
	Tests    []Timing
}

// Convert reads the events of `go test -json` from r until it ends, writes
// the plain output to w as it goes, and returns the timings. A line that is
// not an event (a message of the go command itself) is written as it is.
func Convert(r io.Reader, w io.Writer) (Report, error) {
	c := converter{w: w, held: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			c.print(string(line) + "\n")
			continue
		}
		c.handle(e)
	}
	c.flushAll()
	c.sort()
	return c.report, sc.Err()
}

type converter struct {
	w      io.Writer
	held   map[string][]string // output of the tests still running, by package and test
	report Report
}

func key(pkg, test string) string { return pkg + "\x00" + test }

func (c *converter) print(s string) { io.WriteString(c.w, s) }

func (c *converter) handle(e event) {
	switch e.Action {
	case "build-output":
		c.print(e.Output)
	case "output":
		if noise(e.Output) {
			return
		}
		// A package's own lines ("ok", "FAIL") are held too, and printed
		// after the output of its tests that never ended.
		k := key(e.Package, e.Test)
		c.held[k] = append(c.held[k], e.Output)
	case "pass", "fail", "skip":
		t := Timing{Package: e.Package, Test: e.Test, Elapsed: time.Duration(e.Elapsed * float64(time.Second)), Result: e.Action}
		if e.Test == "" {
			// A package that ended: what its tests left unended (a panic,
			// a timeout), then its result line.
			c.flushPackage(e.Package)
			if e.Action != "skip" { // a package without tests
				c.report.Packages = append(c.report.Packages, t)
			}
			return
		}
		k := key(e.Package, e.Test)
		if e.Action == "fail" {
			c.print(strings.Join(c.held[k], ""))
		}
		delete(c.held, k)
		if !strings.Contains(e.Test, "/") {
			c.report.Tests = append(c.report.Tests, t)
		}
	}
}

// noise is the output a plain run does not show: the markers of verbose
// mode and the PASS line before a package's "ok".
func noise(s string) bool {
	if s == "PASS\n" || s == "testing: warning: no tests to run\n" {
		return true
	}
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// flushPackage prints the held output of pkg's tests that never ended,
// then pkg's own lines.
func (c *converter) flushPackage(pkg string) {
	var keys []string
	for k := range c.held {
		if strings.HasPrefix(k, pkg+"\x00") && k != key(pkg, "") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = append(keys, key(pkg, ""))
	for _, k := range keys {
		c.print(strings.Join(c.held[k], ""))
		delete(c.held, k)
	}
}

// flushAll prints what is held when the stream ends early (go test was
// killed): the output of every test that did not end.
func (c *converter) flushAll() {
	keys := make([]string, 0, len(c.held))
	for k := range c.held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c.print(strings.Join(c.held[k], ""))
	}
	clear(c.held)
}

func (c *converter) sort() {
	longest := func(a, b Timing) int {
		return cmp.Or(cmp.Compare(b.Elapsed, a.Elapsed), cmp.Compare(a.Package, b.Package), cmp.Compare(a.Test, b.Test))
	}
	slices.SortFunc(c.report.Packages, longest)
	slices.SortFunc(c.report.Tests, longest)
}

// Write writes the n longest packages and the n longest top-level tests.
func (r Report) Write(w io.Writer, n int) {
	fmt.Fprintf(w, "longest packages (of %d):\n", len(r.Packages))
	for _, t := range r.Packages[:min(n, len(r.Packages))] {
		fmt.Fprintf(w, "  %7.1fs  %s%s\n", t.Elapsed.Seconds(), t.Package, failed(t))
	}
	fmt.Fprintf(w, "longest tests (of %d):\n", len(r.Tests))
	for _, t := range r.Tests[:min(n, len(r.Tests))] {
		fmt.Fprintf(w, "  %7.1fs  %s %s%s\n", t.Elapsed.Seconds(), t.Package, t.Test, failed(t))
	}
}

func failed(t Timing) string {
	if t.Result == "fail" {
		return " (failed)"
	}
	return ""
}
