package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv/testrun"
)

// go-redis writes its own log (a failed dial, a pool that cannot reach a
// node) to stderr, outside any test. The fault tests kill and restart
// Redis on purpose, and a loaded machine makes dials time out, so that
// log once buried the first failing test under a hundred lines about
// tests that passed. In the test binaries that use this package it goes
// to a buffer instead, and a test that fails shows, in its own log, the
// lines written while it ran.
func init() { redis.SetLogger(redisLog) }

// redisLogKeep is how many of the latest lines are kept.
const redisLogKeep = 2000

// redisLogShow is how many lines a failed test shows (the latest ones).
const redisLogShow = 40

type redisLogLine struct {
	at   time.Time
	text string
}

var redisLog = &redisLogBuffer{}

// redisLogBuffer keeps go-redis's latest lines.
type redisLogBuffer struct {
	mu      sync.Mutex
	lines   []redisLogLine
	watched map[testing.TB]bool
}

func (b *redisLogBuffer) Printf(_ context.Context, format string, v ...any) {
	line := redisLogLine{at: time.Now(), text: fmt.Sprintf(format, v...)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) == redisLogKeep {
		b.lines = append(b.lines[:0], b.lines[redisLogKeep/2:]...)
	}
	b.lines = append(b.lines, line)
}

// since returns the lines written from start on.
func (b *redisLogBuffer) since(start time.Time) []redisLogLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []redisLogLine
	for _, l := range b.lines {
		if !l.at.Before(start) {
			out = append(out, l)
		}
	}
	return out
}

// WatchRedisLog makes t, if it fails, log what go-redis logged while it
// ran (from any test of the process: parallel tests share the client
// library's log), and the time scale its deadlines were stretched by.
// Once per test; every test that takes a server from this package is
// watched.
func WatchRedisLog(t testing.TB) {
	b := redisLog
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
		shown := lines[max(0, len(lines)-redisLogShow):]
		t.Logf("go-redis logged %d lines while this test ran (any test of the package; the last %d):", len(lines), len(shown))
		for _, l := range shown {
			t.Logf("  %s %s", l.at.Format("15:04:05.000"), l.text)
		}
	})
}
