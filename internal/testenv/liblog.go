package testenv

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv/testrun"
)

// go-redis, the MySQL driver and the standard log (net/http's server
// errors, gqlgen's and gorilla's websocket refusals) write to stderr,
// outside any test: a failed dial, a pool that cannot reach a node, a
// connection cut, an origin refused.
// The fault tests kill and restart Redis and MariaDB on purpose, and a
// loaded machine makes dials time out; go test prints a failing package's
// whole output, so that log once buried the first failing test under a
// hundred lines about tests that passed. In the test binaries that use
// this package it goes to a buffer instead, and a test that fails shows, in
// its own log, the lines written while it ran.
func init() {
	redis.SetLogger(libLog)
	mysql.SetLogger(mysqlLog{})
	log.SetOutput(stdLog{})
}

// libLogKeep is how many of the latest lines are kept.
const libLogKeep = 2000

// libLogShow is how many lines a failed test shows (the latest ones).
const libLogShow = 40

type libLogLine struct {
	at   time.Time
	text string
}

var libLog = &libLogBuffer{}

// libLogBuffer keeps the libraries' latest lines.
type libLogBuffer struct {
	mu      sync.Mutex
	lines   []libLogLine
	watched map[testing.TB]bool
}

// Printf is go-redis's logger.
func (b *libLogBuffer) Printf(_ context.Context, format string, v ...any) {
	b.add("go-redis: " + fmt.Sprintf(format, v...))
}

func (b *libLogBuffer) add(text string) {
	line := libLogLine{at: time.Now(), text: text}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) == libLogKeep {
		b.lines = append(b.lines[:0], b.lines[libLogKeep/2:]...)
	}
	b.lines = append(b.lines, line)
}

// mysqlLog is the MySQL driver's logger.
type mysqlLog struct{}

func (mysqlLog) Print(v ...any) { libLog.add("mysql: " + fmt.Sprint(v...)) }

// stdLog is the standard log's output (a line per write).
type stdLog struct{}

func (stdLog) Write(p []byte) (int, error) {
	libLog.add("log: " + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// since returns the lines written from start on.
func (b *libLogBuffer) since(start time.Time) []libLogLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []libLogLine
	for _, l := range b.lines {
		if !l.at.Before(start) {
			out = append(out, l)
		}
	}
	return out
}

// WatchLibraryLog makes t, if it fails, log what go-redis, the MySQL
// driver and the standard log wrote while it ran (from any test of the process: parallel
// tests share the libraries' log), and the time scale its deadlines were
// stretched by. Once per test; every test that takes a server from this
// package is watched.
func WatchLibraryLog(t testing.TB) {
	b := libLog
	b.mu.Lock()
	if b.watched == nil {
		b.watched = map[testing.TB]bool{}
	}
	if b.watched[t] {
		b.mu.Unlock()
		return
	}
	b.watched[t] = true
	b.mu.Unlock()
	start := time.Now()
	t.Cleanup(func() {
		b.mu.Lock()
		delete(b.watched, t)
		b.mu.Unlock()
		if !t.Failed() {
			return
		}
		// A deadline a failure message names was stretched by this much.
		if f, err := testrun.TimeScale(); err == nil && f != 1 {
			t.Logf("testenv: the time scale is %.2f now: the test's deadlines (Scale) were stretched about that much", f)
		}
		lines := b.since(start)
		if len(lines) == 0 {
			return
		}
		shown := lines[max(0, len(lines)-libLogShow):]
		t.Logf("go-redis, the MySQL driver and the standard log wrote %d lines while this test ran (any test of the package; the last %d):", len(lines), len(shown))
		for _, l := range shown {
			t.Logf("  %s %s", l.at.Format("15:04:05.000"), l.text)
		}
	})
}
