package main

// The warm-read targets (the cache tiers', the engine's page's, the page
// with blocks and mutes, the default mode's against its peer), evaluated
// from the figures of the same run and printed as one table: target, measured,
// bound, met or missed. `-only targets` runs just the workloads they need.
//
//   - a warm first page through GraphQL at 8 clients, push and hybrid, at
//     least 30% of the Redis page floor of the same run;
//   - deep pages (2-10, inside the inbox window, walked with `after`) at
//     least 80% of the first page's rate, push and hybrid;
//   - hybrid at least 10x pull, first pages at 32 clients;
//   - the default mode (hybrid) at least 90% of push's warm first page, at
//     8 and at 32 clients;
//   - a returning reader's first page (the first read of each active
//     reader, whose inbox is rebuilt, at 8 clients) under 50 ms at p50
//     and 150 ms at p99, in push and hybrid;
//   - the engine's own page (BenchmarkFeedPage, push, 200 followees) at
//     least 50% of the raw one-client Redis page (BenchmarkRedisPage), with
//     at most half of the allocations it made before the tiers: read from
//     a `go test -bench` output file (-gobench), as `make bench-feedpage`
//     writes it;
//   - the same page with blocks and mutes in effect (the reader
//     mutes 5% of the followees and blocks 1%; BenchmarkFeedPage's
//     hiding=mute5block1) within 10% of its time without them (hiding=none),
//     in each mode the -gobench file measured;
//   - reported, with no bound: Redis bytes per cached post, per cached user
//     (info and counts) and per reader's followee set, and the server's RSS
//     after the warm reads.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/redis/go-redis/v9"
)

// The warm-read bounds.
const (
	firstPageFloorShare = 0.30 // warm first page (8 clients) / Redis page floor
	deepPageShare       = 0.80 // deep-page rate / first-page rate (8 clients)
	hybridOverPull      = 10.0 // hybrid / pull, first pages at 32 clients
	engineOverRaw       = 0.50 // engine page rate / raw Redis page rate, one client
	// engineAllocsBefore is BenchmarkFeedPage/mode=push/followees=200's
	// allocations per page before the cache tiers (1,592 then;
	// `go test -bench` on this box counts 1,592-1,593): the target is half.
	engineAllocsBefore = 1592
	// hidingOverNone bounds the time of the warm first page with blocks and
	// mutes over the time of the same page without them.
	hidingOverNone = 1.10
	// hybridOverPush bounds the default mode's warm first page (8 and 32
	// clients) under push's: following celebrities may cost a reader little.
	hybridOverPush = 0.90
	// returningP50Ms and returningP99Ms bound a returning reader's first
	// page (its inbox rebuilt), at 8 clients, in push and hybrid.
	returningP50Ms = 50
	returningP99Ms = 150
	// listOverHome bounds the warm first page of a list holding the
	// reader's followees under their home feed's warm first page.
	listOverHome = 0.80
)

// The Go benchmarks whose figures -gobench reads: the engine's page is
// BenchmarkFeedPage's push page at 200 followees without blocks and mutes.
const (
	engineBenchName = "BenchmarkFeedPage/mode=push/followees=200/hiding=none"
	rawBenchName    = "BenchmarkRedisPage"
	// hidingVariant is BenchmarkFeedPage's sub-benchmark with blocks and
	// mutes (feed/bench_test.go: benchHide), beside hiding=none.
	hidingVariant = "mute5block1"
	// listBenchName and homeBenchName are BenchmarkWarmListPage's list page
	// and its home page beside it (api/list_bench_test.go), whose sql/page
	// counts the statements the requests ran.
	listBenchName = "BenchmarkWarmListPage/page=list"
	homeBenchName = "BenchmarkWarmListPage/page=home"
)

// hidingModes are the modes whose page with blocks and mutes -gobench may
// find, in the order of the table.
var hidingModes = []string{"pull", "push", "hybrid"}

// hidingBenchName is BenchmarkFeedPage's page of mode at 200 followees,
// with hiding "none" or hidingVariant.
func hidingBenchName(mode, hiding string) string {
	return "BenchmarkFeedPage/mode=" + mode + "/followees=200/hiding=" + hiding
}

