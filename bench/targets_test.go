package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheKind: the memory step counts the cache tiers' keys by the names
// the tiers write, and nothing else under the prefix.
func TestCacheKind(t *testing.T) {
	const p = "feedbench:push:"
	for key, want := range map[string]string{
		p + "cache:post:7129":              "post",
		p + "cache:user:{u42}:info":        "info",
		p + "cache:user:{u42}:counts":      "counts",
		p + "following:{u42}":              "following",
		p + "feed:{u42}":                   "",
		p + "feedsrc:{u42}":                "",
		p + "posts:{u42}":                  "",
		p + "cache:user:{u42}:other":       "",
		"feedbench:hybrid:cache:post:7129": "", // another mode's prefix
	} {
		if got := cacheKind(p, key); got != want {
			t.Errorf("cacheKind(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestReadGoBench reads the medians of the two benchmarks from `go test
// -bench` output, ignoring the other lines and benchmarks.
func TestReadGoBench(t *testing.T) {
	out := `goos: linux
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   2000000 ns/op   500.0 pages/s   101500 B/op   1600 allocs/op
--- BENCH: BenchmarkFeedPage/mode=push/followees=200-2
    bench_test.go:308: mode=push followees=200: setup 282ms
BenchmarkFeedPage/mode=push/followees=10-2   1000   900000 ns/op   1111 pages/s   90000 B/op   1000 allocs/op
BenchmarkRedisPage-2   10000   200000 ns/op   5000 pages/s   11465 B/op   205 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   4000000 ns/op   250.0 pages/s   101520 B/op   1500 allocs/op
BenchmarkRedisPage-2   10000   100000 ns/op   10000 pages/s   11465 B/op   205 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   3000000 ns/op   333.3 pages/s   101510 B/op   1593 allocs/op
BenchmarkRedisPage-2   10000   300000 ns/op   3333 pages/s   11465 B/op   205 allocs/op
PASS
`
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := readGoBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Samples != 3 || g.EngineNsOp != 3e6 || g.RawNsOp != 2e5 || g.EngineAllocs != 1593 || g.RawAllocs != 205 {
		t.Fatalf("read %+v; want 3 samples, medians 3e6 and 2e5 ns/op, 1593 and 205 allocs", g)
	}
	rows := g.targets()
	if len(rows) < 2 || rows[0].Status != "missed" || rows[1].Status != "missed" {
		t.Fatalf("rows %+v: the engine at 6.7%% of raw with 1,593 allocations misses both", rows)
	}
	if _, err := readGoBench(filepath.Join(t.TempDir(), "missing.txt")); err == nil {
		t.Fatal("a missing file read without an error")
	}
	os.WriteFile(path, []byte(strings.ReplaceAll(out, "BenchmarkRedisPage", "BenchmarkOther")), 0o644)
	if _, err := readGoBench(path); err == nil {
		t.Fatal("a file without BenchmarkRedisPage read without an error")
	}
	// The engine's page is the one without blocks and mutes: a file with
	// only the name from before hiding=none has none.
	os.WriteFile(path, []byte(strings.ReplaceAll(out, "/hiding=none", "")), 0o644)
	if _, err := readGoBench(path); err == nil {
		t.Fatal("a file without hiding=none read without an error")
	}
}

// TestHidingTargets reads each mode's page with blocks and mutes against
// the page without them (medians), and checks the verdict at the edge of
// the bound: a time ratio of exactly 1.10 is met, just over it missed; a
// mode with only one of the two has no ratio.
func TestHidingTargets(t *testing.T) {
	out := `goos: linux
BenchmarkFeedPage/mode=push/followees=10-2   1000   900000 ns/op   1111 pages/s   90000 B/op   1000 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   2000000 ns/op   500.0 pages/s   101500 B/op   600 allocs/op
--- BENCH: BenchmarkFeedPage/mode=push/followees=200/hiding=none-2
    bench_test.go:408: 10 of 200 followees muted, 2 blocked, the reader blocked by 2 outsiders
BenchmarkFeedPage/mode=push/followees=200/hiding=mute5block1-2   1000   2200000 ns/op   454.5 pages/s   101500 B/op   602 allocs/op
BenchmarkFeedPage/mode=hybrid/followees=200/hiding=none-2   1000   1000000 ns/op   1000 pages/s   101500 B/op   600 allocs/op
BenchmarkFeedPage/mode=hybrid/followees=200/hiding=mute5block1-2   1000   1100001 ns/op   909.1 pages/s   101500 B/op   602 allocs/op
BenchmarkRedisPage-2   10000   200000 ns/op   5000 pages/s   11465 B/op   205 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   2100000 ns/op   476.2 pages/s   101500 B/op   600 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=mute5block1-2   1000   9000000 ns/op   111.1 pages/s   101500 B/op   602 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=none-2   1000   1900000 ns/op   526.3 pages/s   101500 B/op   600 allocs/op
BenchmarkFeedPage/mode=push/followees=200/hiding=mute5block1-2   1000   1000000 ns/op   1000 pages/s   101500 B/op   602 allocs/op
BenchmarkFeedPage/mode=pull/followees=200/hiding=none-2   100   5000000 ns/op   200.0 pages/s   219000 B/op   3600 allocs/op
PASS
`
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := readGoBench(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []HidingBench{
		{Mode: "push", Samples: 3, NoneNsOp: 2e6, HidingNsOp: 2.2e6, Ratio: 1.1},
		{Mode: "hybrid", Samples: 1, NoneNsOp: 1e6, HidingNsOp: 1100001, Ratio: 1.100001},
	}
	if len(g.Hiding) != len(want) {
		t.Fatalf("read %+v; want push and hybrid (pull has no page with blocks and mutes)", g.Hiding)
	}
	for i, w := range want {
		if h := g.Hiding[i]; h.Mode != w.Mode || h.Samples != w.Samples || h.NoneNsOp != w.NoneNsOp || h.HidingNsOp != w.HidingNsOp || math.Abs(h.Ratio-w.Ratio) > 1e-12 {
			t.Errorf("read %+v, want %+v", h, w)
		}
	}
	rows := map[string]TargetRow{}
	for _, r := range g.targets() {
		rows[r.Target] = r
	}
	if r := rows[hidingTarget("push")]; r.Status != "met" || r.Mode != "push" || r.Share != 1 || !strings.Contains(r.Measured, "time ratio 1.100") {
		t.Errorf("push at a ratio of 1.10: %+v; want met, share 1", r)
	}
	if r := rows[hidingTarget("hybrid")]; r.Status != "missed" || r.Share >= 1 {
		t.Errorf("hybrid at a ratio just over 1.10: %+v; want missed, share under 1", r)
	}
	if r, ok := rows[hidingTarget("pull")]; ok {
		t.Errorf("pull, measured without blocks and mutes only, has a row: %+v", r)
	}

	// A file with push alone says hybrid was not measured.
	var pushOnly []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "mode=hybrid") {
			pushOnly = append(pushOnly, l)
		}
	}
	os.WriteFile(path, []byte(strings.Join(pushOnly, "\n")), 0o644)
	if g, err = readGoBench(path); err != nil {
		t.Fatal(err)
	}
	rows = map[string]TargetRow{}
	for _, r := range g.targets() {
		rows[r.Target] = r
	}
	if r := rows[hidingTarget("hybrid")]; r.Status != "not measured" || r.Share != 0 {
		t.Errorf("hybrid not in the file: %+v; want not measured", r)
	}
	if r := rows[hidingTarget("push")]; r.Status != "met" {
		t.Errorf("push: %+v; want met", r)
	}
}

// TestWarmReadTargets: each target is met exactly at its bound and missed
// just under it; the memory rows say "not present" when the cache keys do
// not exist, and report them when they do.
func TestWarmReadTargets(t *testing.T) {
	page := func(conc int, rate, mean float64) Stat {
		return Stat{Label: map[int]string{8: "8", 32: "32"}[conc], Throughput: rate, Mean: mean}
	}
	result := func(scale float64, cache CacheMemory) *Result {
		// Floor 10,000 pages/s: the first page's bound is 3,000 pages/s.
		// Deep pages: mean latency 10 ms against 8 ms, 80%. Hybrid/pull 10x.
		modes := map[string]*ModeResult{
			"pull": {FirstPage: []Stat{page(32, 300, 100)}, Cache: cache},
			"push": {FirstPage: []Stat{page(8, 3000*scale, 8)}, DeepPage: Stat{Throughput: 2000, Mean: 10 / scale}, Cache: cache},
			"hybrid": {FirstPage: []Stat{page(8, 3000*scale, 8), page(32, 3000*scale, 10)},
				DeepPage: Stat{Throughput: 2000, Mean: 10 / scale}, Cache: cache},
		}
		return &Result{Modes: modes, Floors: Floors{RedisPage: Stat{Throughput: 10000}}}
	}
	status := func(rows []TargetRow) map[string]string {
		out := map[string]string{}
		for _, r := range rows {
			out[r.Target] = r.Status
		}
		return out
	}
	noCache := CacheMemory{ServerRSSKB: 40 << 10}
	at := status(result(1, noCache).warmReadTargets())
	under := status(result(0.99, noCache).warmReadTargets())
	for _, target := range []string{
		"warm first page, 8 clients, push", "warm first page, 8 clients, hybrid",
		"deep pages 2-10, 8 clients, push", "deep pages 2-10, 8 clients, hybrid",
		"hybrid vs pull, first page, 32 clients",
	} {
		if at[target] != "met" || under[target] != "missed" {
			t.Errorf("%s: %q at the bound and %q just under it; want met and missed", target, at[target], under[target])
		}
	}
	for _, target := range []string{"Redis bytes per cached post", "Redis bytes per cached user (info + counts)", "Redis bytes per reader's followee set"} {
		if at[target] != "not present" {
			t.Errorf("%s with no cache keys: %q, want not present", target, at[target])
		}
	}
	if at["server RSS after the warm reads"] != "reported" {
		t.Errorf("server RSS: %q, want reported", at["server RSS after the warm reads"])
	}
	cached := noCache
	cached.Posts = KeySample{Keys: 5000, Sampled: 1000, BytesPerKey: 300}
	cached.UserInfo = KeySample{Keys: 800, Sampled: 800, BytesPerKey: 120}
	cached.UserCounts = KeySample{Keys: 800, Sampled: 800, BytesPerKey: 60}
	rows := result(1, cached).warmReadTargets()
	for _, r := range rows {
		switch r.Target {
		case "Redis bytes per cached post":
			if r.Status != "reported" || !strings.Contains(r.Measured, "push 300 B (5,000 keys)") {
				t.Errorf("%s: %q %q", r.Target, r.Status, r.Measured)
			}
		case "Redis bytes per cached user (info + counts)":
			if r.Status != "reported" || !strings.Contains(r.Measured, "push 180 B") {
				t.Errorf("%s: %q %q", r.Target, r.Status, r.Measured)
			}
		}
	}
	// A result from before the cache step (no RSS) did not measure the keys.
	for _, r := range result(1, CacheMemory{}).warmReadTargets() {
		if strings.HasPrefix(r.Target, "Redis bytes") && r.Status != "not measured" {
			t.Errorf("%s without the cache step: %q, want not measured", r.Target, r.Status)
		}
	}
	// Hybrid against push: 90% of push's page at 8 and at 32 clients, met at
	// the bound, missed under it.
	vsPush := func(hybrid, push float64) map[string]string {
		r := result(1, noCache)
		r.Modes["hybrid"].FirstPage = []Stat{page(8, hybrid, 8), page(32, hybrid, 10)}
		r.Modes["push"].FirstPage = []Stat{page(8, push, 8), page(32, push, 10)}
		return status(r.warmReadTargets())
	}
	const push8, push32 = "hybrid vs push, warm first page, 8 clients", "hybrid vs push, warm first page, 32 clients"
	if got := vsPush(360, 400); got[push8] != "met" || got[push32] != "met" {
		t.Errorf("at the bound: %s %q, %s %q; want met", push8, got[push8], push32, got[push32])
	}
	if got := vsPush(359, 400); got[push8] != "missed" || got[push32] != "missed" {
		t.Errorf("just under the bound: %s %q, %s %q; want missed", push8, got[push8], push32, got[push32])
	}
	// A returning reader's first page: under 50 ms at p50 and 150 ms at p99.
	returning := func(p50, p99 float64) map[string]string {
		r := result(1, noCache)
		for _, m := range r.Modes {
			m.Warm = Stat{Count: 4995, Throughput: 200, P50: p50, P99: p99}
		}
		return status(r.warmReadTargets())
	}
	const ret50, ret99 = "returning reader's first page, 8 clients, hybrid, p50", "returning reader's first page, 8 clients, push, p99"
	if got := returning(49.9, 149.9); got[ret50] != "met" || got[ret99] != "met" {
		t.Errorf("under the bounds: %s %q, %s %q; want met", ret50, got[ret50], ret99, got[ret99])
	}
	if got := returning(50, 150); got[ret50] != "missed" || got[ret99] != "missed" {
		t.Errorf("at the bounds: %s %q, %s %q; want missed", ret50, got[ret50], ret99, got[ret99])
	}
	// A run with no hybrid mode cannot say anything of hybrid's targets.
	r := result(1, noCache)
	delete(r.Modes, "hybrid")
	st := status(r.warmReadTargets())
	for _, target := range []string{"hybrid vs pull, first page, 32 clients", push8, push32, ret50} {
		if st[target] != "not measured" {
			t.Errorf("%s without hybrid: %q, want not measured", target, st[target])
		}
	}
}

// TestHybridPageTargets: the full run's verdict on hybrid's warm first page
// at 8 clients against push's (90%) is met at its bound and missed just
// under it.
func TestHybridPageTargets(t *testing.T) {
	verdicts := func(hybrid float64) map[string]bool {
		r := &Result{Floors: Floors{RedisPage: Stat{Throughput: 10000}}, Modes: map[string]*ModeResult{
			"push":   {RedDots: []RedDotResult{{Sockets: 10000}}, FirstPage: []Stat{{Label: "8", Throughput: 400}}},
			"hybrid": {RedDots: []RedDotResult{{Sockets: 10000}}, FirstPage: []Stat{{Label: "8", Throughput: hybrid}}},
		}}
		out := map[string]bool{}
		for _, tg := range r.targets() {
			if tg.Met != nil {
				out[tg.Name] = *tg.Met
			}
		}
		return out
	}
	const push = "hybrid warm first page (8 clients) >= 90% of push's"
	for _, c := range []struct {
		name   string
		at     float64
		under  float64
		target string
	}{{"push", 360, 359, push}} {
		at, under := verdicts(c.at), verdicts(c.under)
		if !at[c.target] || under[c.target] {
			t.Errorf("%s: met %v at %.0f pages/s and %v at %.0f; want met, then missed", c.target, at[c.target], c.at, under[c.target], c.under)
		}
	}
}
