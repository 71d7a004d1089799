// Package text says what a user may write for others to read: usernames,
// display names, post bodies and bios. Each rule answers BAD_USER_INPUT
// with a message that says what is wrong and where; none repairs or drops
// what it refuses, so that what is stored is what the user sent.
package text

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"feedservice/feed/config"
	"feedservice/internal/apperr"
)

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// PostBody returns body trimmed of surrounding white space, if what
// remains is text a post may hold: 1 to MaxPostChars code points of valid
// UTF-8 with no control characters but line feed and tab, at least one of
// them visible. Any script,
// combining marks, right-to-left text and emoji are text. Invalid UTF-8 and
// the other controls (NUL, carriage return, escape, DEL, the C1 range) are
// refused, not repaired or dropped, so that what is stored is byte for byte
// what the author sent, and no reader's terminal or log gets a control.
func PostBody(body string) (string, error) {
	body = strings.TrimSpace(body)
	if !utf8.ValidString(body) {
		return "", apperr.BadInput("the post body is not valid UTF-8 text")
	}
	if err := refuseControls("the post body", body); err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(body); n == 0 || n > config.MaxPostChars {
		return "", apperr.BadInput("a post is 1 to %d characters after trimming spaces; this one has %d", config.MaxPostChars, n)
	}
	if !strings.ContainsFunc(body, visible) {
		return "", apperr.BadInput("a post needs at least one visible character; this one holds only white space and invisible characters (such as zero-width spaces, joiners or variation selectors)")
	}
	return body, nil
}

// visible says whether r shows as something on a page: not white space,
// not a format character (zero-width space, joiners, U+2060, the byte
// order mark, the bidirectional controls: Unicode's category Cf), not a
// variation selector, not one of the other characters Unicode says to
// draw as nothing (Other_Default_Ignorable_Code_Point: the Hangul fillers,
// U+034F), and not the blank braille pattern U+2800, which shows as a
// space.
func visible(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) && r != '\u2800'
}

// refuseControls answers BAD_USER_INPUT when text, valid UTF-8 that what
// names, holds a control character other than line feed and tab. It is the
// rule of the texts a user writes for others to read at length: post
// bodies and bios, where line feed and tab are text, not terminal
// commands. Carriage return, NUL, escape, DEL and the C1 range are
// refused. Display names are stricter (DisplayName): one line.
func refuseControls(what, text string) error {
	n := 0
	for _, r := range text {
		n++
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return apperr.BadInput("%s holds the control character %U at character %d; of the controls only line feed (\\n) and tab are allowed", what, r, n)
		}
	}
	return nil
}

// Username answers BAD_USER_INPUT unless username is MinUsernameChars to
// MaxUsernameChars ASCII letters, digits or underscores.
func Username(username string) error {
	if n := len(username); n < config.MinUsernameChars || n > config.MaxUsernameChars || !usernamePattern.MatchString(username) {
		return apperr.BadInput("a username is %d to %d letters, digits or underscores", config.MinUsernameChars, config.MaxUsernameChars)
	}
	return nil
}

// DisplayName returns name trimmed of surrounding white space, if
// what remains may name a user: 1 to MaxDisplayNameChars code points of
// valid UTF-8, on one line (no control characters at all, line feed and
// tab included, unlike a post or a bio), without bidirectional
// formatting characters, at least one of them visible (as a post's), and
// at most MaxCombiningMarksPerChar combining marks on each visible
// character (none on an invisible one, nor at the start).
func DisplayName(name string) (string, error) {
	return oneLineName("display name", name, config.MaxDisplayNameChars)
}

// ListName returns a list's name trimmed, if what remains keeps a display
// name's rules at up to MaxListNameChars code points: a list's name is
// shown as a title beside other text, as a user's is.
func ListName(name string) (string, error) {
	return oneLineName("list name", name, config.MaxListNameChars)
}

// oneLineName is DisplayName's check for a name of what, at most max code
// points.
func oneLineName(what, name string, max int) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > max || !utf8.ValidString(name) {
		return "", apperr.BadInput("a %s is 1 to %d characters", what, max)
	}
	n, marks, base := 0, 0, false // marks stacked on the last character, and whether it shows
	for _, r := range name {
		n++
		if unicode.Is(unicode.M, r) {
			marks++
		} else {
			marks, base = 0, visible(r)
		}
		switch {
		case marks > 0 && !base:
			return "", apperr.BadInput("the display name holds the combining mark %U at character %d without a visible character before it to carry it", r, n)
		case marks > config.MaxCombiningMarksPerChar:
			return "", apperr.BadInput("the display name stacks more than %d combining marks on one character (at character %d): they would draw over the text around the name", config.MaxCombiningMarksPerChar, n)
		case unicode.IsControl(r):
			return "", apperr.BadInput("the %s holds the control character %U at character %d: a %s is one line of text, without line feeds, tabs or other control characters", what, r, n, what)
		case bidiControl(r):
			return "", apperr.BadInput("the %s holds the bidirectional formatting character %U at character %d: a %s may not reorder the text around it (U+061C, U+200E, U+200F, U+202A to U+202E and U+2066 to U+2069 are refused)", what, r, n, what)
		}
	}
	if !strings.ContainsFunc(name, visible) {
		return "", apperr.BadInput("a %s needs at least one visible character; this one holds only white space and invisible characters (such as zero-width spaces, joiners or the blank braille pattern)", what)
	}
	return name, nil
}

// bidiControl says whether r is one of Unicode's bidirectional formatting
// characters: the embeddings and overrides U+202A to U+202E, the isolates
// U+2066 to U+2069, and the marks U+200E, U+200F and U+061C. In a name
// shown beside other text they can reverse what follows it (a name ending
// in U+202E turns "posted 2 hours ago" around), so names refuse them.
// Post bodies and bios keep them: right-to-left text needs the marks, and
// a reader sees such a text as a block of its own.
func bidiControl(r rune) bool {
	switch {
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// Bio answers BAD_USER_INPUT unless bio is valid UTF-8 of at most
// MaxBioChars code points without controls but line feed and tab (an empty
// bio clears it).
func Bio(bio string) error {
	if n := utf8.RuneCountInString(bio); n > config.MaxBioChars || !utf8.ValidString(bio) {
		return apperr.BadInput("the bio must be valid text of at most %d characters", config.MaxBioChars)
	}
	return refuseControls("the bio", bio)
}
