package fastexec

import "slices"

// A Hole is a place in a Writer where a value written elsewhere (by a
// field resolved after its siblings, or in a goroutine of its own) goes.
type Hole struct {
	// Pos is the offset in the Writer the value goes to; negative for a
	// value resolved but not written (a field whose alias an earlier
	// field already wrote).
	Pos int
	// W holds the value.
	W *Writer
}

// HolePos is the Pos of a hole at pos, or of one not written.
func HolePos(unwritten bool, pos int) int {
	if unwritten {
		return -1
	}
	return pos
}

// A Part is a value written by a goroutine of its own.
type Part struct {
	W *Writer
	// Invalid: the value makes its parent null.
	Invalid bool
}

// Splice inserts each hole's value at its offset (offsets before any
// insertion, in increasing order) and returns the holes' Writers to the
// pool.
func Splice(w *Writer, holes []Hole) {
	grow := 0
	for _, h := range holes {
		if h.Pos >= 0 {
			grow += len(h.W.B)
		}
	}
	end := len(w.B)
	w.B = slices.Grow(w.B, grow)[:end+grow]
	// From the last hole back: move the bytes after it, then put it in.
	for i := len(holes) - 1; i >= 0; i-- {
		h := holes[i]
		if h.Pos < 0 {
			PutWriter(h.W)
			continue
		}
		copy(w.B[h.Pos+grow:end+grow], w.B[h.Pos:end])
		grow -= len(h.W.B)
		copy(w.B[h.Pos+grow:], h.W.B)
		end = h.Pos
		PutWriter(h.W)
	}
}
