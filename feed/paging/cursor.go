package paging

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"feedservice/internal/apperr"
)

// CursorKind names the list a cursor belongs to, so that a cursor of one
// list is refused by another instead of paging it from a wrong place.
type CursorKind string

const (
	CursorFeed      CursorKind = "feed"
	CursorTimeline  CursorKind = "timeline"
	CursorFollowers CursorKind = "followers"
	CursorFollowing CursorKind = "following"
	CursorBlocked   CursorKind = "blocked"
	CursorMuted     CursorKind = "muted"
	CursorLists     CursorKind = "lists"
	CursorMembers   CursorKind = "members"
	CursorRequests  CursorKind = "requests"
)

var CursorKinds = []CursorKind{CursorFeed, CursorTimeline, CursorFollowers, CursorFollowing, CursorBlocked, CursorMuted, CursorLists, CursorMembers, CursorRequests}

// listFeedPrefix begins the kind of a list feed's cursors, which names its
// list: a cursor of one list's feed would place the page of another at a
// key of the wrong feed, so each list's feed is a kind of its own.
const listFeedPrefix = "list-"

// CursorListFeed is the kind of the cursors of list listID's feed.
func CursorListFeed(listID int64) CursorKind {
	return CursorKind(listFeedPrefix + strconv.FormatInt(listID, 10))
}

// known says whether k is a kind some list of the API pages by.
func (k CursorKind) known() bool {
	if slices.Contains(CursorKinds, k) {
		return true
	}
	id, ok := strings.CutPrefix(string(k), listFeedPrefix)
	n, err := strconv.ParseInt(id, 10, 64)
	return ok && err == nil && n > 0 && string(CursorListFeed(n)) == string(k)
}

// describe names the list of kind k in a refusal.
func (k CursorKind) describe() string {
	if strings.HasPrefix(string(k), listFeedPrefix) {
		return "the feed of a list"
	}
	return "a " + string(k) + " list"
}

// A cursor is base64url("kind:key"), where key is the entry's sort key (a
// post id, or a follow's id). It holds no reference to a stored row, so it
// stays valid after its entry is deleted: paging resumes from the key.
//
// It builds the cursor in buffers on the stack: a page encodes one per
// edge, and the string is its only allocation.
func EncodeCursor(kind CursorKind, key int64) string {
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

// MaxCursorBytes is the longest cursor DecodeCursor reads: the longest
// EncodeCursor makes ("list-" and 19 digits, ":" and 19 digits) is 59
// bytes, and a longer one is refused before it is decoded.
const MaxCursorBytes = 64

// DecodeCursor accepts only the spelling EncodeCursor gives: base64 skips
// line breaks and ignores spare bits, and ParseInt takes "+5" and "05", so
// without the check one place would have many cursors.
func DecodeCursor(kind CursorKind, cursor string) (int64, error) {
	if len(cursor) > MaxCursorBytes {
		return 0, apperr.BadInput("the cursor %s is not one this API handed out", apperr.Quote(cursor))
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	k, num, _ := strings.Cut(string(raw), ":")
	key, keyErr := strconv.ParseInt(num, 10, 64)
	if err != nil || keyErr != nil || key <= 0 || !CursorKind(k).known() || EncodeCursor(CursorKind(k), key) != cursor {
		return 0, apperr.BadInput("the cursor %s is not one this API handed out", apperr.Quote(cursor))
	}
	if CursorKind(k) != kind {
		if CursorKind(k).known() && kind.known() && CursorKind(k).describe() == kind.describe() {
			return 0, apperr.BadInput("that cursor belongs to the feed of another list")
		}
		return 0, apperr.BadInput("that cursor belongs to %s, not to %s", CursorKind(k).describe(), kind.describe())
	}
	return key, nil
}
