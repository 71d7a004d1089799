package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"

	"github.com/redis/go-redis/v9"
)

// fanoutCost is what Redis did for a fan-out, from its own counters on a
// private redis-server (INFO commandstats counts the calls a script makes
// too): its calls and CPU, per inbox entry added.
type fanoutCost struct {
	entries int
	calls   map[string]int64 // by command
	usec    map[string]int64 // Redis's time inside each command, by command
	cpu     time.Duration    // used_cpu_sys + used_cpu_user
	wall    time.Duration
	posts   []int64
}

// wantDelivered fails t unless every reader's inbox holds every post the
// fan-out added: the cost is of real entries.
func (c fanoutCost) wantDelivered(t testing.TB, te *testEngine, rdb redis.UniversalClient, readers []int64) {
	t.Helper()
	ctx := context.Background()
	pipe := rdb.Pipeline()
	var scores []*redis.FloatCmd
	for _, r := range readers {
		for _, p := range c.posts {
			scores = append(scores, pipe.ZScore(ctx, te.keys.Inbox(r), strconv.FormatInt(p, 10)))
		}
	}
	pipe.Exec(ctx)
	for i, s := range scores {
		if s.Err() != nil {
			t.Fatalf("inbox of %d lacks post %d: %v", readers[i/len(c.posts)], c.posts[i%len(c.posts)], s.Err())
		}
	}
}

func (c fanoutCost) callsPerEntry() float64 {
	var n int64
	for _, v := range c.calls {
		n += v
	}
	return float64(n) / float64(c.entries)
}

func (c fanoutCost) String() string {
	var parts []string
	for cmd, n := range c.calls {
		parts = append(parts, fmt.Sprintf("%s %.2f (%.2f µs)", cmd, float64(n)/float64(c.entries), float64(c.usec[cmd])/float64(c.entries)))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d entries: %.2f Redis calls per entry (%s); Redis CPU %.2f µs per entry; wall %.1f µs per entry (a shared, busy machine)",
		c.entries, c.callsPerEntry(), strings.Join(parts, ", "),
		float64(c.cpu.Microseconds())/float64(c.entries), float64(c.wall.Microseconds())/float64(c.entries))
}

// newCostEngine starts a push-mode engine on a private redis-server, so
// that Redis's counters see only its work, with readers followers of one
// author, each of whom read their feed once (so each has an inbox and a
// followee set, as an active reader does).
func newCostEngine(t testing.TB, readers int) (te *testEngine, server redis.UniversalClient, author int64, followers []int64) {
	t.Helper()
	r := testenv.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { rdb.Close() })
	te = startTestEngine(t, newTestStore(t), rdb, testenv.Name("t")+":", func(c *config.Config) {
		c.Mode = config.ModePush
		c.InboxCap = 800
		c.CelebrityFollowers = 100000
		c.FanoutBatchSize = 1000
		c.FanoutWorkers = 0
		c.Dispatch = false
	})
	author, followers = benchFanoutAudience(te, readers)
	first := 20
	for _, f := range followers {
		if _, err := te.Feed(context.Background(), f, paging.PageArgs{First: &first}); err != nil {
			t.Fatalf("first read of %d: %v", f, err)
		}
	}
	// A first post, not measured: it loads the scripts, and the inboxes
	// hold an entry as an active reader's do.
	post := te.ids.Next()
	task := fanout.Task{Op: fanout.OpAdd, Post: post, Author: author, User: author, Event: post, Readers: followers}
	if err := te.stream.RunTask(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	return te, rdb, author, followers
}

