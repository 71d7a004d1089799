package feed

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"feedservice/feed/config"
	"feedservice/internal/apperr"
)

// postBodyAllowed is the rule of post bodies written out by ranges, apart
// from text.PostBody: trimmed of white space, 1 to MaxPostChars code points
// of valid UTF-8, no C0 control but line feed and tab, no DEL, no C1 control,
// at least one character that is not blank.
func postBodyAllowed(body string) (trimmed string, ok bool) {
	trimmed = strings.TrimSpace(body)
	if !utf8.ValidString(trimmed) {
		return trimmed, false
	}
	n := 0
	for _, r := range trimmed {
		n++
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return trimmed, false
		}
	}
	return trimmed, n >= 1 && n <= config.MaxPostChars && strings.ContainsFunc(trimmed, func(r rune) bool { return !postBlank(r) })
}

// postBlank is a character that shows as nothing, apart from visible:
// white space, the zero-width and format characters named by range, the
// variation selectors, the fillers and the blank braille pattern.
func postBlank(r rune) bool {
	switch {
	case unicode.IsSpace(r), unicode.Is(unicode.Cf, r),
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, r >= 0x180b && r <= 0x180f,
		r >= 0x200b && r <= 0x200f, r >= 0x2060 && r <= 0x206f, r == 0xfeff, r == 0x034f,
		r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x3164, r == 0xffa0, r >= 0xfff0 && r <= 0xfff8,
		r >= 0xe0000 && r <= 0xe0fff, r == 0x2800:
		return true
	}
	return false
}

// FuzzPostBody publishes arbitrary bodies, repeated up to 65,536 times (so
// that a short input makes a body of megabytes), through the engine on
// MariaDB. A body the rule allows is stored and read back byte for byte,
// trimmed; any other is refused with BAD_USER_INPUT and nothing is stored.
func FuzzPostBody(f *testing.F) {
	te := newTestEngine(f, func(c *config.Config) { c.FanoutWorkers = 0; c.Dispatch = false })
	author := te.user("author")
	ctx := context.Background()
	for _, body := range []string{
		"hello", "  padded\n", "line one\nline two\tend", "🙂", "👩‍👩‍👧‍👦 family", "e\u0301\u0301\u0301", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇",
		"שלום עולם", "مرحبا بالعالم", "\u202eevil\u202c", "\u200b\ufeff\u2028", "\U0010FFFF", "\ufffd",
		"nul\x00byte", "cr\r\nlf", "esc\x1b[31m", "del\x7f", "c1\u0085x", "bell\a", "\xff\xfe", "\xed\xa0\x80", "\xc0\xaf", "ab\xe2\x82",
		strings.Repeat("a", config.MaxPostChars), strings.Repeat("🙂", config.MaxPostChars+1), " \u00a0\u3000 ",
	} {
		f.Add(body, uint16(0))
	}
	f.Add(strings.Repeat("🙂", 40), uint16(65535)) // 10 MiB
	f.Add("x", uint16(config.MaxPostChars-1))
	f.Add("x", uint16(config.MaxPostChars))

	f.Fuzz(func(t *testing.T, piece string, copies uint16) {
		body := strings.Repeat(piece, 1+int(copies))
		want, ok := postBodyAllowed(body)
		before, err := te.store.UserByID(ctx, author)
		if err != nil {
			t.Fatal(err)
		}
		p, err := te.CreatePost(ctx, author, body)
		if !ok {
			if err == nil || apperr.CodeOf(err) != apperr.CodeBadUserInput {
				t.Fatalf("a body of %d bytes (%.40q...) outside the rule: %v, want %s", len(body), body, err, apperr.CodeBadUserInput)
			}
			after, err := te.store.UserByID(ctx, author)
			if err != nil {
				t.Fatal(err)
			}
			if after.PostCount != before.PostCount {
				t.Fatalf("a refused body changed the post count from %d to %d", before.PostCount, after.PostCount)
			}
			return
		}
		if err != nil {
			t.Fatalf("a body the rule allows (%q): %v", body, err)
		}
		if p.Body != want {
			t.Fatalf("createPost returned %q for %q, want %q", p.Body, body, want)
		}
		stored, err := te.Posts(ctx, []int64{p.ID})
		if err != nil {
			t.Fatal(err)
		}
		if stored[0] == nil || stored[0].Body != want {
			t.Fatalf("stored %+v for %q, want the body %q", stored[0], body, want)
		}
	})
}