// cacheSample is the largest number of keys of one kind whose MEMORY USAGE
// is asked: enough for a mean within a few bytes, cheap at any cache size.
const cacheSample = 1000

// TargetRow is one line of the targets table.
type TargetRow struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Bound    string `json:"bound"`
	// Status is met, missed, reported (a figure with no bound), not present
	// (the keys do not exist, as before the cache tiers) or not measured
	// (the run did not include the workload or the mode).
	Status string `json:"status"`
	// Share is the measured figure relative to its bound, 1 at the bound
	// and above 1 when met (for a "no more than" bound, bound/measured);
	// 0 for rows with no bound.
	Share float64 `json:"share,omitempty"`
	Mode  string  `json:"mode,omitempty"`
}

// KeySample is the memory of the Redis keys of one kind: how many there are
// and the mean MEMORY USAGE of a random sample of them.
type KeySample struct {
	Keys        int64   `json:"keys"`
	Sampled     int     `json:"sampled"`
	BytesPerKey float64 `json:"bytesPerKey"`
}

// CacheMemory is measured in each run right after the warm reads (first
// pages and deep pages), over the key names of the cache tiers.
type CacheMemory struct {
	Posts      KeySample `json:"posts"`      // <prefix>cache:post:<id>
	UserInfo   KeySample `json:"userInfo"`   // <prefix>cache:user:{u<id>}:info
	UserCounts KeySample `json:"userCounts"` // <prefix>cache:user:{u<id>}:counts
	Following  KeySample `json:"following"`  // <prefix>following:{u<id>}, the reader's followee set
	// ServerRSSKB is the server's VmRSS at the same moment.
	ServerRSSKB int64 `json:"serverRssKB"`
}

// bytesPerUser is a cached user's info and counts keys together.
func (c CacheMemory) bytesPerUser() float64 { return c.UserInfo.BytesPerKey + c.UserCounts.BytesPerKey }

// cacheKind names the cache key a Redis key is, or "" for any other key.
func cacheKind(prefix, key string) string {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(rest, "cache:post:"):
		return "post"
	case strings.HasPrefix(rest, "cache:user:{u") && strings.HasSuffix(rest, "}:info"):
		return "info"
	case strings.HasPrefix(rest, "cache:user:{u") && strings.HasSuffix(rest, "}:counts"):
		return "counts"
	case strings.HasPrefix(rest, "following:{u") && strings.HasSuffix(rest, "}"):
		return "following"
	}
	return ""
}

// cacheMemory measures the cache tiers' Redis keys and the server's RSS,
// after the warm reads of this run. Keys that do not exist (before the
// tiers) give zero counts, reported as "not present".
func (w *modeRun) cacheMemory(ctx context.Context) error {
	c := &w.mr.Cache
	samples := map[string]*KeySample{"post": &c.Posts, "info": &c.UserInfo, "counts": &c.UserCounts, "following": &c.Following}
	picked := map[string][]string{}
	iter := w.rdb.Scan(ctx, 0, w.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		kind := cacheKind(w.prefix, k)
		if kind == "" {
			continue
		}
		s := samples[kind]
		s.Keys++
		// Reservoir sampling: each key of the kind is kept with the same chance.
		if len(picked[kind]) < cacheSample {
			picked[kind] = append(picked[kind], k)
		} else if j := rand.Int64N(s.Keys); j < cacheSample {
			picked[kind][j] = k
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan the cache keys: %w", err)
	}
	for kind, keys := range picked {
		pipe := w.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(keys))
		for i, k := range keys {
			cmds[i] = pipe.MemoryUsage(ctx, k, 0)
		}
		pipe.Exec(ctx)
		var sum int64
		n := 0
		for _, cmd := range cmds {
			if cmd.Err() == nil { // a key may expire between the scan and here
				sum += cmd.Val()
				n++
			}
		}
		s := samples[kind]
		s.Sampled = n
		if n > 0 {
			s.BytesPerKey = float64(sum) / float64(n)
		}
	}
	c.ServerRSSKB, _ = w.s.memKB()
	logf("  cache keys: posts %s; user info %s; user counts %s; followee sets %s; server RSS %.0f MiB",
		fmtKeySample(c.Posts), fmtKeySample(c.UserInfo), fmtKeySample(c.UserCounts), fmtKeySample(c.Following), float64(c.ServerRSSKB)/1024)
	return nil
}

