package main

import (
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// syntheticRows is a run of n intervals of a minute each; the first has no
// repost, as a short interval may not.
func syntheticRows(n int) []row {
	var rows []row
	for i := 1; i <= n; i++ {
		p99 := map[string]float64{}
		for k, o := range operations {
			p99[o.name] = float64(10*k + i)
		}
		if i == 1 {
			delete(p99, "repost")
		}
		rows = append(rows, row{
			Interval: i, Elapsed: time.Duration(i) * time.Minute, Requests: 6000 + i, Errors: 0, P99ms: p99,
			Goroutines: map[string]float64{"A": 100 + float64(i), "B": 90},
			RSSMB:      map[string]float64{"A": 40.5, "B": 38 + float64(i)},
			RedisMB:    3 + float64(i)/10, StreamMB: 0.1, StreamEntries: int64(i), SubMessages: int64(100 * i),
		})
	}
	return rows
}

// writeRows writes every row to soak.csv (one column per operation's p99
// and per instance's figure, blank where an operation did not run) and a
// plot of them to soak.png.
func TestWriteRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out") // made by writeRows
	rows := syntheticRows(10)
	files, err := writeRows(dir, "synthetic", rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "soak.csv"), filepath.Join(dir, "soak.png")}
	if !slices.Equal(files, want) {
		t.Fatalf("files = %v, want %v", files, want)
	}

	f, err := os.Open(want[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(rows) {
		t.Fatalf("%d CSV records, want a header and %d rows", len(recs), len(rows))
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	for _, name := range []string{"interval", "elapsed_s", "requests", "errors", "p99_ms_feed", "p99_ms_repost",
		"goroutines_A", "goroutines_B", "rss_mb_A", "rss_mb_B", "redis_mb", "stream_mb", "stream_entries", "subscription_messages"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("CSV header %v has no %s", recs[0], name)
		}
	}
	for _, c := range []struct {
		rec       int
		name, val string
	}{
		{1, "interval", "1"}, {1, "elapsed_s", "60"}, {1, "p99_ms_repost", ""}, {1, "p99_ms_feed", "1"},
		{10, "elapsed_s", "600"}, {10, "requests", "6010"}, {10, "p99_ms_repost", "50"},
		{10, "goroutines_A", "110"}, {10, "rss_mb_B", "48"}, {10, "rss_mb_A", "40.5"},
		{10, "redis_mb", "4"}, {10, "stream_entries", "10"}, {10, "subscription_messages", "1000"},
	} {
		if got := recs[c.rec][col[c.name]]; got != c.val {
			t.Errorf("row %d %s = %q, want %q", c.rec, c.name, got, c.val)
		}
	}

	pf, err := os.Open(want[1])
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("soak.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 400 {
		t.Errorf("soak.png is %dx%d, want a plot of at least 400x400", b.Dx(), b.Dy())
	}
}

// Without SOAK_OUT the soak writes nothing (the test command's run).
func TestSoakOutSetting(t *testing.T) {
	t.Setenv("SOAK_OUT", "")
	s, err := loadSettings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Out != "" {
		t.Errorf("Out = %q without SOAK_OUT, want none", s.Out)
	}
	t.Setenv("SOAK_OUT", "docs/soak")
	if s, _ := loadSettings(); s.Out != "docs/soak" {
		t.Errorf("Out = %q, want docs/soak", s.Out)
	}
}

// The instances' post cache lives two intervals unless SOAK_POST_CACHE_TTL
// says otherwise (see settings.PostCacheTTL).
func TestSoakPostCacheTTLSetting(t *testing.T) {
	t.Setenv("SOAK_DURATION", "30s")
	t.Setenv("SOAK_INTERVAL", "6s")
	t.Setenv("SOAK_POST_CACHE_TTL", "")
	s, err := loadSettings()
	if err != nil {
		t.Fatal(err)
	}
	if s.PostCacheTTL != 12*time.Second {
		t.Errorf("PostCacheTTL = %s with 6s intervals, want 12s", s.PostCacheTTL)
	}
	t.Setenv("SOAK_POST_CACHE_TTL", "1h")
	if s, _ := loadSettings(); s.PostCacheTTL != time.Hour {
		t.Errorf("PostCacheTTL = %s with SOAK_POST_CACHE_TTL=1h, want 1h", s.PostCacheTTL)
	}
}
