package text

import (
	"strings"
	"testing"

	"feedservice/feed/config"
	"feedservice/internal/apperr"
)

// refused says whether err is the BAD_USER_INPUT a rule answers with.
func refused(err error) bool { return err != nil && apperr.CodeOf(err) == apperr.CodeBadUserInput }

func TestPostBody(t *testing.T) {
	for _, tc := range []struct {
		body, want string // want "" for refused
	}{
		{"  hello\n", "hello"},
		{"line one\nline two\tend", "line one\nline two\tend"},
		{"שלום \u200f עולם", "שלום \u200f עולם"}, // right-to-left text keeps its marks
		{"👩‍👩‍👧‍👦", "👩‍👩‍👧‍👦"},
		{strings.Repeat("a", config.MaxPostChars), strings.Repeat("a", config.MaxPostChars)},
		{strings.Repeat("a", config.MaxPostChars+1), ""},
		{"   ", ""},
		{"\u200b\ufeff\u2060", ""}, // zero-width and format characters alone
		{"\u2800", ""},             // the blank braille pattern
		{"\ufe0f\u3164", ""},       // a variation selector and a Hangul filler
		{"cr\r\nlf", ""},
		{"nul\x00", ""},
		{"esc\x1b[31m", ""},
		{"c1\u0085x", ""},
		{"bad\xff", ""},
	} {
		got, err := PostBody(tc.body)
		switch {
		case tc.want == "" && !refused(err):
			t.Errorf("PostBody(%q) = %q, %v: want BAD_USER_INPUT", tc.body, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("PostBody(%q) = %q, %v: want %q", tc.body, got, err, tc.want)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct {
		name, want string // want "" for refused
	}{
		{" Ada Lovelace ", "Ada Lovelace"},
		{"محمد", "محمد"},
		{strings.Repeat("é", config.MaxDisplayNameChars), strings.Repeat("é", config.MaxDisplayNameChars)},
		{strings.Repeat("é", config.MaxDisplayNameChars+1), ""},
		{"", ""},
		{"two\nlines", ""}, // one line: no line feed, unlike a post
		{"tab\there", ""},
		{"evil\u202e", ""}, // reorders what follows it
		{"mark\u200f", ""},
		{"iso\u2066late", ""},
		{"bad\xff", ""},
		{"\u200b\u2060", ""}, // nothing visible: a name no one can see or click
		{"\u2800\u2800", ""},
		{"\u3164", ""},         // the Hangul filler
		{"a\u200b", "a\u200b"}, // one visible character is enough
		// Combining marks: MaxCombiningMarksPerChar on each visible
		// character, none without one.
		{"a" + strings.Repeat("\u0301", config.MaxCombiningMarksPerChar), "a" + strings.Repeat("\u0301", config.MaxCombiningMarksPerChar)},
		{"a" + strings.Repeat("\u0301", config.MaxCombiningMarksPerChar+1), ""},
		{"a" + strings.Repeat("\u0301", 40), ""},
		{strings.Repeat("a\u0301\u0323", 10), strings.Repeat("a\u0301\u0323", 10)},
		{"Nguy\u1ec5n", "Nguy\u1ec5n"}, // precomposed
		{"Nguye\u0302\u0303n", "Nguye\u0302\u0303n"},
		{"1\ufe0f\u20e3", "1\ufe0f\u20e3"}, // a keycap emoji
		{"\u0301a", ""},                    // a mark with nothing before it
		{"x \u0301", ""},                   // on a space
		{"x\u200b\u0301", ""},              // on a zero-width space
	} {
		got, err := DisplayName(tc.name)
		switch {
		case tc.want == "" && !refused(err):
			t.Errorf("DisplayName(%q) = %q, %v: want BAD_USER_INPUT", tc.name, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("DisplayName(%q) = %q, %v: want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestListName: a list's name keeps a display name's character rules at
// up to MaxListNameChars code points.
func TestListName(t *testing.T) {
	for _, tc := range []struct {
		name, want string // want "" for refused
	}{
		{"  Friends  ", "Friends"},
		{strings.Repeat("é", config.MaxListNameChars), strings.Repeat("é", config.MaxListNameChars)},
		{strings.Repeat("é", config.MaxListNameChars+1), ""},
		{"   ", ""},
		{"two\nlines", ""},
		{"evil\u202e", ""},
		{"\u200b", ""},
	} {
		got, err := ListName(tc.name)
		switch {
		case tc.want == "" && !refused(err):
			t.Errorf("ListName(%q) = %q, %v: want BAD_USER_INPUT", tc.name, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("ListName(%q) = %q, %v: want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestUsername(t *testing.T) {
	for _, tc := range []struct {
		username string
		ok       bool
	}{
		{"ada_99", true},
		{strings.Repeat("a", config.MinUsernameChars), true},
		{strings.Repeat("a", config.MaxUsernameChars), true},
		{strings.Repeat("a", config.MinUsernameChars-1), false},
		{strings.Repeat("a", config.MaxUsernameChars+1), false},
		{"has space", false},
		{"dash-ed", false},
		{"émile", false},
	} {
		if err := Username(tc.username); tc.ok != (err == nil) || (!tc.ok && !refused(err)) {
			t.Errorf("Username(%q) = %v, want ok %v", tc.username, err, tc.ok)
		}
	}
}

func TestBio(t *testing.T) {
	for _, tc := range []struct {
		bio string
		ok  bool
	}{
		{"", true}, // clears it
		{"two\nlines\tand a tab", true},
		{strings.Repeat("b", config.MaxBioChars), true},
		{strings.Repeat("b", config.MaxBioChars+1), false},
		{"cr\r", false},
		{"bad\xff", false},
	} {
		if err := Bio(tc.bio); tc.ok != (err == nil) || (!tc.ok && !refused(err)) {
			t.Errorf("Bio(%q) = %v, want ok %v", tc.bio, err, tc.ok)
		}
	}
}
