package pull

import (
	"slices"
	"testing"
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
