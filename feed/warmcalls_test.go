package feed

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
)

// warmMaxPushCallsPerPage bounds the Redis commands a warm first page of
// 20 runs in push mode, those run inside scripts included (Redis's own
// count, INFO commandstats), on the set-up of newWarmCallsWorld; two above
// what was measured (12), for the commands of the engine's background work
// (the fan-out stream's reads) that fall within the count. Before: 15 (four
// PEXPIREs a page).
const warmMaxPushCallsPerPage = 14

// warmHybridExtraCalls is what a warm hybrid page may run beyond push's
// in the same set-up: the celebrity set's SMEMBERS. The celebrities'
// posts are folded into the inbox after the first page that merged them
// (timeline's fold.go), so a page whose celebrities posted nothing since
// reads neither their outboxes nor looks their posts up in the inbox.
// Before folding: 2.6 more (a ZMSCORE and an HMGET for the celebrities'
// posts, and what the merge's lookups cost).
const warmHybridExtraCalls = 1

// warmBackgroundCalls bounds, per page, what INFO counts of the engine's
// background work during the pages (every client's commands count), the
// fan-out stream's left out (callsSince): a lease's renewal, the
// dispatcher's look for pending events. A page of 20 runs whole commands,
// so a hybrid page one command beyond push's would exceed it by 1, not by
// this.
const warmBackgroundCalls = 0.2

// warmCallsPages is how many warm first pages the count is taken over.
const warmCallsPages = 60

// TestWarmPageRedisCalls: a warm first page of 20 runs at most
// warmMaxPushCallsPerPage Redis commands in push mode, and at most
// warmHybridExtraCalls more in hybrid mode, with no outbox read, on a
// private redis-server whose INFO commandstats counts every command, those
// the scripts run included. The set-up is issue 34's, scaled down: readers
// who each follow 3 celebrities and 20 ordinary authors, with 10 posts
// each.
func TestWarmPageRedisCalls(t *testing.T) {
	t.Parallel()
	totals := map[config.Mode]float64{}
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		w := newWarmCallsWorld(t, mode)
		before, outboxReads := commandStats(t, w.rdb), w.outboxReads()
		for i := range warmCallsPages {
			w.page(i)
		}
		per, total := callsSince(t, w.rdb, before, warmCallsPages)
		t.Logf("%s: %.1f Redis commands per warm first page: %s", mode, total, formatCalls(per))
		if n := w.outboxReads() - outboxReads; n > 0 {
			t.Errorf("%s: warm pages read %v outboxes from Redis, want none", mode, n)
		}
		totals[mode] = total
	}
	if got := totals[config.ModePush]; got > warmMaxPushCallsPerPage {
		t.Errorf("push: a warm first page ran %.1f Redis commands, more than %d", got, warmMaxPushCallsPerPage)
	}
	if got, most := totals[config.ModeHybrid], totals[config.ModePush]+warmHybridExtraCalls+warmBackgroundCalls; got > most {
		t.Errorf("hybrid: a warm first page ran %.1f Redis commands, more than push's %.1f and %d", got, totals[config.ModePush], warmHybridExtraCalls)
	}
}

// BenchmarkWarmCelebrityPage reads warm first pages of 20 through the
// engine on makeWarmCallsGraph's graph, where every reader follows 3
// celebrities, in push and hybrid modes, on a private redis-server; it
// reports per page, beside the time, Redis's commands, Redis's CPU time
// (INFO cpu) and the CPU time of the benchmark's process (the engine and
// its Redis client; the fan-out workers are idle), which a loaded box
// disturbs less than the time.
//
//	go test -run '^$' -bench WarmCelebrityPage ./feed
func BenchmarkWarmCelebrityPage(b *testing.B) {
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		b.Run("mode="+string(mode), func(b *testing.B) {
			w := newWarmCallsWorld(b, mode)
			before, redisBefore, ownBefore := commandStats(b, w.rdb), redisCPU(b, w.rdb), ownCPU(b)
			b.ResetTimer()
			for i := range b.N {
				w.page(i)
			}
			b.StopTimer()
			redisUsed, ownUsed := redisCPU(b, w.rdb)-redisBefore, ownCPU(b)-ownBefore
			_, total := callsSince(b, w.rdb, before, b.N)
			b.ReportMetric(total, "redis-cmds/page")
			b.ReportMetric(float64(redisUsed.Microseconds())/float64(b.N), "redis-cpu-µs/page")
			b.ReportMetric(float64(ownUsed.Microseconds())/float64(b.N), "engine-cpu-µs/page")
		})
	}
}

