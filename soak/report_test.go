package main

import "testing"

// The growth rule at its edges: a series fails only when its last value is
// more than growthFactor times the second interval's and it rose in each of
// the last growthRises intervals.
func TestGrowsUnbounded(t *testing.T) {
	for _, c := range []struct {
		name   string
		series []float64
		want   bool
	}{
		{"flat", []float64{50, 60, 60, 61, 60, 60}, false},
		{"start-up step, then level", []float64{10, 100, 150, 150, 150, 150}, false},
		{"climbing", []float64{10, 100, 120, 140, 160, 180}, true},
		{"exactly 1.5x the second: passes", []float64{10, 100, 110, 120, 130, 150}, false},
		{"just over 1.5x the second: fails", []float64{10, 100, 110, 120, 130, 151}, true},
		{"over 1.5x but fell in the last intervals", []float64{10, 100, 200, 190, 195, 200}, false},
		{"rose in only 2 of the last 3", []float64{10, 100, 180, 180, 190, 200}, false},
		{"too short to judge", []float64{10, 100, 200, 400}, false},
	} {
		if got := growsUnbounded(c.series); got != c.want {
			t.Errorf("%s %v: growsUnbounded = %v, want %v", c.name, c.series, got, c.want)
		}
	}
}