func fmtKeySample(s KeySample) string {
	if s.Keys == 0 {
		return "not present"
	}
	return fmt.Sprintf("%s B/key (%s keys, %d sampled)", num(s.BytesPerKey), thousands(float64(s.Keys)), s.Sampled)
}

// deepShare is the deep pages' rate relative to the first page's, both on
// 8 clients: the mean first-page latency over the mean deep-page latency.
// A closed loop of n clients serves n / mean latency pages per second, and
// this form leaves out the first page that each deep walk reads, unmeasured,
// to get its cursor (the deep workload's pages/s counts it in its time).
func deepShare(m *ModeResult) float64 {
	first := firstPageAt(m, 8).Mean
	if first <= 0 || m.DeepPage.Mean <= 0 {
		return 0
	}
	return first / m.DeepPage.Mean
}

// warmReadTargets evaluates the warm-read targets from the figures of r.
func (r *Result) warmReadTargets() []TargetRow {
	var out []TargetRow
	out = append(out, r.firstPageTargets()...)
	out = append(out, r.deepPageTargets()...)
	out = append(out, r.hybridOverPushTarget(8), r.hybridOverPushTarget(32), r.hybridOverPullTarget())
	out = append(out, r.returningTargets()...)
	out = append(out, r.listPageTargets()...)
	out = append(out, r.peerTargets()...)
	out = append(out, r.GoBench.targets()...)
	return append(out, r.memoryRows()...)
}

// targetStatus is a measured target's status.
func targetStatus(met bool) string { return map[bool]string{true: "met", false: "missed"}[met] }

// notMeasured is the row of a target the run has no figure for, and why.
func notMeasured(target, bound, why string) TargetRow {
	return TargetRow{Target: target, Measured: why, Bound: bound, Status: "not measured"}
}

// firstPageTargets: push's and hybrid's warm first page at 8 clients
// against a share of the run's Redis page floor.
func (r *Result) firstPageTargets() []TargetRow {
	var out []TargetRow
	floor := r.floor(redisFloor)
	for _, mode := range []string{"push", "hybrid"} {
		m := r.Modes[mode]
		target := fmt.Sprintf("warm first page, 8 clients, %s", mode)
		bound := fmt.Sprintf(">= %.0f%% of the Redis page floor (%s pages/s)", 100*firstPageFloorShare, thousands(firstPageFloorShare*floor))
		if m == nil || firstPageAt(m, 8).Throughput == 0 || floor == 0 {
			out = append(out, notMeasured(target, bound, "not in this run"))
			continue
		}
		v := firstPageAt(m, 8).Throughput
		out = append(out, TargetRow{Target: target, Mode: mode,
			Measured: fmt.Sprintf("%s pages/s = %s of %s", thousands(v), pct(v, floor), thousands(floor)),
			Bound:    bound, Status: targetStatus(v >= firstPageFloorShare*floor), Share: v / (firstPageFloorShare * floor)})
	}
	return out
}

// deepPageTargets: push's and hybrid's deep pages against their first
// page (see deepShare).
func (r *Result) deepPageTargets() []TargetRow {
	var out []TargetRow
	for _, mode := range []string{"push", "hybrid"} {
		m := r.Modes[mode]
		target := fmt.Sprintf("deep pages 2-10, 8 clients, %s", mode)
		bound := fmt.Sprintf(">= %.0f%% of the first page's rate", 100*deepPageShare)
		if m == nil || deepShare(m) == 0 {
			out = append(out, notMeasured(target, bound, "not in this run"))
			continue
		}
		v := deepShare(m)
		out = append(out, TargetRow{Target: target, Mode: mode,
			Measured: fmt.Sprintf("%.0f%% (mean %.1f vs %.1f ms; %s deep pages/s, %s first pages/s)", 100*v,
				m.DeepPage.Mean, firstPageAt(m, 8).Mean, thousands(m.DeepPage.Throughput), thousands(firstPageAt(m, 8).Throughput)),
			Bound: bound, Status: targetStatus(v >= deepPageShare), Share: v / deepPageShare})
	}
	return out
}