// warmCallsWorld is an engine on a private redis-server, with readers
// whose caches are warm.
type warmCallsWorld struct {
	t       testing.TB
	te      *testEngine
	rdb     redis.UniversalClient
	readers []int64
}

// newWarmCallsWorld starts an engine in mode on a private redis-server (its
// own: INFO counts every client's commands), makes the graph
// (makeWarmCallsGraph) and reads each reader's first page twice: cold,
// then warm, so that every tier is filled.
func newWarmCallsWorld(t testing.TB, mode config.Mode) *warmCallsWorld {
	t.Helper()
	server := testenv.StartRedis(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, newTestStore(t), rdb, "calls:", func(c *config.Config) {
		c.Mode = mode
		c.CelebrityFollowers = warmCallsReaders + 1
		c.InboxCap = 800
		c.FanoutBatchSize = 50
		c.LocalCacheTTL = time.Hour // a warm page's commands, not revalidation's
	})
	w := &warmCallsWorld{t: t, te: te, rdb: rdb, readers: makeWarmCallsGraph(te)}
	for i := range 2 * len(w.readers) {
		w.page(i)
	}
	te.settle() // the folds the warm pages left to the background, too
	// A fold that found no slot, or the inbox's rebuild still swapping,
	// wrote nothing: the next page folds. One more page each, and its
	// fold, before the count.
	for i := range len(w.readers) {
		w.page(i)
	}
	te.settle()
	return w
}

// outboxReads is how many outboxes this world's engine has read from
// Redis into its local tier (its misses there).
func (w *warmCallsWorld) outboxReads() float64 {
	return lcCount(w.te.metrics.CacheLookups.WithLabelValues(metrics.TierLocal, metrics.KindOutbox, "miss"))
}

// page reads the first page of the i-th reader (round the readers).
func (w *warmCallsWorld) page(i int) {
	w.t.Helper()
	first := 20
	conn, err := w.te.Feed(context.Background(), w.readers[i%len(w.readers)], paging.PageArgs{First: &first})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(conn.Edges) != first {
		w.t.Fatalf("a first page of %d entries, want %d", len(conn.Edges), first)
	}
}

// callsSince is the commands per page since before (INFO commandstats),
// by command and in all, over pages pages; INFO itself is left out.
func callsSince(t testing.TB, rdb redis.UniversalClient, before map[string]int64, pages int) (map[string]float64, float64) {
	t.Helper()
	after := commandStats(t, rdb)
	per := map[string]float64{}
	var total float64
	for cmd, n := range after {
		// A page never reads or writes the fan-out stream: its commands
		// (XREADGROUP, XAUTOCLAIM, XPENDING, XINFO, XLEN, XTRIM) are the
		// engine's background work, which a loaded box spreads over more
		// of the pages' time (0.3 a page at a time scale of 9.8).
		if d := float64(n - before[cmd]); d > 0 && cmd != "info" && !strings.HasPrefix(cmd, "x") {
			per[cmd] = d / float64(pages)
			total += per[cmd]
		}
	}
	return per, total
}

// warmCallsReaders is how many readers makeWarmCallsGraph makes.
const warmCallsReaders = 4

