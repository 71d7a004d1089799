package main

// The figures the README and docs/performance.md quote, generated from one
// result file so that they cannot drift from the run they claim to be: each
// table sits between marker comments and says the date and commit of its
// run. `go run ./bench -docs` rewrites the tables from
// bench/results/latest.json; TestDocsShowTheLatestRun fails while they differ.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// docTable is one generated table and where it lives.
type docTable struct {
	file   string // relative to the repository root
	marker string // the block is between <!-- bench:marker --> and <!-- /bench:marker -->
	render func(r *Result) string
}

var docTables = []docTable{
	{"README.md", "headline", (*Result).headlineTable},
	{"docs/performance.md", "latest", (*Result).latestTable},
}

// writesDocs: a full run of the default graph into bench/results is what
// the README's and docs/performance.md's tables show.
func (o *options) writesDocs() bool {
	return !o.quick && o.only == "" && o.users == 50000 && filepath.Clean(o.out) == "bench/results"
}

// sourceCommit names the code a run measured: the short commit, with
// "+changes" when the working tree differed from it (the server is built
// from the tree), or "" outside a git checkout.
func sourceCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short=10", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		commit += "+changes"
	}
	return commit
}

// provenance is the line above each generated table: which run it is.
func (r *Result) provenance() string {
	commit := "commit not recorded"
	if r.Commit != "" {
		commit = "commit `" + r.Commit + "`"
	}
	runs := "one run"
	if r.Runs > 1 {
		runs = fmt.Sprintf("medians of %d runs", r.Runs)
	}
	return fmt.Sprintf("From `make bench` started %s UTC, %s: %s on %d cores (load averages %s at the start), %s users.",
		r.StartedAt.UTC().Format("2006-01-02 15:04"), commit, runs, r.Machine.NProc, r.Machine.LoadAvgAtStart, figure(float64(r.Graph.Users)))
}

// headlineTable is the README's table: the figures a reader compares first.
func (r *Result) headlineTable() string {
	var b strings.Builder
	fmt.Fprintln(&b, r.provenance())
	fmt.Fprintln(&b)
	r.markdownRows(&b, []mdRow{
		r.firstPageRow(32),
		r.followeesRow("warm p99 at %s followees (ms)", true, func(p FolloweePoint) float64 { return p.Warm.P99 }),
		r.fanoutRow(),
		{"celebrity post visible on a follower's next page, p50 (ms)", func(m *ModeResult) string { return ms(m.Celebrity.Visible.P50) }},
		r.redDotRow(r.largestSockets(), true),
		{"mixed 90% reads / 8% posts / 2% follows (ops/s, 16 clients)", func(m *ModeResult) string { return figure(m.Mixed.All.Throughput) }},
	})
	return b.String()
}

// latestTable is docs/performance.md's table of the run.
func (r *Result) latestTable() string {
	var b strings.Builder
	fmt.Fprintln(&b, r.provenance())
	fmt.Fprintln(&b)
	rows := []mdRow{r.firstPageRow(1), r.firstPageRow(8), r.firstPageRow(32),
		{"deep pages 2-10, 8 clients (pages/s; p99 ms)", func(m *ModeResult) string {
			return figure(m.DeepPage.Throughput) + "; " + ms(m.DeepPage.P99)
		}},
		r.followeesRow("warm p99 at %s followees (ms)", false, func(p FolloweePoint) float64 { return p.Warm.P99 }),
		r.followeesRow("cold first read p50 at %s followees (ms)", false, func(p FolloweePoint) float64 { return p.Cold.P50 }),
		r.fanoutRow(),
		{"fan-out entries/s during fan-out", func(m *ModeResult) string { return figure(m.Fanout.EntriesPerSec) }},
		{"celebrity post: mutation p50 / p99 (ms)", func(m *ModeResult) string {
			return ms(m.Celebrity.Mutation.P50) + " / " + ms(m.Celebrity.Mutation.P99)
		}},
		{"celebrity post visible on a follower's next page, p50 (ms)", func(m *ModeResult) string { return ms(m.Celebrity.Visible.P50) }},
		{"mixed 90% reads / 8% posts / 2% follows (ops/s, 16 clients)", func(m *ModeResult) string { return figure(m.Mixed.All.Throughput) }},
	}
	for _, n := range r.Sockets {
		rows = append(rows, r.redDotRow(n, false))
		if n != r.largestSockets() {
			rows = append(rows, mdRow{fmt.Sprintf("red dot p50 / p99, %s sockets, a celebrity's post to its followers among them (ms)", figure(float64(n))), func(m *ModeResult) string {
				d := m.redDotAt(n).CelebrityDelivery
				return ms(d.P50) + " / " + ms(d.P99)
			}})
		}
	}
	rows = append(rows,
		mdRow{"Redis bytes per inbox entry (sorted set + sources hash)", func(m *ModeResult) string { return fixed1(m.Memory.BytesPerEntry) }},
		mdRow{"server RSS after warm-up / peak (MiB)", func(m *ModeResult) string {
			return figure(float64(m.Memory.ServerRSSWarmKB)/1024) + " / " + figure(float64(m.Memory.ServerHWMKB)/1024)
		}},
	)
	r.markdownRows(&b, rows)
	return b.String()
}

type mdRow struct {
	name string
	cell func(m *ModeResult) string
}