// measureFanout runs posts fan-out tasks of a new post by author to
// readers, and reads Redis's counters around them.
func measureFanout(t testing.TB, te *testEngine, rdb redis.UniversalClient, author int64, readers []int64, posts int) fanoutCost {
	t.Helper()
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	cpu0 := redisCPU(t, rdb)
	start := time.Now()
	var ids []int64
	for range posts {
		post := te.ids.Next()
		ids = append(ids, post)
		task := fanout.Task{Op: fanout.OpAdd, Post: post, Author: author, User: author, Event: post, Readers: readers}
		if err := te.stream.RunTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	cost := fanoutCost{entries: len(readers) * posts, wall: time.Since(start), posts: ids}
	cost.cpu = redisCPU(t, rdb) - cpu0
	cost.calls, cost.usec = commandCalls(t, rdb)
	return cost
}

// commandCalls reads INFO commandstats: calls and the time inside them
// (µs) by command, less the INFO and CONFIG calls of the measurement
// itself. A script's time includes its calls'.
func commandCalls(t testing.TB, rdb redis.UniversalClient) (calls, usec map[string]int64) {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls, usec = map[string]int64{}, map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		if name == "info" || name == "config|resetstat" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				calls[name], _ = strconv.ParseInt(v, 10, 64)
			}
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				usec[name], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return calls, usec
}

// maxFanoutCallsPerEntry bounds the Redis calls (a script's calls
// included) per inbox entry that a fan-out adds to readers who have an
// inbox: the script call and the four calls in it (docs/performance.md),
// and the batch's announcement spread over its readers. It was 10.05.
const maxFanoutCallsPerEntry = 5.5

// A fan-out to readers who have an inbox makes at most
// maxFanoutCallsPerEntry Redis calls per entry, counted by Redis itself.
func TestFanoutRedisCallsPerEntry(t *testing.T) {
	te, rdb, author, readers := newCostEngine(t, 200)
	cost := measureFanout(t, te, rdb, author, readers, 5)
	cost.wantDelivered(t, te, rdb, readers)
	t.Log(cost)
	if got := cost.callsPerEntry(); got > maxFanoutCallsPerEntry {
		t.Fatalf("%.2f Redis calls per inbox entry, want at most %.1f: %s", got, maxFanoutCallsPerEntry, cost)
	}
}

// BenchmarkFanoutRedisCost is the fan-out of posts by an author whom 1,000
// readers with inboxes follow, on a private redis-server, with Redis's
// calls and CPU per inbox entry as metrics. The wall time includes the
// MySQL check of who still follows (one query a batch).
//
//	go test -run '^$' -bench FanoutRedisCost -benchtime 20x ./feed
func BenchmarkFanoutRedisCost(b *testing.B) {
	te, rdb, author, readers := newCostEngine(b, 1000)
	ctx := context.Background()
	rdb.ConfigSet(ctx, "latency-monitor-threshold", "1")
	rdb.ConfigSet(ctx, "slowlog-log-slower-than", "1000")
	rdb.SlowLogReset(ctx)
	rdb.Do(ctx, "LATENCY", "RESET")
	b.ResetTimer()
	cost := measureFanout(b, te, rdb, author, readers, b.N)
	b.StopTimer()
	if slow, err := rdb.SlowLogGet(ctx, 5).Result(); err == nil {
		for _, s := range slow {
			b.Logf("SLOWLOG: %v %.60q", s.Duration, strings.Join(s.Args, " "))
		}
	}
	if lat, err := rdb.Do(ctx, "LATENCY", "LATEST").Slice(); err == nil {
		b.Logf("LATENCY LATEST: %v", lat)
	}
	cost.wantDelivered(b, te, rdb, readers)
	// The MySQL check of who still follows, one query a batch.
	t0 := time.Now()
	for range 5 {
		if _, err := te.store.FollowersAmong(ctx, author, readers); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("FollowersAmong of %d readers: %v a batch (a shared, busy machine)", len(readers), time.Since(t0)/5)
	b.ReportMetric(cost.callsPerEntry(), "calls/entry")
	b.ReportMetric(float64(cost.cpu.Nanoseconds())/1000/float64(cost.entries), "redis-µs/entry")
	b.ReportMetric(float64(cost.entries)/cost.wall.Seconds(), "entries/s")
	b.Log(cost)
}
