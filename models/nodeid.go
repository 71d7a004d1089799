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
)

// ErrBadNodeID is returned for a string that is not a global node ID.
var ErrBadNodeID = errors.New("not a valid id")

// NodeID encodes a global node ID: base64url("Kind:id"), opaque to clients.
func NodeID(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10)))
}

// ParseNodeID decodes a global node ID into its kind and id. It accepts
// only the spelling NodeID gives (base64 skips line breaks and ignores spare
// bits, and ParseInt takes "+5"), so that a node has one ID: clients cache
// and compare nodes by it.
func ParseNodeID(s string) (kind string, id int64, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, ErrBadNodeID
	}
	kind, num, ok := strings.Cut(string(raw), ":")
	if !ok || (kind != KindUser && kind != KindPost) {
		return "", 0, ErrBadNodeID
	}
	id, err = strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 || NodeID(kind, id) != s {
		return "", 0, ErrBadNodeID
	}
	return kind, id, nil
}
