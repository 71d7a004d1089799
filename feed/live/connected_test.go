package live

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/testenv"
)

// connectedUntil is reader's time in the index of connected readers (Unix
// ms), 0 when it is not there.
func (th *testHub) connectedUntil(t *testing.T, reader int64) int64 {
	t.Helper()
	key := th.d.Keys.ConnectedReaders(keyspace.ConnectedReaderShard(reader))
	until, err := th.d.Redis.ZScore(context.Background(), key, strconv.FormatInt(reader, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return int64(until)
}

// gauge is the value of a gauge.
func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// A reader is in the index of connected readers from their first
// listener's opening, about ConnectedValidity ahead; a refresh moves
// their time on while a listener stays; the index keeps them while any
// listener of theirs stays, and drops them with the last.
func TestConnectedReaderIndexFollowsTheListeners(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	th := startHub(t, rdb, prefix)
	const reader = 7
	first, stopFirst := context.WithCancel(context.Background())
	second, stopSecond := context.WithCancel(context.Background())
	defer stopFirst()
	defer stopSecond()
	if _, err := th.Listen(first, reader, noAuthors); err != nil {
		t.Fatal(err)
	}
	opened := th.connectedUntil(t, reader)
	if ahead := time.Until(time.UnixMilli(opened)); ahead < ConnectedValidity-testenv.Scale(5*time.Second) || ahead > ConnectedValidity {
		t.Fatalf("a connected reader's entry holds %v, want about %v", ahead, ConnectedValidity)
	}
	if ttl := rdb.PTTL(context.Background(), th.d.Keys.ConnectedReaders(keyspace.ConnectedReaderShard(reader))).Val(); ttl <= 0 || ttl > ConnectedValidity {
		t.Fatalf("the index's shard has TTL %v, want at most %v", ttl, ConnectedValidity)
	}

	time.Sleep(5 * time.Millisecond)
	if err := th.refreshConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if refreshed := th.connectedUntil(t, reader); refreshed <= opened {
		t.Fatalf("a refresh left the entry at %d, from %d", refreshed, opened)
	}
	if n := gauge(th.d.Metrics.LiveReaders); n != 1 {
		t.Fatalf("feed_live_readers %v after a refresh, want 1", n)
	}

	if _, err := th.Listen(second, reader, noAuthors); err != nil {
		t.Fatal(err)
	}
	stopFirst()
	time.Sleep(100 * time.Millisecond)
	if th.connectedUntil(t, reader) == 0 {
		t.Fatal("the reader left the index while a listener of theirs stays")
	}
	stopSecond()
	testenv.WaitFor(t, "the reader to leave the index", func() bool { return th.connectedUntil(t, reader) == 0 })
}

// A refresh prunes the entries past their time from the shards it writes
// (an instance that died left them), and writes nothing without readers.
func TestConnectedRefreshPrunesLapsedEntries(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	th := startHub(t, rdb, prefix)
	ctx := context.Background()
	const reader = 7
	key := th.d.Keys.ConnectedReaders(keyspace.ConnectedReaderShard(reader))
	var lapsed int64 = 1000
	for keyspace.ConnectedReaderShard(lapsed) != keyspace.ConnectedReaderShard(reader) {
		lapsed++
	}
	past := float64(time.Now().Add(-time.Second).UnixMilli())
	if err := rdb.ZAdd(ctx, key, redis.Z{Score: past, Member: strconv.FormatInt(lapsed, 10)}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := th.refreshConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if th.connectedUntil(t, lapsed) == 0 {
		t.Fatal("a refresh without readers wrote the index")
	}
	th.listen(t, reader)
	if err := th.refreshConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if until := th.connectedUntil(t, lapsed); until != 0 {
		t.Fatalf("a lapsed entry (until %d) stayed after a refresh of its shard", until)
	}
	if th.connectedUntil(t, reader) == 0 {
		t.Fatal("the connected reader is not in the index")
	}
}
