package main

// Results: the table on stdout, bench/results/latest.json, and -compare.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
)

// Result is everything one run measured (written as latest.json).
type Result struct {
	StartedAt   time.Time              `json:"startedAt"`
	Commit      string                 `json:"commit,omitempty"` // the code measured (sourceCommit)
	Error       string                 `json:"error,omitempty"`  // why the run stopped early; "" for a complete run
	Seconds     float64                `json:"seconds"`
	Quick       bool                   `json:"quick"`
	Only        string                 `json:"only,omitempty"` // "targets": only the warm-read workloads ran
	Runs        int                    `json:"runs"`           // each figure is the median of this many runs
	Sockets     []int                  `json:"sockets"`        // the red-dot workload's socket counts
	Machine     Machine                `json:"machine"`
	Graph       graphParams            `json:"graph"`
	GraphStats  map[string]any         `json:"graphStats"`
	LoadSeconds float64                `json:"loadSeconds"`
	Floors      Floors                 `json:"floors"`    // measured before the modes
	FloorsEnd   *Floors                `json:"floorsEnd"` // and after them
	Modes       map[string]*ModeResult `json:"modes"`
	Targets     []Target               `json:"targets"`
	// WarmReadTargets are the warm-read targets (targets.go), with the
	// engine-page rows when GoBench is set.
	WarmReadTargets []TargetRow `json:"warmReadTargets"`
	GoBench         *GoBench    `json:"goBench,omitempty"`
	// Peer is the peer-shaped workload (peer.go), after the modes.
	Peer   *PeerResult `json:"peer,omitempty"`
	Checks []Check     `json:"checks"`
}

type Machine struct {
	NProc               int     `json:"nproc"`
	CPU                 string  `json:"cpu"`
	MemGiB              float64 `json:"memGiB"`
	Kernel              string  `json:"kernel"`
	Go                  string  `json:"go"`
	MariaDB             string  `json:"mariadb"`
	Redis               string  `json:"redis"`
	InnoDBBufferPoolMiB int64   `json:"innodbBufferPoolMiB"`
	ZsetListpackEntries string  `json:"zsetMaxListpackEntries"`
	LoadAvgAtStart      string  `json:"loadAvgAtStart"`
	LoadAvgAtEnd        string  `json:"loadAvgAtEnd"`
}

type Floors struct {
	RedisPage   Stat     `json:"redisPage"`
	ZaddPerSec  float64  `json:"zaddPerSec"`
	ZaddCommand string   `json:"zaddCommand"`
	SQLPull     Stat     `json:"sqlPull"`
	SQLQuery    string   `json:"sqlQuery"`
	Notes       []string `json:"notes,omitempty"`
}

type ModeResult struct {
	Mode              string          `json:"mode"`
	Seconds           float64         `json:"seconds"`
	ServerCPUSeconds  float64         `json:"serverCpuSeconds"`
	Warm              Stat            `json:"warm"`
	WarmInboxes       float64         `json:"warmInboxesSeconds,omitempty"` // seconds from the warm reads until every inbox is whole (rebuilt in the background)
	WarmDeep          Stat            `json:"warmDeep"`
	FirstPage         []Stat          `json:"firstPage"`
	DeepPage          Stat            `json:"deepPage"`
	Followees         []FolloweePoint `json:"followees"`
	Fanout            FanoutResult    `json:"fanout"`
	Celebrity         CelebResult     `json:"celebrity"`
	Mixed             MixedResult     `json:"mixed"`
	RedDots           []RedDotResult  `json:"redDots"` // one per socket count (-sockets)
	Memory            MemoryResult    `json:"memory"`
	Cache             CacheMemory     `json:"cache"` // the cache tiers' Redis keys and the server's RSS after the warm reads
	ListPage          ListPageResult  `json:"listPage"`
	ServerLogProblems map[string]int  `json:"serverLogProblems,omitempty"`
	// Runs are the repeated runs' own figures (-runs); the fields above are
	// their medians. Warm-up and memory are measured once, before the runs.
	Runs []*ModeResult `json:"runs,omitempty"`
}

