package fastexec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// marshaled is what a gqlgen marshaler writes.
func marshaled(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

var edgeStrings = []string{"", "plain", `"`, `\`, "\t\r\n", "\x00\x01\x1f\x20\x7f", "é🙂", "\xff\xfe", "\xe2\x80\xa8", "a\"b\\c\nd", "\xc3", "<>&"}

// The Writer writes each scalar as the gqlgen marshaler it stands in for:
// the generated code calls it instead of graphql.MarshalString, MarshalID,
// MarshalInt*, MarshalBoolean and MarshalTime.
func TestWriterWritesAsGqlgenMarshalers(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	strs := append([]string(nil), edgeStrings...)
	for range 5000 {
		b := make([]byte, rnd.IntN(12))
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		strs = append(strs, string(b))
	}
	for _, s := range strs {
		var w Writer
		w.String(s)
		if got, want := string(w.B), marshaled(graphql.MarshalString(s)); got != want {
			t.Fatalf("String(%q) = %s, gqlgen %s", s, got, want)
		}
		if want := marshaled(graphql.MarshalID(s)); string(w.B) != want {
			t.Fatalf("String(%q) = %s, gqlgen's MarshalID %s", s, w.B, want)
		}
	}
	ints := []int64{0, 1, -1, 9, 10, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32}
	for range 1000 {
		ints = append(ints, rnd.Int64()>>rnd.IntN(63))
	}
	for _, i := range ints {
		var w Writer
		w.Int(i)
		if want := marshaled(graphql.MarshalInt64(i)); string(w.B) != want {
			t.Fatalf("Int(%d) = %s, gqlgen %s", i, w.B, want)
		}
		if want := marshaled(graphql.MarshalInt(int(i))); string(w.B) != want {
			t.Fatalf("Int(%d) = %s, gqlgen's MarshalInt %s", i, w.B, want)
		}
	}
	for _, b := range []bool{true, false} {
		var w Writer
		w.Bool(b)
		if want := marshaled(graphql.MarshalBoolean(b)); string(w.B) != want {
			t.Fatalf("Bool(%t) = %s, gqlgen %s", b, w.B, want)
		}
	}
	zones := []*time.Location{time.UTC, time.FixedZone("x", -(3*3600 + 30*60)), time.FixedZone("y", 14*3600)}
	times := []time.Time{time.Unix(1, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}
	for range 1000 {
		times = append(times, time.Unix(rnd.Int64N(1<<40)-1<<39, rnd.Int64N(1e9)).In(zones[rnd.IntN(len(zones))]))
	}
	for _, tm := range times {
		var w Writer
		w.Time(tm)
		if want := marshaled(graphql.MarshalTime(tm)); string(w.B) != want {
			t.Fatalf("Time(%v) = %s, gqlgen %s", tm, w.B, want)
		}
	}
}

func FuzzWriterString(f *testing.F) {
	for _, s := range edgeStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var w Writer
		w.String(s)
		if want := marshaled(graphql.MarshalString(s)); string(w.B) != want {
			t.Fatalf("String(%q) = %s, gqlgen %s", s, w.B, want)
		}
	})
}

func TestNullFromAndKey(t *testing.T) {
	w := Writer{B: []byte(`{"a":1,`)}
	w.NullFrom(1)
	if got := string(w.B); got != "{null" {
		t.Fatalf("NullFrom: %s", got)
	}
	w = Writer{B: []byte("{")}
	w.Key(true, "a")
	w.Int(1)
	w.Key(false, "b\"")
	w.Null()
	if got := string(w.B); got != `{"a":1,"b\"":null` {
		t.Fatalf("Key: %s", got)
	}
}

// Marshaler hands back gqlgen's own Null and RequiredNull, which its root
// field interceptors and root object compare by identity.
func TestMarshalerKeepsGqlgenNulls(t *testing.T) {
	w := GetWriter()
	w.Null()
	if Marshaler(Null, w) != graphql.Null {
		t.Fatal("Null is not graphql.Null")
	}
	w = GetWriter()
	w.Null()
	if Marshaler(RequiredNull, w) != graphql.RequiredNull {
		t.Fatal("RequiredNull is not graphql.RequiredNull")
	}
	w = GetWriter()
	w.String("x")
	m := Marshaler(Value, w)
	if got := marshaled(m); got != `"x"` || StatusOf(m) != Value {
		t.Fatalf("Value: %s, %v", got, StatusOf(m))
	}
	if StatusOf(graphql.Null) != Null || StatusOf(graphql.RequiredNull) != RequiredNull || StatusOf(graphql.MarshalString("")) != Value {
		t.Fatal("StatusOf does not tell gqlgen's nulls by identity")
	}
}

func TestSplice(t *testing.T) {
	hole := func(pos int, s string) Hole {
		w := GetWriter()
		w.B = append(w.B, s...)
		return Hole{Pos: pos, W: w}
	}
	w := Writer{B: []byte(`{"a":,"b":1,"c":,"d":}`)}
	Splice(&w, []Hole{hole(5, "10"), hole(HolePos(true, 0), "dropped"), hole(16, `"x"`), hole(21, "")})
	if got, want := string(w.B), `{"a":10,"b":1,"c":"x","d":}`; got != want {
		t.Fatalf("Splice: %s, want %s", got, want)
	}
	if HolePos(false, 7) != 7 {
		t.Fatal("HolePos")
	}
}

// spendLimit allows max bytes of text.
type spendLimit struct{ spent, max int }

func (l *spendLimit) Spend(n int) bool {
	l.spent += n
	return l.spent <= l.max
}

// A Writer with a limit tells it of every text it writes (keys and string
// values) and, once the limit refuses, writes texts as "": what a response
// past its cap holds stays near the cap. Without a limit it writes all.
func TestWriterSpendsItsLimit(t *testing.T) {
	l := &spendLimit{max: 10}
	w := GetLimitedWriter(l)
	w.Key(true, "body")
	w.String("hello")
	w.Key(false, "more")
	w.String("this is past the limit")
	io := "raw"
	w.WriteString(io)
	if got, want := string(w.B), `"body":"hello","":""`; got != want {
		t.Errorf("wrote %s, want %s", got, want)
	}
	if l.spent != len("body")+len("hello")+len("more")+len("this is past the limit")+len(io) {
		t.Errorf("spent %d", l.spent)
	}
	PutWriter(w)
	if w := GetWriter(); w.limit != nil {
		t.Errorf("a pooled writer kept its limit")
	}
	var free Writer
	free.String("no limit")
	if string(free.B) != `"no limit"` {
		t.Errorf("wrote %s without a limit", free.B)
	}
}
