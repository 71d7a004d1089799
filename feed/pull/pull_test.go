package pull

import (
	"math"
	"slices"
	"testing"
	"time"

	"feedservice/feed/ids"
	"feedservice/store"
)

// A view counts the followees it does not hide, and hides the hidden
// wherever they come from; it keeps neither slice it was made of.
func TestNewView(t *testing.T) {
	followees, hidden := []int64{9, 3, 5, 7}, []int64{7, 11, 7}
	v := NewView(followees, hidden)
	if !slices.Equal(v.Followees, []int64{3, 5, 9}) || !slices.Equal(v.Hidden, []int64{7, 11}) {
		t.Fatalf("NewView = %+v, want followees [3 5 9] and hidden [7 11]", v)
	}
	for id, want := range map[int64][2]bool{3: {true, false}, 7: {false, true}, 11: {false, true}, 4: {false, false}} {
		if got := [2]bool{v.Counts(id), v.Hides(id)}; got != want {
			t.Errorf("user %d: counts, hides = %v, want %v", id, got, want)
		}
	}
	followees[0], hidden[0] = 1, 1
	if v.Counts(1) || v.Hides(1) {
		t.Fatalf("the view changed with the slices it was made of: %+v", v)
	}
}

// A scan's windows go back from the bound (or from now, for a first page)
// a day, then eight times as long past each, until one would start before
// the first id: that one is the rest of the feed. Each starts at the edge
// of the last, which it leaves out. A scan of newer entries reads the rest
// at once.
func TestWindowsGoBackADayThenEightTimesLonger(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	w := NewWindow(store.Older, math.MaxInt64, now)
	var spans []time.Duration
	for from := now; w.Edge() != 0; {
		edge := ids.IDTime(w.Edge())
		spans = append(spans, from.Sub(edge))
		if next := w.Widen(); next != ids.IDAt(edge) {
			t.Fatalf("the window after the one ending at %v starts from %d, want its edge %d", edge, next, ids.IDAt(edge))
		}
		from = edge
	}
	if want := []time.Duration{day, 8 * day, 64 * day, 512 * day}; !slices.Equal(spans, want) {
		t.Fatalf("older windows from now: %v, want %v, then the rest (now is %v after the first id)", spans, want, ids.IDTime(0).Sub(now))
	}

	cursor := ids.IDAt(now.Add(-10 * day))
	if w := NewWindow(store.Older, cursor, now); ids.IDTime(w.Edge()) != now.Add(-11*day) {
		t.Fatalf("the first window below a cursor ends at %v, want a day below it", ids.IDTime(w.Edge()))
	}
	w = NewWindow(store.Older, cursor, now)
	if bound, more, done := w.After(5, 5, 42); bound != 42 || !more || done {
		t.Fatalf("after a full batch: %d %v %v, want below its last (42), more of the window", bound, more, done)
	}
	edge := w.Edge()
	if bound, more, done := w.After(3, 5, 42); bound != edge || more || done {
		t.Fatalf("after a short batch: %d %v %v, want the next window, from the edge %d", bound, more, done, edge)
	}
	for w.Edge() != 0 {
		w.Widen()
	}
	if _, _, done := w.After(0, 5, 0); !done {
		t.Fatal("after the rest of the feed was read, the scan is not done")
	}
	if w := NewWindow(store.Newer, cursor, now); w.Edge() != 0 {
		t.Fatalf("a scan of newer entries has a window to %v: it should read the rest at once", ids.IDTime(w.Edge()))
	}
}
