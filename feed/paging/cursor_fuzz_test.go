package paging

import (
	"encoding/base64"
	"math"
	"testing"
	"unicode/utf8"

	"feedservice/internal/apperr"
)

// FuzzCursor decodes arbitrary strings as cursors of every list, and encodes
// arbitrary keys. A string either decodes to a positive key whose encoding
// is that very string, or is refused with BAD_USER_INPUT and a readable
// message; an encoded positive key decodes to itself in its own list only.
func FuzzCursor(f *testing.F) {
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, kind := range CursorKinds {
		f.Add(EncodeCursor(kind, 1), int64(1))
		f.Add(EncodeCursor(kind, math.MaxInt64), int64(math.MaxInt64))
	}
	for _, s := range []string{
		"", "=", "ZmVlZDox", "ZmVlZDox==", "ZmVl\nZDox", "ZmVl ZDox", "ZmVlZDox\r\n",
		base64.StdEncoding.EncodeToString([]byte("feed:1")), base64.URLEncoding.EncodeToString([]byte("feed:12")),
		raw("feed:0"), raw("feed:-1"), raw("feed:+5"), raw("feed:05"), raw("feed:1 "), raw("feed:"), raw(":1"),
		raw("feed:9223372036854775808"), raw("feed:1:2"), raw("feed"), raw("FEED:1"), raw("\xff\xfe:1"),
		raw("feed:\x00"), raw("timeline:1"), raw("feed:1_000"), raw("feed:0x10"),
	} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(-1))
	f.Add("", int64(math.MinInt64))

	f.Fuzz(func(t *testing.T, cursor string, key int64) {
		for _, kind := range CursorKinds {
			got, err := DecodeCursor(kind, cursor)
			if err != nil {
				if apperr.CodeOf(err) != apperr.CodeBadUserInput {
					t.Fatalf("decodeCursor(%s, %q): %v has code %s, want %s", kind, cursor, err, apperr.CodeOf(err), apperr.CodeBadUserInput)
				}
				if !utf8.ValidString(err.Error()) {
					t.Fatalf("decodeCursor(%s, %q): the message %q is not valid UTF-8", kind, cursor, err.Error())
				}
				continue
			}
			if got <= 0 {
				t.Fatalf("decodeCursor(%s, %q) = %d, want a positive key", kind, cursor, got)
			}
			if again := EncodeCursor(kind, got); again != cursor {
				t.Fatalf("decodeCursor(%s, %q) = %d, which encodes as %q: two cursors for one place", kind, cursor, got, again)
			}
		}
		if key <= 0 {
			return
		}
		for _, kind := range CursorKinds {
			c := EncodeCursor(kind, key)
			for _, other := range CursorKinds {
				got, err := DecodeCursor(other, c)
				switch {
				case other == kind && (err != nil || got != key):
					t.Fatalf("decodeCursor(%s, encodeCursor(%s, %d)) = %d, %v", other, kind, key, got, err)
				case other != kind && apperr.CodeOf(err) != apperr.CodeBadUserInput:
					t.Fatalf("a %s cursor decoded as a %s cursor: %d, %v", kind, other, got, err)
				}
			}
		}
	})
}