// hybridOverPushTarget: hybrid's warm first page at clients against
// push's.
func (r *Result) hybridOverPushTarget(clients int) TargetRow {
	target := fmt.Sprintf("hybrid vs push, warm first page, %d clients", clients)
	bound := fmt.Sprintf(">= %.0f%%", 100*hybridOverPush)
	h, p := r.Modes["hybrid"], r.Modes["push"]
	if h == nil || p == nil || firstPageAt(h, clients).Throughput == 0 || firstPageAt(p, clients).Throughput == 0 {
		return notMeasured(target, bound, "not in this run")
	}
	hv, pv := firstPageAt(h, clients).Throughput, firstPageAt(p, clients).Throughput
	return TargetRow{Target: target, Mode: "hybrid",
		Measured: fmt.Sprintf("%.0f%% (%s vs %s pages/s)", 100*hv/pv, thousands(hv), thousands(pv)),
		Bound:    bound, Status: targetStatus(hv/pv >= hybridOverPush), Share: hv / pv / hybridOverPush}
}

// returningTargets: a returning reader's first page (the warm-up's first
// read of each active reader, whose inbox does not exist yet) in push and
// hybrid, its p50 and its p99 against their bounds.
func (r *Result) returningTargets() []TargetRow {
	var out []TargetRow
	for _, mode := range []string{"push", "hybrid"} {
		m := r.Modes[mode]
		for _, q := range []struct {
			name  string
			bound float64
			get   func(Stat) float64
		}{{"p50", returningP50Ms, func(s Stat) float64 { return s.P50 }}, {"p99", returningP99Ms, func(s Stat) float64 { return s.P99 }}} {
			target := fmt.Sprintf("returning reader's first page, 8 clients, %s, %s", mode, q.name)
			bound := fmt.Sprintf("< %.0f ms", q.bound)
			if m == nil || m.Warm.Count == 0 {
				out = append(out, notMeasured(target, bound, "not in this run"))
				continue
			}
			v := q.get(m.Warm)
			out = append(out, TargetRow{Target: target, Mode: mode,
				Measured: fmt.Sprintf("%.1f ms (%s reads, %s reads/s)", v, thousands(float64(m.Warm.Count)), thousands(m.Warm.Throughput)),
				Bound:    bound, Status: targetStatus(v < q.bound), Share: q.bound / max(v, 1e-9)})
		}
	}
	return out
}

// listPageTargets: in each mode, the warm first page of a list holding
// the reader's followees against their home feed's, both at 8 clients in
// alternating rounds (the listPage workload).
func (r *Result) listPageTargets() []TargetRow {
	var out []TargetRow
	for _, mode := range []string{"pull", "push", "hybrid"} {
		m := r.Modes[mode]
		target := fmt.Sprintf("warm list page vs warm home page, 8 clients, %s", mode)
		bound := fmt.Sprintf(">= %.0f%% of home's rate", 100*listOverHome)
		if m == nil || m.ListPage.Home.Throughput == 0 || m.ListPage.List.Throughput == 0 {
			out = append(out, notMeasured(target, bound, "not in this run"))
			continue
		}
		lv, hv := m.ListPage.List.Throughput, m.ListPage.Home.Throughput
		out = append(out, TargetRow{Target: target, Mode: mode,
			Measured: fmt.Sprintf("%.0f%% (%s vs %s pages/s; p50 %.1f vs %.1f ms)", 100*lv/hv, thousands(lv), thousands(hv), m.ListPage.List.P50, m.ListPage.Home.P50),
			Bound:    bound, Status: targetStatus(lv/hv >= listOverHome), Share: lv / hv / listOverHome})
	}
	return out
}

