package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotsWithoutPoints: a run of only some workloads (-workloads 7: the
// red dots) has no followee points, no first pages and no fan-out; the
// plots that would have nothing to show are skipped, each with a line that
// says why, and the others are still drawn.
func TestPlotsWithoutPoints(t *testing.T) {
	r := &Result{Runs: 1, Modes: map[string]*ModeResult{}}
	for _, m := range []string{"push", "hybrid"} {
		r.Modes[m] = &ModeResult{Mode: m, RedDots: []RedDotResult{{Asked: 10000, Sockets: 10000, Delivery: Stat{P50: 80, P99: 150}}}}
	}
	dir := t.TempDir()
	files, skipped, err := plots(r, &options{out: dir})
	if err != nil {
		t.Fatalf("plots: %v", err)
	}
	for _, name := range []string{"read_throughput", "latency_vs_followees_push", "latency_vs_followees_hybrid", "latency_vs_followees"} {
		if !slicesContainsPrefix(skipped, name+": ") {
			t.Errorf("plot %s was not skipped; skipped: %q", name, skipped)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".png")); err == nil {
			t.Errorf("plot %s was drawn with no points", name)
		}
	}
	for _, s := range skipped {
		if !strings.Contains(s, "no points") {
			t.Errorf("skip line %q does not say why", s)
		}
	}
	if !slicesContainsPrefix(files, filepath.Join(dir, "write_visibility.png")) {
		t.Errorf("the red-dot plot (write_visibility) was not drawn: %q", files)
	}
}

func slicesContainsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
