package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDocsShowTheLatestRun: the README's and docs/performance.md's tables
// are the ones bench/results/latest.json makes (`go run ./bench -docs
// bench/results/latest.json` rewrites them after a run).
func TestDocsShowTheLatestRun(t *testing.T) {
	r, err := loadResult("results/latest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range docTables {
		doc, err := os.ReadFile(filepath.Join("..", dt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := currentBlock(string(doc), dt.marker)
		if err != nil {
			t.Fatalf("%s: %v", dt.file, err)
		}
		if want := dt.render(r); got != want {
			t.Errorf("%s's %q table is not the one results/latest.json makes; run `go run ./bench -docs bench/results/latest.json`.\ngot:\n%s\nwant:\n%s", dt.file, dt.marker, got, want)
		}
	}
}

// TestGeneratedTablesNameTheirRun: each table says its run's date and
// commit, and a figure a mode lacks reads "-", not 0.
func TestGeneratedTablesNameTheirRun(t *testing.T) {
	r := &Result{
		StartedAt: time.Date(2026, 11, 26, 13, 5, 0, 0, time.UTC),
		Commit:    "abc123def0",
		Runs:      3,
		Sockets:   []int{1000, 10000},
		Machine:   Machine{NProc: 2, LoadAvgAtStart: "0.50"},
		Graph:     graphParams{Users: 50000},
		Modes: map[string]*ModeResult{
			"pull": {FirstPage: []Stat{{Label: "32", Throughput: 147.4, P99: 649}},
				RedDots: []RedDotResult{{Asked: 10000, Sockets: 10000, Poster: "celeb_5", PosterFollowers: 20094, Delivery: Stat{P99: 425.6}}}},
			"push": {FirstPage: []Stat{{Label: "32", Throughput: 1491.2, P99: 9.25}},
				Fanout:  FanoutResult{Followers: 4977, LastInbox: Stat{P50: 149}},
				RedDots: []RedDotResult{{Asked: 10000, Sockets: 10000, Poster: "celeb_5", PosterFollowers: 20094, Delivery: Stat{P99: 1187.1}}}},
		},
	}
	for _, table := range []string{r.headlineTable(), r.latestTable()} {
		for _, want := range []string{
			"2026-11-26 13:05 UTC", "commit `abc123def0`", "medians of 3 runs", "50,000 users",
			"| workload | pull | push |",
			"| first page, 32 clients (pages/s; p99 ms) | 147; 649 | 1491; 9.2 |",
			"ordinary post (4,977 followers): last active inbox has it, p50 (ms) | - | 149 |",
		} {
			if !strings.Contains(table, want) {
				t.Errorf("table lacks %q:\n%s", want, table)
			}
		}
	}
	if h := r.headlineTable(); !strings.Contains(h, "| red dot p99, 10,000 sockets, a post by an author with 20,094 followers (ms) | 426 | 1,187 |") {
		t.Errorf("headline's red dot row:\n%s", h)
	}
	r.Commit = ""
	if !strings.Contains(r.headlineTable(), "commit not recorded") {
		t.Error("a run without a commit does not say so")
	}
}

// TestReplaceBlock: only the text between the markers changes, and a
// document without them is an error, not a silent no-op.
func TestReplaceBlock(t *testing.T) {
	doc := "intro\n<!-- bench:x -->\nold\n<!-- /bench:x -->\noutro\n"
	got, err := replaceBlock(doc, "x", "new\n")
	if err != nil || got != "intro\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\noutro\n" {
		t.Fatalf("replaceBlock = %q, %v", got, err)
	}
	if _, err := replaceBlock("no markers", "x", "new\n"); err == nil {
		t.Fatal("a document without markers was accepted")
	}
}

// TestStoppedRunLeavesTheResults: a run that stopped early (a build error,
// a kill) writes failed.json and leaves latest.json, and so the docs'
// tables, as the last complete run made them.
func TestStoppedRunLeavesTheResults(t *testing.T) {
	dir := t.TempDir()
	latest := filepath.Join(dir, "latest.json")
	if err := os.WriteFile(latest, []byte("{\"complete\": true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	report(&Result{Error: "go build: signal: killed", Modes: map[string]*ModeResult{}}, &options{out: dir, noPlots: true, users: 50000})
	if b, err := os.ReadFile(latest); err != nil || string(b) != "{\"complete\": true}\n" {
		t.Fatalf("latest.json after a stopped run: %q, %v", b, err)
	}
	r, err := loadResult(filepath.Join(dir, "failed.json"))
	if err != nil || r.Error != "go build: signal: killed" {
		t.Fatalf("failed.json: %+v, %v", r, err)
	}
}