// hybridOverPullTarget: hybrid's first page at 32 clients against pull's.
func (r *Result) hybridOverPullTarget() TargetRow {
	const target = "hybrid vs pull, first page, 32 clients"
	bound := fmt.Sprintf(">= %.0fx", hybridOverPull)
	h, p := r.Modes["hybrid"], r.Modes["pull"]
	if h == nil || p == nil || firstPageAt(h, 32).Throughput == 0 || firstPageAt(p, 32).Throughput == 0 {
		return notMeasured(target, bound, "not in this run")
	}
	hv, pv := firstPageAt(h, 32).Throughput, firstPageAt(p, 32).Throughput
	return TargetRow{Target: target, Mode: "hybrid",
		Measured: fmt.Sprintf("%.2fx (%s vs %s pages/s)", hv/pv, thousands(hv), thousands(pv)),
		Bound:    bound, Status: targetStatus(hv/pv >= hybridOverPull), Share: hv / pv / hybridOverPull}
}

// memoryRows reports the cache tiers' memory and the server's RSS after
// the warm reads, each mode's figure in one row: these have no bound.
func (r *Result) memoryRows() []TargetRow {
	sample := func(s KeySample) (string, bool) {
		if s.Keys == 0 {
			return "not present", false
		}
		return fmt.Sprintf("%s B (%s keys)", num(s.BytesPerKey), thousands(float64(s.Keys))), true
	}
	return []TargetRow{
		r.memoryRow("Redis bytes per cached post", func(m *ModeResult) (string, bool) { return sample(m.Cache.Posts) }),
		r.memoryRow("Redis bytes per cached user (info + counts)", func(m *ModeResult) (string, bool) {
			c := m.Cache
			if c.UserInfo.Keys == 0 && c.UserCounts.Keys == 0 {
				return "not present", false
			}
			return fmt.Sprintf("%s B (%s + %s; %s and %s keys)", num(c.bytesPerUser()), num(c.UserInfo.BytesPerKey), num(c.UserCounts.BytesPerKey),
				thousands(float64(c.UserInfo.Keys)), thousands(float64(c.UserCounts.Keys))), true
		}),
		r.memoryRow("Redis bytes per reader's followee set", func(m *ModeResult) (string, bool) { return sample(m.Cache.Following) }),
		r.memoryRow("server RSS after the warm reads", func(m *ModeResult) (string, bool) {
			return fmt.Sprintf("%.0f MiB", float64(m.Cache.ServerRSSKB)/1024), true
		}),
	}
}

// memoryRow is one row of memoryRows: get says a mode's figure and whether
// there is one (the keys may not be present).
func (r *Result) memoryRow(target string, get func(m *ModeResult) (string, bool)) TargetRow {
	var parts []string
	present, measured := false, false
	for _, mode := range r.modesPresent() {
		m := r.Modes[mode]
		if m.Cache.ServerRSSKB == 0 { // the cache step did not run (a result file from before it)
			parts = append(parts, mode+" not measured")
			continue
		}
		s, ok := get(m)
		present, measured = present || ok, true
		parts = append(parts, mode+" "+s)
	}
	st := "not present"
	switch {
	case !measured:
		st = "not measured"
	case present:
		st = "reported"
	}
	return TargetRow{Target: target, Measured: strings.Join(parts, "; "), Bound: "reported", Status: st}
}

// printTargetTable writes rows as the table "target | measured | bound |
// met/missed".
func printTargetTable(w io.Writer, rows []TargetRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmeasured\tbound\tmet/missed")
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Target, t.Measured, t.Bound, t.Status)
	}
	tw.Flush()
}

// GoBench is the engine's page against the raw Redis page, from the output
// of `go test -bench` (medians over -count).
type GoBench struct {
	File         string  `json:"file"`
	Samples      int     `json:"samples"` // lines of the engine benchmark
	EngineNsOp   float64 `json:"engineNsPerPage"`
	EngineAllocs float64 `json:"engineAllocsPerPage"`
	EngineBytes  float64 `json:"engineBytesPerPage"`
	RawNsOp      float64 `json:"rawNsPerPage"`
	RawAllocs    float64 `json:"rawAllocsPerPage"`
	RawBytes     float64 `json:"rawBytesPerPage"`
	// Hiding is the page with blocks and mutes against the page without
	// them, in each mode the file has both of.
	Hiding []HidingBench `json:"hiding,omitempty"`
	// List is BenchmarkWarmListPage's list page beside its home page, when
	// the file has them.
	List *ListBench `json:"list,omitempty"`
}