func (r *Result) markdownRows(b *strings.Builder, rows []mdRow) {
	var modes []string
	for _, m := range modeOrder {
		if r.Modes[m] != nil {
			modes = append(modes, m)
		}
	}
	fmt.Fprintf(b, "| workload | %s |\n|---|%s\n", strings.Join(modes, " | "), strings.Repeat("---|", len(modes)))
	for _, row := range rows {
		fmt.Fprintf(b, "| %s |", row.name)
		for _, m := range modes {
			fmt.Fprintf(b, " %s |", row.cell(r.Modes[m]))
		}
		fmt.Fprintln(b)
	}
}

func (r *Result) firstPageRow(clients int) mdRow {
	name := "client"
	if clients > 1 {
		name = "clients"
	}
	return mdRow{fmt.Sprintf("first page, %d %s (pages/s; p99 ms)", clients, name), func(m *ModeResult) string {
		s := firstPageAt(m, clients)
		if s.Throughput <= 0 {
			return "-"
		}
		return withSpread(m, func(m *ModeResult) float64 { return firstPageAt(m, clients).Throughput }) + "; " + ms(s.P99)
	}}
}

// followeesRow shows a figure per probed followee count: the first and the
// last only when short.
func (r *Result) followeesRow(format string, short bool, get func(FolloweePoint) float64) mdRow {
	var any *ModeResult
	for _, m := range modeOrder {
		if r.Modes[m] != nil {
			any = r.Modes[m]
			break
		}
	}
	var idx []int
	if any != nil {
		for i := range any.Followees {
			if !short || i == 0 || i == len(any.Followees)-1 {
				idx = append(idx, i)
			}
		}
	}
	var labels []string
	for _, i := range idx {
		labels = append(labels, figure(float64(any.Followees[i].Followees)))
	}
	return mdRow{fmt.Sprintf(format, strings.Join(labels, " / ")), func(m *ModeResult) string {
		var cells []string
		for _, i := range idx {
			cells = append(cells, ms(get(followeeAt(m, i))))
		}
		return strings.Join(cells, " / ")
	}}
}

func (r *Result) fanoutRow() mdRow {
	followers := 0
	for _, m := range r.Modes {
		followers = max(followers, m.Fanout.Followers)
	}
	return mdRow{fmt.Sprintf("ordinary post (%s followers): last active inbox has it, p50 (ms)", figure(float64(followers))), func(m *ModeResult) string {
		return ms(m.Fanout.LastInbox.P50)
	}}
}

func (r *Result) largestSockets() int {
	n := 0
	for _, s := range r.Sockets {
		n = max(n, s)
	}
	return n
}

// redDotRow is the red dot's delivery at n sockets: every socket belongs to
// a follower of the poster, who is the ordinary author or, when it has too
// few followers, the biggest celebrity.
func (r *Result) redDotRow(n int, p99Only bool) mdRow {
	followers := 0
	for _, m := range r.Modes {
		followers = max(followers, m.redDotAt(n).PosterFollowers)
	}
	what := fmt.Sprintf("%s sockets, a post by an author with %s followers", figure(float64(n)), figure(float64(followers)))
	if p99Only {
		return mdRow{"red dot p99, " + what + " (ms)", func(m *ModeResult) string {
			return ms(m.redDotAt(n).Delivery.P99)
		}}
	}
	return mdRow{"red dot p50 / p99, " + what + " (ms)", func(m *ModeResult) string {
		d := m.redDotAt(n).Delivery
		return ms(d.P50) + " / " + ms(d.P99)
	}}
}

// ms is a latency in milliseconds as the tables print it; "-" when the mode
// has no such figure.
func ms(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 10:
		return fixed1(v)
	}
	return figure(v)
}

func fixed1(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// figure is a whole figure with commas, "-" when the mode has none.
func figure(v float64) string {
	if v <= 0 {
		return "-"
	}
	return thousands(v)
}

// replaceBlock swaps the text between a marker pair for body.
func replaceBlock(doc, marker, body string) (string, error) {
	open, closing := "<!-- bench:"+marker+" -->\n", "<!-- /bench:"+marker+" -->"
	i := strings.Index(doc, open)
	j := strings.Index(doc, closing)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q block", strings.TrimSpace(open), closing)
	}
	return doc[:i+len(open)] + body + doc[j:], nil
}

// currentBlock is the text between a marker pair.
func currentBlock(doc, marker string) (string, error) {
	open, closing := "<!-- bench:"+marker+" -->\n", "<!-- /bench:"+marker+" -->"
	i := strings.Index(doc, open)
	j := strings.Index(doc, closing)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q block", strings.TrimSpace(open), closing)
	}
	return doc[i+len(open) : j], nil
}

// writeDocs rewrites every generated table from the result file at path,
// under the repository root.
func writeDocs(root, path string) ([]string, error) {
	r, err := loadResult(path)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, t := range docTables {
		file := filepath.Join(root, t.file)
		doc, err := os.ReadFile(file)
		if err != nil {
			return written, err
		}
		next, err := replaceBlock(string(doc), t.marker, t.render(r))
		if err != nil {
			return written, fmt.Errorf("%s: %w", t.file, err)
		}
		if next != string(doc) {
			if err := os.WriteFile(file, []byte(next), 0o644); err != nil {
				return written, err
			}
			written = append(written, t.file)
		}
	}
	return written, nil
}
