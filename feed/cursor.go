package feed

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
)

// cursorKind names the list a cursor belongs to, so that a cursor of one
// list is refused by another instead of paging it from a wrong place.
type cursorKind string

const (
	cursorFeed      cursorKind = "feed"
	cursorTimeline  cursorKind = "timeline"
	cursorFollowers cursorKind = "followers"
	cursorFollowing cursorKind = "following"
)

var cursorKinds = []cursorKind{cursorFeed, cursorTimeline, cursorFollowers, cursorFollowing}

// A cursor is base64url("kind:key"), where key is the entry's sort key (a
// post id, or a follow's id). It holds no reference to a stored row, so it
// stays valid after its entry is deleted: paging resumes from the key.
//
// It builds the cursor in buffers on the stack: a page encodes one per
// edge, and the string is its only allocation.
func encodeCursor(kind cursorKind, key int64) string {
	var raw [32]byte
	b := append(raw[:0], kind...)
	b = append(b, ':')
	b = strconv.AppendInt(b, key, 10)
	var enc [48]byte
	out := enc[:0]
	if n := base64.RawURLEncoding.EncodedLen(len(b)); n <= len(enc) {
		out = enc[:n]
	} else {
		out = make([]byte, n)
	}
	base64.RawURLEncoding.Encode(out, b)
	return string(out)
}

// decodeCursor accepts only the spelling encodeCursor gives: base64 skips
// line breaks and ignores spare bits, and ParseInt takes "+5" and "05", so
// without the check one place would have many cursors.
func decodeCursor(kind cursorKind, cursor string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	k, num, _ := strings.Cut(string(raw), ":")
	key, keyErr := strconv.ParseInt(num, 10, 64)
	if err != nil || keyErr != nil || key <= 0 || !slices.Contains(cursorKinds, cursorKind(k)) || encodeCursor(cursorKind(k), key) != cursor {
		return 0, BadInput("the cursor %q is not one this API handed out", cursor)
	}
	if cursorKind(k) != kind {
		return 0, BadInput("that cursor belongs to a %s list, not to a %s list", k, kind)
	}
	return key, nil
}
