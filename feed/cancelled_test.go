package feed

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"feedservice/internal/testenv"
)

// lockedLog is a log written by several goroutines and read by the test.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestCancelledReadIsNoRedisFailure: a read whose context its caller
// cancelled (a client that completed its subscription, or went away)
// fails in Redis with the context's error; the engine logs no Redis
// failure for it, which every subscribe-and-complete cycle raised.
func TestCancelledReadIsNoRedisFailure(t *testing.T) {
	t.Parallel()
	var log lockedLog
	rdb, prefix := testenv.Redis(t)
	e := startTestEngineWithLog(t, newTestStore(t), rdb, prefix, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Users(ctx, []int64{1, 2, 3}); err == nil {
		t.Fatal("a read with a cancelled context succeeded: the test reads nothing from Redis")
	}
	if strings.Contains(log.String(), "redis") {
		t.Errorf("a cancelled read logged a Redis failure:\n%s", log.String())
	}
}