// ListPageResult is the warm first page of a list holding the reader's
// followees beside the warm first page of their home feed, at 8 clients,
// measured in alternating rounds.
type ListPageResult struct {
	Home Stat `json:"home"`
	List Stat `json:"list"`
}

// redDotAt is the red-dot workload's result with n sockets asked for.
func (m *ModeResult) redDotAt(n int) RedDotResult {
	for _, r := range m.RedDots {
		if r.Asked == n {
			return r
		}
	}
	return RedDotResult{}
}

// redDotLargest is the red-dot result with the most sockets.
func (m *ModeResult) redDotLargest() RedDotResult {
	var out RedDotResult
	for _, r := range m.RedDots {
		if r.Asked >= out.Asked {
			out = r
		}
	}
	return out
}

type FolloweePoint struct {
	Label     string `json:"label"`
	Followees int    `json:"followees"`
	Cold      Stat   `json:"cold"`
	Warm      Stat   `json:"warm"`
}

type FanoutResult struct {
	Skipped               string  `json:"skipped,omitempty"`
	Followers             int     `json:"followers"`
	ActiveFollowers       int     `json:"activeFollowers"`
	Posts                 int     `json:"posts"`
	Mutation              Stat    `json:"mutation"`
	LastInbox             Stat    `json:"lastInbox"`
	Arrival               Stat    `json:"arrival"`
	EntriesPerSec         float64 `json:"entriesPerSec"`         // from the first inbox to the last
	EndToEndEntriesPerSec float64 `json:"endToEndEntriesPerSec"` // from the mutation's response to the last inbox
	Missing               int     `json:"missing"`
}

type CelebPost struct {
	Followers  int     `json:"followers"`
	MutationMs float64 `json:"mutationMs"`
}

type CelebResult struct {
	Mutation     Stat        `json:"mutation"`
	Visible      Stat        `json:"visible"`
	Missing      int         `json:"missing"`
	PerCelebrity []CelebPost `json:"perPost"`
}

type MixedResult struct {
	Workers       int     `json:"workers"`
	All           Stat    `json:"all"`
	Reads         Stat    `json:"reads"`
	Posts         Stat    `json:"posts"`
	Follows       Stat    `json:"follows"`
	SettleSeconds float64 `json:"settleSeconds"`
}

type RedDotResult struct {
	Asked             int     `json:"asked"` // sockets asked for (-sockets)
	Sockets           int     `json:"sockets"`
	Poster            string  `json:"poster"`
	PosterFollowers   int     `json:"posterFollowers"`
	Posts             int     `json:"posts"`
	OpenSeconds       float64 `json:"openSeconds"`
	Delivery          Stat    `json:"delivery"`
	Missing           int     `json:"missing"`
	CelebritySockets  int     `json:"celebritySockets"`
	CelebrityDelivery Stat    `json:"celebrityDelivery"`
	CelebrityMissing  int     `json:"celebrityMissing"`
	// Floor is the bare broadcaster's delivery to as many sockets, in the
	// same run (broadcaster.go).
	Floor Stat `json:"floor"`
	// ServerRSSBeforeKB and ServerRSSOpenKB are the server's RSS before the
	// sockets opened and once each had its first count; KBPerSocket is the
	// difference over the sockets: what an open subscription costs the
	// server in memory.
	ServerRSSBeforeKB int64   `json:"serverRssBeforeKB"`
	ServerRSSOpenKB   int64   `json:"serverRssOpenKB"`
	KBPerSocket       float64 `json:"kbPerSocket"`
}