// ListBench is BenchmarkWarmListPage's figures: medians over the file's
// lines of each page.
type ListBench struct {
	Samples        int     `json:"samples"`
	ListPagesPerS  float64 `json:"listPagesPerSecond"`
	HomePagesPerS  float64 `json:"homePagesPerSecond"`
	ListSQLPerPage float64 `json:"listSqlPerPage"`
	HomeSQLPerPage float64 `json:"homeSqlPerPage"`
}

// HidingBench is one mode's warm first page with blocks and mutes
// (BenchmarkFeedPage's hiding=mute5block1) against the same page without
// them (hiding=none): medians over the file's lines of each.
type HidingBench struct {
	Mode       string  `json:"mode"`
	Samples    int     `json:"samples"` // the fewer lines of the two
	NoneNsOp   float64 `json:"noneNsPerPage"`
	HidingNsOp float64 `json:"hidingNsPerPage"`
	// Ratio is HidingNsOp / NoneNsOp; the target is at most hidingOverNone.
	Ratio float64 `json:"ratio"`
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// readGoBench reads the engine's and the raw page's figures, and each
// mode's page with and without blocks and mutes, from a `go test -bench`
// output file: the median of each figure over the file's lines of each
// benchmark.
func readGoBench(path string) (*GoBench, error) {
	wanted := map[string]bool{engineBenchName: true, rawBenchName: true, listBenchName: true, homeBenchName: true}
	for _, mode := range hidingModes {
		wanted[hidingBenchName(mode, "none")] = true
		wanted[hidingBenchName(mode, hidingVariant)] = true
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vals := map[string]map[string][]float64{} // benchmark -> unit -> values
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil || !wanted[m[1]] {
			continue
		}
		if vals[m[1]] == nil {
			vals[m[1]] = map[string][]float64{}
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				vals[m[1]][f[i+1]] = append(vals[m[1]][f[i+1]], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, name := range []string{engineBenchName, rawBenchName} {
		if len(vals[name]["ns/op"]) == 0 {
			return nil, fmt.Errorf("%s: no result of %s (run make bench-feedpage)", path, name)
		}
	}
	e, r := vals[engineBenchName], vals[rawBenchName]
	g := &GoBench{File: path, Samples: len(e["ns/op"]),
		EngineNsOp: median(e["ns/op"]), EngineAllocs: median(e["allocs/op"]), EngineBytes: median(e["B/op"]),
		RawNsOp: median(r["ns/op"]), RawAllocs: median(r["allocs/op"]), RawBytes: median(r["B/op"])}
	for _, mode := range hidingModes {
		none, hiding := vals[hidingBenchName(mode, "none")]["ns/op"], vals[hidingBenchName(mode, hidingVariant)]["ns/op"]
		if len(none) == 0 || len(hiding) == 0 {
			continue
		}
		h := HidingBench{Mode: mode, Samples: min(len(none), len(hiding)), NoneNsOp: median(none), HidingNsOp: median(hiding)}
		h.Ratio = h.HidingNsOp / h.NoneNsOp
		g.Hiding = append(g.Hiding, h)
	}
	if l, h := vals[listBenchName], vals[homeBenchName]; len(l["sql/page"]) > 0 && len(h["pages/s"]) > 0 {
		g.List = &ListBench{Samples: min(len(l["sql/page"]), len(h["pages/s"])),
			ListPagesPerS: median(l["pages/s"]), HomePagesPerS: median(h["pages/s"]),
			ListSQLPerPage: median(l["sql/page"]), HomeSQLPerPage: median(h["sql/page"])}
	}
	return g, nil
}

// targets are the engine-page rows of the targets table; none without a file.
func (g *GoBench) targets() []TargetRow {
	if g == nil {
		return nil
	}
	status := func(met bool) string { return map[bool]string{true: "met", false: "missed"}[met] }
	eng, raw := 1e9/g.EngineNsOp, 1e9/g.RawNsOp
	rows := []TargetRow{{
		Target: "engine page (BenchmarkFeedPage push, 200 followees) vs raw Redis page, one client", Mode: "push",
		Measured: fmt.Sprintf("%s of raw (%s vs %s pages/s; %.0f vs %.0f µs)", pct(eng, raw), thousands(eng), thousands(raw), g.EngineNsOp/1e3, g.RawNsOp/1e3),
		Bound:    fmt.Sprintf(">= %.0f%% of raw", 100*engineOverRaw), Status: status(eng >= engineOverRaw*raw), Share: eng / raw / engineOverRaw,
	}}
	if g.EngineAllocs > 0 {
		bound := float64(engineAllocsBefore) / 2
		rows = append(rows, TargetRow{
			Target: "engine page allocations", Mode: "push",
			Measured: fmt.Sprintf("%s allocs/page, %s B/page (raw page: %s allocs, %s B)", thousands(g.EngineAllocs), thousands(g.EngineBytes),
				thousands(g.RawAllocs), thousands(g.RawBytes)),
			Bound:  fmt.Sprintf("<= %s (half of %s before the tiers)", thousands(bound), thousands(engineAllocsBefore)),
			Status: status(g.EngineAllocs <= bound), Share: bound / g.EngineAllocs,
		})
	}
	rows = append(rows, g.hidingTargets()...)
	return append(rows, g.listTarget())
}

// listTarget is the row of the warm list page's SQL statements
// (BenchmarkWarmListPage); "not measured" when the file lacks it.
func (g *GoBench) listTarget() TargetRow {
	const target = "warm list page's SQL statements (BenchmarkWarmListPage, through the handler)"
	const bound = "0 per page"
	l := g.List
	if l == nil {
		return TargetRow{Target: target, Measured: "not in -gobench's file", Bound: bound, Status: "not measured"}
	}
	return TargetRow{Target: target, Mode: "hybrid",
		Measured: fmt.Sprintf("%.2f per page (home %.2f); %s vs %s pages/s, one client (medians of %d)", l.ListSQLPerPage, l.HomeSQLPerPage,
			thousands(l.ListPagesPerS), thousands(l.HomePagesPerS), l.Samples),
		Bound: bound, Status: targetStatus(l.ListSQLPerPage == 0)}
}

// hidingTarget names the row of mode's page with blocks and mutes.
func hidingTarget(mode string) string {
	return "warm first page with blocks and mutes (5% muted, 1% blocked) vs without them, BenchmarkFeedPage 200 followees, " + mode
}

// hidingTargets are the rows of blocks and mutes: each mode's page with blocks and
// mutes against the page without them. Push and hybrid, which `make
// bench-feedpage` measures, are "not measured" when the file lacks them;
// pull has a row only when it has it.
func (g *GoBench) hidingTargets() []TargetRow {
	bound := fmt.Sprintf("<= %.0f%% of the time without them", 100*hidingOverNone)
	var rows []TargetRow
	for _, mode := range hidingModes {
		i := slices.IndexFunc(g.Hiding, func(h HidingBench) bool { return h.Mode == mode })
		if i < 0 {
			if mode != "pull" {
				rows = append(rows, TargetRow{Target: hidingTarget(mode), Measured: "not in -gobench's file", Bound: bound, Status: "not measured"})
			}
			continue
		}
		h := g.Hiding[i]
		st := "missed"
		if h.Ratio <= hidingOverNone {
			st = "met"
		}
		rows = append(rows, TargetRow{Target: hidingTarget(mode), Mode: mode,
			Measured: fmt.Sprintf("time ratio %.3f (%.0f vs %.0f µs; %s vs %s pages/s; medians of %d)", h.Ratio,
				h.HidingNsOp/1e3, h.NoneNsOp/1e3, thousands(1e9/h.HidingNsOp), thousands(1e9/h.NoneNsOp), h.Samples),
			Bound: bound, Status: st, Share: hidingOverNone / h.Ratio})
	}
	return rows
}

// printGoBench prints the engine page against the raw page (-only gobench).
func printGoBench(path string) error {
	g, err := readGoBench(path)
	if err != nil {
		return err
	}
	fmt.Printf("\n%s vs %s (medians of %d runs, %s), and the page with blocks and mutes against it:\n", engineBenchName, rawBenchName, g.Samples, path)
	printTargetTable(os.Stdout, g.targets())
	return nil
}

// shareLabel formats a Share for the plot.
func shareLabel(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
