package models

import (
	"encoding/base64"
	"errors"
	"math"
	"testing"
)

// FuzzNodeID parses arbitrary strings as global node IDs and encodes
// arbitrary ids. A string either parses to a known kind and a positive id
// whose encoding is that very string (one node, one ID: clients cache by
// it), or is refused with ErrBadNodeID; an encoded positive id parses back.
func FuzzNodeID(f *testing.F) {
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, kind := range []string{KindUser, KindPost} {
		f.Add(NodeID(kind, 1), int64(1))
		f.Add(NodeID(kind, math.MaxInt64), int64(math.MaxInt64))
	}
	for _, s := range []string{
		"", "=", "VXNlcjox", "VXNlcjox==", "VXNl\ncjox", "VXNl cjox", "VXNlcjox\r\n", "UG9zdDoxMg", "UG9zdDoxMh",
		base64.StdEncoding.EncodeToString([]byte("User:1")), base64.URLEncoding.EncodeToString([]byte("Post:12")),
		raw("User:0"), raw("User:-1"), raw("User:+5"), raw("User:05"), raw("User:1 "), raw("User:"), raw(":1"),
		raw("User:9223372036854775808"), raw("User:1:2"), raw("user:1"), raw("Comment:1"), raw("\xff:1"), raw("Post:\x00"),
	} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(-1))
	f.Add("", int64(math.MinInt64))

	f.Fuzz(func(t *testing.T, s string, id int64) {
		kind, got, err := ParseNodeID(s)
		switch {
		case err != nil && !errors.Is(err, ErrBadNodeID):
			t.Fatalf("ParseNodeID(%q): %v, want ErrBadNodeID", s, err)
		case err == nil && (kind != KindUser && kind != KindPost || got <= 0):
			t.Fatalf("ParseNodeID(%q) = %q, %d: not a node", s, kind, got)
		case err == nil && NodeID(kind, got) != s:
			t.Fatalf("ParseNodeID(%q) = %s %d, which encodes as %q: two IDs for one node", s, kind, got, NodeID(kind, got))
		}
		if id <= 0 {
			return
		}
		for _, kind := range []string{KindUser, KindPost} {
			k, back, err := ParseNodeID(NodeID(kind, id))
			if err != nil || k != kind || back != id {
				t.Fatalf("ParseNodeID(NodeID(%s, %d)) = %q, %d, %v", kind, id, k, back, err)
			}
		}
	})
}
