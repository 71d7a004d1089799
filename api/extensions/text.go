package extensions

import (
	"strconv"
	"unicode/utf8"
)

// MalformedTextMessage is the refusal of a request, or of a document, that
// is not Unicode text (IsJSONText).
const MalformedTextMessage = `the request is not Unicode text: it holds bytes that are not UTF-8, or a \u escape of half a surrogate pair`

// IsJSONText reports whether b is UTF-8 in which every \u escape of a
// surrogate is one of a high-low pair. It does not check that b is JSON;
// the decoder does that next.
func IsJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash: not the start of an escape
			continue
		}
		u, ok := hexEscape(b[i:])
		switch {
		case !ok || u < 0xd800 || u > 0xdfff:
		case u >= 0xdc00:
			return false // a low half alone
		default:
			low, ok := hexEscape(b[i+6:])
			if !ok || low < 0xdc00 || low > 0xdfff {
				return false // a high half alone
			}
			i += 6
		}
		i += 5
	}
	return true
}

// hexEscape reads the code unit of a \uXXXX escape at the start of b.
func hexEscape(b []byte) (uint64, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	u, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return u, err == nil
}
