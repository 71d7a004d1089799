package apperr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteKeepsShortInputWhole(t *testing.T) {
	for _, s := range []string{"", "abc", strings.Repeat("x", MaxQuotedBytes)} {
		if got, want := Quote(s), `"`+s+`"`; got != want {
			t.Errorf("Quote(%d bytes) = %s, want %s", len(s), got, want)
		}
	}
}

func TestQuoteCutsLongInput(t *testing.T) {
	long := strings.Repeat("x", MaxQuotedBytes+1)
	if got, want := Quote(long), `"`+long[:MaxQuotedBytes]+`"… (65 bytes)`; got != want {
		t.Errorf("Quote(65 bytes) = %s, want %s", got, want)
	}
	huge := strings.Repeat("é", 1_000_000) // 2 bytes each: the cut falls inside one
	got := Quote(huge)
	if len(got) > MaxQuotedBytes+32 {
		t.Errorf("Quote of %d bytes is %d bytes long", len(huge), len(got))
	}
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "… (2000000 bytes)") {
		t.Errorf("Quote of a long multibyte input = %q", got)
	}
}