// makeWarmCallsGraph makes warmCallsReaders readers who each follow 3
// celebrities (in hybrid mode: a follower more than the readers) and the
// same 20 ordinary authors, 10 posts by each author.
func makeWarmCallsGraph(te *testEngine) []int64 {
	var readers, celebs, authors []int64
	for i := range warmCallsReaders {
		readers = append(readers, te.user(fmt.Sprintf("reader%d", i)))
	}
	fan := te.user("fan")
	for i := range 3 {
		celebs = append(celebs, te.user(fmt.Sprintf("celeb%d", i)))
	}
	for i := range 20 {
		authors = append(authors, te.user(fmt.Sprintf("author%d", i)))
	}
	for _, c := range celebs {
		te.follow(fan, c)
	}
	for _, r := range readers {
		for _, f := range append(append([]int64{}, celebs...), authors...) {
			te.follow(r, f)
		}
	}
	for i := range 10 {
		for _, a := range append(append([]int64{}, celebs...), authors...) {
			te.post(a, fmt.Sprintf("post %d", i))
		}
	}
	te.settle()
	return readers
}

// commandStats is the calls of each command, from INFO commandstats (less
// the measurement's own INFO calls).
func commandStats(t testing.TB, rdb redis.UniversalClient) map[string]int64 {
	t.Helper()
	calls, _ := commandCalls(t, rdb)
	return calls
}

// formatCalls lists commands per page, the most frequent first.
func formatCalls(per map[string]float64) string {
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return per[names[i]] > per[names[j]] || (per[names[i]] == per[names[j]] && names[i] < names[j])
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.1f", n, per[n])
	}
	return strings.Join(parts, ", ")
}

// A read refreshes the TTLs of the reader's keys only once the inbox's or
// the followee set's has run down by InboxTTL/inboxTTLRefreshDivisor (see
// inbox.inboxTTLRefreshDivisor): a minute short of that, a read leaves them
// as they are; a minute past it, it sets all four back to InboxTTL.
func TestInboxTTLRefreshedWhenRunningOut(t *testing.T) {
	t.Parallel()
	const ttl = time.Hour
	refreshBelow := ttl - ttl/10
	te := newTestEngine(t, func(c *config.Config) { c.InboxTTL = ttl })
	reader, a, b, c := te.user("reader"), te.user("author_a"), te.user("author_b"), te.user("author_c")
	te.follow(reader, a)
	te.follow(reader, b)
	te.repost(b, te.post(c, "c1")) // gives the inbox a sources hash
	te.post(a, "a1")
	te.settle()
	te.readFeed(reader, 10)
	ctx := context.Background()
	k := te.keys
	keys := []string{k.Inbox(reader), k.InboxSources(reader), k.Following(reader), k.FollowingVersion(reader)}
	set := func(key string, d time.Duration) {
		t.Helper()
		if err := te.redis.PExpire(ctx, key, d).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, shortened := range []string{k.Inbox(reader), k.Following(reader)} {
		for _, key := range keys {
			set(key, ttl)
		}
		set(shortened, refreshBelow+time.Minute)
		te.readFeed(reader, 10)
		if got := te.redis.PTTL(ctx, shortened).Val(); got > refreshBelow+time.Minute {
			t.Fatalf("%s at %v, a minute above the refresh point, was refreshed to %v", shortened, refreshBelow+time.Minute, got)
		}
		set(shortened, refreshBelow-time.Minute)
		te.readFeed(reader, 10)
		for _, key := range keys {
			if got := te.redis.PTTL(ctx, key).Val(); got < ttl-time.Minute || got > ttl {
				t.Fatalf("%s shortened to a minute under the refresh point, then read: PTTL of %s is %v, want about %v", shortened, key, got, ttl)
			}
		}
	}
}

// redisCPU is the CPU time the redis-server has used (INFO cpu, user and
// system).
func redisCPU(t testing.TB, rdb redis.UniversalClient) time.Duration {
	t.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("INFO cpu line %q", line)
			}
			sum += f
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// ownCPU is the CPU time this process has used, user and system.
func ownCPU(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