type MemoryResult struct {
	UsedBefore         int64   `json:"usedMemoryBefore"`
	UsedAfter          int64   `json:"usedMemoryAfter"`
	Inboxes            int     `json:"inboxes"`
	Entries            int64   `json:"entries"`
	InboxBytes         int64   `json:"inboxBytes"`
	SourcesBytes       int64   `json:"sourcesBytes"`
	SourceFields       int64   `json:"sourcesHashFields"`
	BytesPerEntry      float64 `json:"bytesPerEntry"`
	BytesPerEntryInfo  float64 `json:"bytesPerEntryUsedMemoryDelta"`
	SampleEncoding     string  `json:"sampleEncoding"`
	ListpackMaxEntries int     `json:"zsetMaxListpackEntries"`
	RefListpack100     float64 `json:"refBytesPerMemberListpack100"`
	RefSorted800       float64 `json:"refBytesPerMember800"`
	ServerRSSWarmKB    int64   `json:"serverRssAfterWarmKB"`
	ServerRSSEndKB     int64   `json:"serverRssEndKB"`
	ServerHWMKB        int64   `json:"serverRssPeakKB"`
}

type Check struct {
	Mode   string `json:"mode"`
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

type Target struct {
	Name   string  `json:"name"`
	Figure string  `json:"figure"`
	Met    *bool   `json:"met"`
	Value  float64 `json:"value"`
}

func (r *Result) failedChecks() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

func describeMachine(o *options) Machine {
	m := Machine{NProc: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
				m.MemGiB = math.Round(kb/1024/1024*10) / 10
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvgAtStart = loadAvg()
	if db, err := sql.Open("mysql", o.dsn); err == nil {
		db.QueryRow("SELECT VERSION(), @@innodb_buffer_pool_size").Scan(&m.MariaDB, &m.InnoDBBufferPoolMiB)
		m.InnoDBBufferPoolMiB >>= 20
		db.Close()
	}
	rdb := redis.NewClient(&redis.Options{Addr: o.redis})
	info, _ := rdb.Info(context.Background(), "server").Result()
	m.Redis = infoStr(info, "redis_version")
	cfg, _ := rdb.ConfigGet(context.Background(), "zset-max-listpack-entries").Result()
	m.ZsetListpackEntries = cfg["zset-max-listpack-entries"]
	rdb.Close()
	return m
}

// ---- the table ----

func (r *Result) mode(name string) *ModeResult { return r.Modes[name] }

var modeOrder = []string{"pull", "push", "hybrid"}

type row struct {
	name  string
	unit  string
	get   func(m *ModeResult) float64
	floor func(r *Result) []floorRef // optional: the floors it is compared with
	lower bool                       // lower is better (for the hybrid/pull ratio's reading)
}

func firstPageAt(m *ModeResult, conc int) Stat {
	for _, s := range m.FirstPage {
		if s.Label == strconv.Itoa(conc) {
			return s
		}
	}
	return Stat{}
}

func followeeAt(m *ModeResult, i int) FolloweePoint {
	if i < len(m.Followees) {
		return m.Followees[i]
	}
	return FolloweePoint{}
}

func (r *Result) rows() []row {
	readFloor := func(r *Result) []floorRef {
		return []floorRef{{r.floor(redisFloor), "Redis page floor"}, {r.floor(sqlFloor), "SQL pull floor"}}
	}
	sqlFloorRef := func(r *Result) []floorRef { return []floorRef{{r.floor(sqlFloor), "SQL pull floor"}} }
	zaddFloorRef := func(r *Result) []floorRef { return []floorRef{{r.floor(zaddFloor), "pipelined ZADD floor"}} }
	var rows []row
	for _, c := range []int{1, 8, 32} {
		c := c
		var fl func(r *Result) []floorRef
		if c == 8 {
			fl = readFloor
		}
		rows = append(rows,
			row{name: fmt.Sprintf("1 first page, %d clients", c), unit: "pages/s", get: func(m *ModeResult) float64 { return firstPageAt(m, c).Throughput }, floor: fl},
			row{name: fmt.Sprintf("1 first page, %d clients p50", c), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return firstPageAt(m, c).P50 }},
			row{name: fmt.Sprintf("1 first page, %d clients p99", c), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return firstPageAt(m, c).P99 }},
		)
	}
	rows = append(rows,
		row{name: "2 deep pages 2-10, 8 clients", unit: "pages/s", get: func(m *ModeResult) float64 { return m.DeepPage.Throughput }, floor: sqlFloorRef},
		row{name: "2 deep pages p50", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.DeepPage.P50 }},
		row{name: "2 deep pages p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.DeepPage.P99 }},
	)
	for i, b := range r.Graph.ProbeBuckets {
		i := i
		rows = append(rows,
			row{name: fmt.Sprintf("3 %d followees: warm p50", b), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return followeeAt(m, i).Warm.P50 }},
			row{name: fmt.Sprintf("3 %d followees: warm p99", b), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return followeeAt(m, i).Warm.P99 }},
			row{name: fmt.Sprintf("3 %d followees: cold first read p50", b), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return followeeAt(m, i).Cold.P50 }},
		)
	}
	rows = append(rows,
		row{name: "  warm-up: first read of each active reader", unit: "reads/s", get: func(m *ModeResult) float64 { return m.Warm.Throughput }},
		row{name: "  warm-up first read p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Warm.P99 }},
		row{name: "4 ordinary post: mutation p50", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Fanout.Mutation.P50 }},
		row{name: "4 ordinary post: last active inbox p50", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Fanout.LastInbox.P50 }},
		row{name: "4 ordinary post: last active inbox max", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Fanout.LastInbox.Max }},
		row{name: "4 fan-out entries/s from response", unit: "entries/s", get: func(m *ModeResult) float64 { return m.Fanout.EndToEndEntriesPerSec }},
		row{name: "4 fan-out entries/s during fan-out", unit: "entries/s", get: func(m *ModeResult) float64 { return m.Fanout.EntriesPerSec }, floor: zaddFloorRef},
		row{name: "5 celebrity post: mutation p50", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Celebrity.Mutation.P50 }},
		row{name: "5 celebrity post: mutation p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Celebrity.Mutation.P99 }},
		row{name: "5 celebrity post: visible to follower p50", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Celebrity.Visible.P50 }},
		row{name: "5 celebrity post: visible max", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Celebrity.Visible.Max }},
		row{name: "6 mixed 90/8/2: ops/s", unit: "ops/s", get: func(m *ModeResult) float64 { return m.Mixed.All.Throughput }},
		row{name: "6 mixed: read p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Mixed.Reads.P99 }},
		row{name: "6 mixed: post p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Mixed.Posts.P99 }},
		row{name: "6 mixed: follow/unfollow p99", unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.Mixed.Follows.P99 }},
		row{name: "6 mixed: fan-out drained after", unit: "s", lower: true, get: func(m *ModeResult) float64 { return m.Mixed.SettleSeconds }},
	)
	for _, n := range r.Sockets {
		n := n
		rows = append(rows,
			row{name: fmt.Sprintf("7 red dot, %d sockets: delivery p50", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).Delivery.P50 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: delivery p99", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).Delivery.P99 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: celebrity's post p50", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).CelebrityDelivery.P50 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: celebrity's post p99", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).CelebrityDelivery.P99 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: bare broadcaster p50", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).Floor.P50 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: bare broadcaster p99", n), unit: "ms", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).Floor.P99 }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: delivery p99 / broadcaster's", n), unit: "x", lower: true, get: func(m *ModeResult) float64 { return over(m.redDotAt(n).Delivery.P99, m.redDotAt(n).Floor.P99) }},
			row{name: fmt.Sprintf("7 red dot, %d sockets: server memory per open subscription", n), unit: "KiB", lower: true, get: func(m *ModeResult) float64 { return m.redDotAt(n).KBPerSocket }},
		)
	}
	rows = append(rows,
		row{name: "8 Redis bytes per inbox entry", unit: "B", lower: true, get: func(m *ModeResult) float64 { return m.Memory.BytesPerEntry }},
		row{name: "8 inbox entries after warm-up", unit: "entries", get: func(m *ModeResult) float64 { return float64(m.Memory.Entries) }},
		row{name: "8 server RSS after warm-up", unit: "MiB", lower: true, get: func(m *ModeResult) float64 { return float64(m.Memory.ServerRSSWarmKB) / 1024 }},
		row{name: "8 server RSS peak", unit: "MiB", lower: true, get: func(m *ModeResult) float64 { return float64(m.Memory.ServerHWMKB) / 1024 }},
		row{name: "  server CPU seconds for the mode", unit: "s", lower: true, get: func(m *ModeResult) float64 { return m.ServerCPUSeconds }},
	)
	return rows
}

