// Package fastexec is the runtime of the fast GraphQL executor that
// internal/fastexec/plugin generates beside gqlgen's own (graph/fastexec.go):
// a path that writes a response's JSON straight into one buffer, with no
// graphql.Marshaler tree, no FieldContext for a field nothing observes and
// no goroutine for a list element under which nothing can block. Its
// responses are byte for byte gqlgen's (the differential test in
// internal/fastexec/difftest checks it); what cannot be done that way is
// left to gqlgen's own execution.
package fastexec

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// A Writer is the buffer a part of a response is written into. The
// executor writes into one Writer per goroutine it runs; parts written by
// other goroutines are spliced in afterwards (Splice).
type Writer struct {
	B     []byte
	limit Limit
}

// A Limit bounds what one response may write, told of the bytes of each
// text (keys and string values, the part of a response a document can
// make large) as it is written. Once Spend answers false the response is
// to be refused: its Writers write every later text as "", so that what
// it holds until then stays near the limit.
type Limit interface {
	Spend(n int) bool
}

type limitKey struct{}

// WithLimit gives the operations run with ctx the response limit l.
func WithLimit(ctx context.Context, l Limit) context.Context {
	return context.WithValue(ctx, limitKey{}, l)
}

// LimitOf is the response limit of ctx, or nil.
func LimitOf(ctx context.Context) Limit {
	l, _ := ctx.Value(limitKey{}).(Limit)
	return l
}

// GetLimitedWriter returns an empty Writer from the pool that spends l
// (nil: no limit).
func GetLimitedWriter(l Limit) *Writer {
	w := GetWriter()
	w.limit = l
	return w
}

// spend tells the limit of n bytes of text, and says whether to write it.
func (w *Writer) spend(n int) bool { return w.limit == nil || w.limit.Spend(n) }

var writers = sync.Pool{New: func() any { return &Writer{B: make([]byte, 0, 1024)} }}

// maxPooledBytes bounds the buffers kept for reuse: one huge response
// must not pin its buffer for good.
const maxPooledBytes = 1 << 20

// GetWriter returns an empty Writer from the pool.
func GetWriter() *Writer { return writers.Get().(*Writer) }

// PutWriter returns w to the pool; w must not be used after.
func PutWriter(w *Writer) {
	if cap(w.B) > maxPooledBytes {
		return
	}
	w.B = w.B[:0]
	w.limit = nil
	writers.Put(w)
}

// Write appends p (io.Writer, for graphql.Marshaler.MarshalGQL).
func (w *Writer) Write(p []byte) (int, error) {
	w.B = append(w.B, p...)
	return len(p), nil
}

// WriteString appends s (io.StringWriter, which io.WriteString uses).
func (w *Writer) WriteString(s string) (int, error) {
	if w.spend(len(s)) {
		w.B = append(w.B, s...)
	}
	return len(s), nil
}

// Null appends the JSON null.
func (w *Writer) Null() { w.B = append(w.B, "null"...) }

// NullFrom replaces what was written from start on with null: an object
// or list that turned out invalid.
func (w *Writer) NullFrom(start int) { w.B = append(w.B[:start], "null"...) }

// Key appends an object key (its alias) and the colon, after a comma
// unless first.
func (w *Writer) Key(first bool, alias string) {
	if !first {
		w.B = append(w.B, ',')
	}
	w.String(alias)
	w.B = append(w.B, ':')
}

const hex = "0123456789ABCDEF"

// String appends s quoted as gqlgen's graphql.MarshalString writes it:
// only control characters, the backslash and the double quote are
// escaped; everything else, invalid UTF-8 included, is copied as is. (It
// walks bytes where gqlgen walks runes: a byte below 0x20 or equal to '\\'
// or '"' is never part of a multi-byte sequence, so the output is the same.)
func (w *Writer) String(s string) {
	if !w.spend(len(s)) {
		s = ""
	}
	b := append(w.B, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	w.B = append(b, '"')
}

// Int appends i as graphql.MarshalInt (and its sized variants) write it.
func (w *Writer) Int(i int64) { w.B = strconv.AppendInt(w.B, i, 10) }

// Bool appends b as graphql.MarshalBoolean writes it.
func (w *Writer) Bool(b bool) { w.B = strconv.AppendBool(w.B, b) }

// Time appends t as graphql.MarshalTime writes it (strconv.Quote of its
// RFC 3339 form with nanoseconds). The caller handles the zero time, for
// which MarshalTime answers null.
func (w *Writer) Time(t time.Time) {
	var buf [64]byte
	w.B = strconv.AppendQuote(w.B, string(t.AppendFormat(buf[:0], time.RFC3339Nano)))
}
