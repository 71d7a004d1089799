package models

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// Node kinds, the prefix of a global node ID.
const (
	KindUser = "User"
	KindPost = "Post"
	KindList = "List"
)

// ErrBadNodeID is returned for a string that is not a global node ID.
var ErrBadNodeID = errors.New("not a valid id")

// MaxNodeIDBytes is the longest string ParseNodeID reads: the longest id
// NodeID makes ("Post:" and 19 digits) is 32 bytes, and a longer one is
// refused before it is decoded.
const MaxNodeIDBytes = 64

// NodeID encodes a global node ID: base64url("Kind:id"), opaque to clients.
func NodeID(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10)))
}

// ParseNodeID decodes a global node ID into its kind and id. It accepts
// only the spelling NodeID gives (base64 skips line breaks and ignores spare
// bits, and ParseInt takes "+5"), so that a node has one ID: clients cache
// and compare nodes by it.
func ParseNodeID(s string) (kind string, id int64, err error) {
	if len(s) > MaxNodeIDBytes {
		return "", 0, ErrBadNodeID
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, ErrBadNodeID
	}
	kind, num, ok := strings.Cut(string(raw), ":")
	if !ok || (kind != KindUser && kind != KindPost && kind != KindList) {
		return "", 0, ErrBadNodeID
	}
	id, err = strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 || NodeID(kind, id) != s {
		return "", 0, ErrBadNodeID
	}
	return kind, id, nil
}