func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

const (
	redisFloor = iota
	sqlFloor
	zaddFloor
)

// floor is a floor's throughput: the mean of its measures before and after
// the modes.
func (r *Result) floor(kind int) float64 {
	get := func(f *Floors) float64 {
		switch kind {
		case redisFloor:
			return f.RedisPage.Throughput
		case sqlFloor:
			return f.SQLPull.Throughput
		}
		return f.ZaddPerSec
	}
	v, n := get(&r.Floors), 1.0
	if r.FloorsEnd != nil && get(r.FloorsEnd) > 0 {
		v, n = v+get(r.FloorsEnd), 2
	}
	return v / n
}

type floorRef struct {
	value float64
	name  string
}

func pct(v, of float64) string {
	switch {
	case v <= 0 || of <= 0:
		return "-"
	case 100*v/of < 10:
		return fmt.Sprintf("%.1f%%", 100*v/of)
	}
	return fmt.Sprintf("%.0f%%", 100*v/of)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
}

func (r *Result) table(w *os.File) {
	var modes []string
	for _, m := range modeOrder {
		if r.Modes[m] != nil {
			modes = append(modes, m)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\tunit\t")
	for _, m := range modes {
		fmt.Fprintf(tw, "%s\t", m)
	}
	fmt.Fprint(tw, "hybrid/pull\tvs floor (")
	fmt.Fprint(tw, strings.Join(modes, "/"))
	fmt.Fprintln(tw, ")\t")
	for _, rw := range r.rows() {
		if !slices.ContainsFunc(modes, func(m string) bool { return rw.get(r.Modes[m]) != 0 }) {
			continue // a workload this run left out (-only)
		}
		fmt.Fprintf(tw, "%s\t%s\t", rw.name, rw.unit)
		vals := map[string]float64{}
		for _, m := range modes {
			vals[m] = rw.get(r.Modes[m])
			fmt.Fprintf(tw, "%s\t", withSpread(r.Modes[m], rw.get))
		}
		fmt.Fprintf(tw, "%s\t", ratio(vals["hybrid"], vals["pull"]))
		if rw.floor != nil {
			var refs []string
			for _, fr := range rw.floor(r) {
				if fr.value == 0 {
					continue // not measured in this run (-only)
				}
				var parts []string
				for _, m := range modes {
					parts = append(parts, pct(vals[m], fr.value))
				}
				refs = append(refs, strings.Join(parts, "/")+" of "+fr.name)
			}
			fmt.Fprintf(tw, "%s\t", strings.Join(refs, "; "))
		} else {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for k, f := range []*Floors{&r.Floors, r.FloorsEnd} {
		if f == nil {
			continue
		}
		when := []string{"before the modes", "after the modes"}[k]
		fmt.Fprintf(w, "\nfloors %s: Redis page (ZREVRANGE 0 19 + MGET 20, 8 workers) %s\n", when, fmtStat(f.RedisPage))
		if f.ZaddCommand != "" {
			fmt.Fprintf(w, "    pipelined ZADD (%s) %.0f/s\n", f.ZaddCommand, f.ZaddPerSec)
		}
		if f.SQLQuery != "" {
			fmt.Fprintf(w, "    SQL pull query (deferred join, 8 workers) %s\n", fmtStat(f.SQLPull))
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
	if r.Only != "" {
		fmt.Fprintf(w, "ratios to the floor use the mean of both: Redis page %.0f/s\n", r.floor(redisFloor))
	} else {
		fmt.Fprintf(w, "ratios to floors use the mean of both: Redis page %.0f/s, ZADD %.0f/s, SQL pull %.0f/s\n", r.floor(redisFloor), r.floor(zaddFloor), r.floor(sqlFloor))
	}
}

// targets evaluates the targets and DESIGN.md's bar from the figures.
func (r *Result) targets() []Target {
	var out []Target
	add := func(name string, value float64, met bool, figure string, args ...any) {
		t := Target{Name: name, Value: value, Figure: fmt.Sprintf(figure, args...)}
		if value != 0 && !math.IsNaN(value) && !math.IsInf(value, 0) {
			t.Met = &met
		}
		out = append(out, t)
	}
	h, p := r.Modes["hybrid"], r.Modes["pull"]
	if h == nil {
		return out
	}
	if p != nil {
		v := firstPageAt(h, 32).Throughput / firstPageAt(p, 32).Throughput
		add("hybrid first-page throughput at 32 clients >= 10x pull", v, v >= 10, "%.1fx (%.0f vs %.0f pages/s)", v, firstPageAt(h, 32).Throughput, firstPageAt(p, 32).Throughput)
	}
	if n := len(h.Followees); n >= 2 {
		lo, hi := h.Followees[0], h.Followees[n-1]
		v := hi.Warm.P99 / lo.Warm.P99
		add(fmt.Sprintf("hybrid p99 at %d followees <= 2x p99 at %d", hi.Followees, lo.Followees), v, v <= 2, "%.2fx (%.1f vs %.1f ms)", v, hi.Warm.P99, lo.Warm.P99)
	}
	if f := r.floor(redisFloor); f > 0 {
		v := firstPageAt(h, 8).Throughput / f
		add("hybrid feed read (8 clients) >= 30% of the Redis page floor", v, v >= 0.3, "%.0f%% (%.0f vs %.0f pages/s)", 100*v, firstPageAt(h, 8).Throughput, f)
	}
	if f := r.floor(zaddFloor); f > 0 {
		v := h.Fanout.EntriesPerSec / f
		add("hybrid fan-out >= 15% of the pipelined ZADD floor", v, v >= 0.15, "%.1f%% (%.0f vs %.0f entries/s)", 100*v, h.Fanout.EntriesPerSec, f)
	}
	if push := r.Modes["push"]; push != nil && firstPageAt(push, 8).Throughput > 0 {
		v := firstPageAt(h, 8).Throughput / firstPageAt(push, 8).Throughput
		add("hybrid warm first page (8 clients) >= 90% of push's", v, v >= hybridOverPush, "%.0f%% (%.0f vs %.0f pages/s)", 100*v, firstPageAt(h, 8).Throughput, firstPageAt(push, 8).Throughput)
	}
	if h.Fanout.Mutation.P99 > 0 {
		v := h.Celebrity.Mutation.P99 / h.Fanout.Mutation.P99
		add("celebrity post mutation p99 independent of follower count (vs the ordinary author's, <= 1.5x)", v, v <= 1.5,
			"%.2fx (%.1f ms with %v followers vs %.1f ms with %d)", v, h.Celebrity.Mutation.P99, r.GraphStats["celebrityFollowers"], h.Fanout.Mutation.P99, h.Fanout.Followers)
	}
	for _, mode := range r.modesPresent() {
		rd := r.Modes[mode].redDotLargest()
		v := max(rd.Delivery.P99, rd.CelebrityDelivery.P99)
		add(fmt.Sprintf("%s red dot p99 < 250 ms with 10,000 open websockets (measured with %d)", mode, rd.Sockets), v, v < 250,
			"%.1f ms (%s's posts %.1f ms, celebrity's %.1f ms)", v, rd.Poster, rd.Delivery.P99, rd.CelebrityDelivery.P99)
	}
	for _, mode := range r.modesPresent() {
		for _, rd := range r.Modes[mode].RedDots {
			if rd.Floor.P99 <= 0 {
				continue
			}
			v := max(rd.Delivery.P99, rd.CelebrityDelivery.P99) / rd.Floor.P99
			add(fmt.Sprintf("%s red dot p99 <= 2x the bare broadcaster's, %d sockets", mode, rd.Sockets), v, v <= 2,
				"%.2fx (%.1f ms: %s's posts %.1f ms, celebrity's %.1f ms; broadcaster p50 %.1f ms, p99 %.1f ms)",
				v, max(rd.Delivery.P99, rd.CelebrityDelivery.P99), rd.Poster, rd.Delivery.P99, rd.CelebrityDelivery.P99, rd.Floor.P50, rd.Floor.P99)
		}
	}
	if h.Memory.RefListpack100 > 0 && h.Memory.BytesPerEntry > 0 {
		v := h.Memory.BytesPerEntry / h.Memory.RefListpack100
		add("Redis bytes per inbox entry <= 1.3x a bare listpack member", v, v <= 1.3, "%.2fx (%.1f vs %.1f B; encoding %s, zset-max-listpack-entries %d)",
			v, h.Memory.BytesPerEntry, h.Memory.RefListpack100, h.Memory.SampleEncoding, h.Memory.ListpackMaxEntries)
	}
	var cold float64
	for _, f := range h.Followees {
		cold = max(cold, f.Cold.P50)
	}
	add("DESIGN bar: cold first read < 50 ms (worst bucket's p50)", cold, cold < 50, "%.1f ms", cold)
	v := h.DeepPage.Throughput
	add("DESIGN bar: deep pages >= 5x GoToSocial's 110/s", v, v >= 550, "%.0f pages/s", v)
	v = h.Fanout.LastInbox.Max
	add("DESIGN bar: every active follower's inbox < 250 ms after the post", v, v < 250, "%.1f ms (max over posts)", v)
	return out
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func report(r *Result, o *options) {
	if r.Only == "" {
		r.Targets = r.targets()
	}
	r.Machine.LoadAvgAtEnd = loadAvg()
	fmt.Println()
	fmt.Printf("== feed service benchmark: %d users, %d follows, %d posts; %d cores, %.0f GiB; MariaDB %s, Redis %s\n",
		r.Graph.Users, r.GraphStats["followEdges"], r.GraphStats["posts"], r.Machine.NProc, r.Machine.MemGiB, r.Machine.MariaDB, r.Machine.Redis)
	fmt.Printf("   load average at start %s, at end %s (other work on this box skews every figure)\n", r.Machine.LoadAvgAtStart, r.Machine.LoadAvgAtEnd)
	if r.Only != "" {
		fmt.Printf("   -only %s: the other workloads and floors were not run\n", r.Only)
	}
	if r.Runs > 1 {
		fmt.Printf("   every figure is the median of %d runs of the workloads; ±p%% is half the range of the runs, relative to the median\n", r.Runs)
	}
	r.table(os.Stdout)
	if r.Only == "" {
		fmt.Println("\ntargets (figures of a run on a shared 2-core box: noisy):")
		for _, t := range r.Targets {
			mark := "n/a "
			if t.Met != nil {
				mark = map[bool]string{true: "met ", false: "MISS"}[*t.Met]
			}
			fmt.Printf("  [%s] %s: %s\n", mark, t.Name, t.Figure)
		}
	}
	r.WarmReadTargets = r.warmReadTargets()
	fmt.Println("\nwarm reads, from this run:")
	printTargetTable(os.Stdout, r.WarmReadTargets)
	for _, m := range modeOrder {
		if mr := r.Modes[m]; mr != nil && len(mr.ServerLogProblems) > 0 {
			fmt.Printf("\nserver log warnings/errors in %s mode:\n", m)
			keys := make([]string, 0, len(mr.ServerLogProblems))
			for k := range mr.ServerLogProblems {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Printf("  %5d  %s\n", mr.ServerLogProblems[k], k)
			}
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "results:", err)
		return
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if r.Error != "" {
		// A run that stopped early keeps the last complete run's results,
		// plots and tables: its own figures go beside them.
		path := outPath(o, "failed.json")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "results:", err)
		} else {
			fmt.Printf("\nthe run stopped early (%s): wrote %s; latest.json, the plots and the docs' tables are left as they were\n", r.Error, path)
		}
		return
	}
	path := outPath(o, "latest.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "results:", err)
	} else {
		fmt.Printf("\nwrote %s\n", path)
		if o.writesDocs() {
			if files, err := writeDocs(".", path); err != nil {
				fmt.Fprintln(os.Stderr, "docs tables:", err)
			} else if len(files) > 0 {
				fmt.Printf("rewrote the tables of %s from it\n", strings.Join(files, ", "))
			}
		}
	}
	if !o.noPlots {
		files, skipped, err := plots(r, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "plots:", err)
		}
		for _, s := range skipped {
			fmt.Println("skipped plot", s)
		}
		if len(files) > 0 {
			fmt.Printf("wrote %s\n", strings.Join(files, ", "))
		}
	}
}

// ---- -compare ----

// loadResult reads a result file (latest.json).
func loadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// compareFiles prints the figures of two result files side by side, per mode,
// with the ratio new/old.
func compareFiles(oldPath, newPath string) error {
	a, err := loadResult(oldPath)
	if err != nil {
		return err
	}
	b, err := loadResult(newPath)
	if err != nil {
		return err
	}
	desc := func(r *Result) string {
		return fmt.Sprintf("%s, %d users, %d cores, MariaDB %s, Redis %s, load %s", r.StartedAt.Format(time.RFC3339), r.Graph.Users,
			r.Machine.NProc, r.Machine.MariaDB, r.Machine.Redis, r.Machine.LoadAvgAtStart)
	}
	fmt.Printf("old: %s (%s)\nnew: %s (%s)\n\n", oldPath, desc(a), newPath, desc(b))
	var modes []string
	for _, m := range modeOrder {
		if a.Modes[m] != nil && b.Modes[m] != nil {
			modes = append(modes, m)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\tunit\t")
	for _, m := range modes {
		fmt.Fprintf(tw, "%s old\tnew\tnew/old\t", m)
	}
	fmt.Fprintln(tw)
	line := func(name, unit string, get func(r *Result, m string) float64) {
		fmt.Fprintf(tw, "%s\t%s\t", name, unit)
		for _, m := range modes {
			ov, nv := get(a, m), get(b, m)
			fmt.Fprintf(tw, "%s\t%s\t%s\t", num(ov), num(nv), ratio(nv, ov))
		}
		fmt.Fprintln(tw)
	}
	for _, rw := range b.rows() {
		line(rw.name, rw.unit, func(r *Result, m string) float64 { return rw.get(r.Modes[m]) })
	}
	line("floor: Redis page, 8 workers", "pages/s", func(r *Result, _ string) float64 { return r.floor(redisFloor) })
	line("floor: pipelined ZADD", "ops/s", func(r *Result, _ string) float64 { return r.floor(zaddFloor) })
	line("floor: SQL pull query, 8 workers", "pages/s", func(r *Result, _ string) float64 { return r.floor(sqlFloor) })
	return tw.Flush()
}

// replotFile redraws the plots of a result file, next to it, and prints
// its warm-read targets (evaluated again: a file written before they
// existed has the figures, not the table).
func replotFile(path string) ([]string, error) {
	r, err := loadResult(path)
	if err != nil {
		return nil, err
	}
	r.WarmReadTargets = r.warmReadTargets()
	fmt.Printf("warm reads, from %s:\n", path)
	printTargetTable(os.Stdout, r.WarmReadTargets)
	files, skipped, err := plots(r, &options{out: filepath.Dir(path)})
	for _, s := range skipped {
		fmt.Println("skipped plot", s)
	}
	return files, err
}

// over is a / b, or 0 when b is not positive.
func over(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
