// Package livemsg holds the messages the engine puts on its Redis pub/sub
// channels, each with its one encoder and parser, and their publishing.
// The hub (package live) parses what every publisher here encodes.
//
// The channels and what travels on them (see keyspace.Keys):
//
//   - a reader's channel: a Message, of any verb;
//   - an author's channel: a Message, add or change;
//   - the celebrities' channel: a Message, change;
//   - the inboxes channel: a Batch, an add or a change for several readers;
//   - the invalidate channel: an Invalidation.
//
// The inbox scripts publish "add <post> <key>" and "change" on a reader's
// channel from Lua (package inbox): the same words as Message.Encode
// (TestParseLuaWords).
package livemsg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Verb is what a Message says.
type Verb uint8

// The verbs of a Message, with their words on the wire.
const (
	// VerbChange: something changed (an entry moved or left, the read
	// marker moved): recount. "change".
	VerbChange Verb = iota + 1
	// VerbAdd: Add.Post entered a feed at Add.Key. "add <post> <key>".
	VerbAdd
	// VerbFollow and VerbUnfollow: the reader followed or unfollowed
	// User, which changes the authors they hear. "follow <user>",
	// "unfollow <user>".
	VerbFollow
	VerbUnfollow
	// VerbHide: a block or mute (or its end) changed what the reader sees
	// of User, or of several users (User 0: the deferred resets of
	// unblocks). "hide <user>", "hide".
	VerbHide
)

// String is the verb's word on the wire.
func (v Verb) String() string {
	switch v {
	case VerbChange:
		return "change"
	case VerbAdd:
		return "add"
	case VerbFollow:
		return "follow"
	case VerbUnfollow:
		return "unfollow"
	case VerbHide:
		return "hide"
	}
	return "verb(" + strconv.Itoa(int(v)) + ")"
}

// Add says that Post entered a feed at Key.
type Add struct{ Post, Key int64 }

// Message is a message of a reader's, an author's or the celebrities'
// channel.
type Message struct {
	Verb Verb
	Add  Add   // VerbAdd's entry
	User int64 // VerbFollow's, VerbUnfollow's and VerbHide's other user
}

// Change is the message that something changed: listeners recount.
func Change() Message { return Message{Verb: VerbChange} }

// Added is the message that an entry entered a feed.
func Added(add Add) Message { return Message{Verb: VerbAdd, Add: add} }

// Followed is the message that the reader followed user (follows) or
// unfollowed them.
func Followed(user int64, follows bool) Message {
	if follows {
		return Message{Verb: VerbFollow, User: user}
	}
	return Message{Verb: VerbUnfollow, User: user}
}

// Hid is the message that a block or mute changed what the reader sees of
// user; user 0 names no one (several users' deferred resets).
func Hid(user int64) Message { return Message{Verb: VerbHide, User: user} }

// ChangesAuthors says whether the message may change whose channels the
// reader must hear (a follow change, a block or mute).
func (m Message) ChangesAuthors() bool {
	return m.Verb == VerbFollow || m.Verb == VerbUnfollow || m.Verb == VerbHide
}

// Encode is the message as it travels: "change", "add 5 7", "follow 3",
// "unfollow 3", "hide 3", "hide".
func (m Message) Encode() string {
	b := m.appendTo(nil)
	return string(b)
}

func (m Message) appendTo(b []byte) []byte {
	b = append(b, m.Verb.String()...)
	switch m.Verb {
	case VerbAdd:
		b = appendIDs(b, m.Add.Post, m.Add.Key)
	case VerbFollow, VerbUnfollow:
		b = appendIDs(b, m.User)
	case VerbHide:
		if m.User != 0 {
			b = appendIDs(b, m.User)
		}
	}
	return b
}

// ErrMalformed is what a parser returns for a payload it cannot read.
var ErrMalformed = errors.New("malformed live message")

// ParseMessage reads a Message that Encode wrote. Anything else is an
// error wrapping ErrMalformed.
func ParseMessage(payload string) (Message, error) {
	fields := strings.Fields(payload)
	m, rest, err := parseMessage(fields)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%w: %d words too many in %q", ErrMalformed, len(rest), payload)
	}
	if err != nil {
		return Message{}, err
	}
	return m, nil
}

// parseMessage reads a Message from the first of fields (all of them for
// a hide, whose user is optional) and returns the fields after it.
func parseMessage(fields []string) (Message, []string, error) {
	if len(fields) == 0 {
		return Message{}, nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	var m Message
	for v := VerbChange; v <= VerbHide; v++ {
		if fields[0] == v.String() {
			m.Verb = v
		}
	}
	need := 0 // the ids after the verb
	switch m.Verb {
	case 0:
		return Message{}, nil, fmt.Errorf("%w: unknown verb %q", ErrMalformed, fields[0])
	case VerbAdd:
		need = 2
	case VerbFollow, VerbUnfollow:
		need = 1
	case VerbHide:
		need = min(len(fields)-1, 1) // its user is optional
	}
	ids, err := parseIDs(fields[1:], need)
	if err != nil {
		return Message{}, nil, fmt.Errorf("%s: %w", m.Verb, err)
	}
	switch m.Verb {
	case VerbAdd:
		m.Add = Add{Post: ids[0], Key: ids[1]}
	case VerbFollow, VerbUnfollow, VerbHide:
		if need == 1 {
			m.User = ids[0]
		}
	}
	return m, fields[1+need:], nil
}

// Batch is a message of the inboxes channel: an add or a change for each
// of Readers, in one message instead of one per reader's channel. Its
// encoding is the Message's followed by the readers: "add 5 7 1 2 3",
// "change 1 2".
type Batch struct {
	Message Message // VerbAdd or VerbChange
	Readers []int64
}

// Encode is the batch as it travels.
func (b Batch) Encode() string {
	out := make([]byte, 0, 32+len(b.Readers)*17)
	out = b.Message.appendTo(out)
	out = appendIDs(out, b.Readers...)
	return string(out)
}

// ParseBatch reads a Batch that Encode wrote: an add or a change and at
// least one reader. Anything else is an error wrapping ErrMalformed.
func ParseBatch(payload string) (Batch, error) {
	fields := strings.Fields(payload)
	m, rest, err := parseMessage(fields)
	if err != nil {
		return Batch{}, fmt.Errorf("batch: %w", err)
	}
	if m.Verb != VerbAdd && m.Verb != VerbChange {
		return Batch{}, fmt.Errorf("%w: batch of %s", ErrMalformed, m.Verb)
	}
	if len(rest) == 0 {
		return Batch{}, fmt.Errorf("%w: batch for no reader", ErrMalformed)
	}
	readers, err := parseIDs(rest, len(rest))
	if err != nil {
		return Batch{}, fmt.Errorf("batch readers: %w", err)
	}
	return Batch{Message: m, Readers: readers}, nil
}

// Invalidation is a message of the invalidate channel: drop IDs from every
// instance's local tier of Kind (a cache kind, or KindLogOut), "user 1 2
// 3"; or, with Sync set, the mark a
// SyncInvalidations waits for, "sync <token>".
type Invalidation struct {
	Kind string
	IDs  []int64
	Sync string
}

// KindLogOut is the Invalidation kind of log-outs: "logout <user id>".
// Every instance closes those users' websockets.
const KindLogOut = "logout"

// syncWord starts the mark of SyncInvalidations; no cache kind may be
// named so.
const syncWord = "sync"

// Encode is the invalidation as it travels.
func (i Invalidation) Encode() string {
	if i.Sync != "" {
		return syncWord + " " + i.Sync
	}
	return string(appendIDs([]byte(i.Kind), i.IDs...))
}

// ParseInvalidation reads an Invalidation that Encode wrote: a sync mark,
// or a kind and at least one id. Anything else is an error wrapping
// ErrMalformed.
func ParseInvalidation(payload string) (Invalidation, error) {
	fields := strings.Fields(payload)
	switch {
	case len(fields) == 0:
		return Invalidation{}, fmt.Errorf("%w: empty invalidation", ErrMalformed)
	case fields[0] == syncWord:
		if len(fields) != 2 {
			return Invalidation{}, fmt.Errorf("%w: sync mark of %d words", ErrMalformed, len(fields))
		}
		return Invalidation{Sync: fields[1]}, nil
	case len(fields) == 1:
		return Invalidation{}, fmt.Errorf("%w: invalidation of %s names no id", ErrMalformed, fields[0])
	}
	ids, err := parseIDs(fields[1:], len(fields)-1)
	if err != nil {
		return Invalidation{}, fmt.Errorf("invalidation of %s: %w", fields[0], err)
	}
	return Invalidation{Kind: fields[0], IDs: ids}, nil
}

// appendIDs appends each id to b after a space.
func appendIDs(b []byte, ids ...int64) []byte {
	for _, id := range ids {
		b = append(b, ' ')
		b = strconv.AppendInt(b, id, 10)
	}
	return b
}

// parseIDs reads the first n of fields as ids.
func parseIDs(fields []string, n int) ([]int64, error) {
	if len(fields) < n {
		return nil, fmt.Errorf("%w: %d ids, want %d", ErrMalformed, len(fields), n)
	}
	ids := make([]int64, n)
	for i, f := range fields[:n] {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: id %q", ErrMalformed, f)
		}
		ids[i] = id
	}
	return ids, nil
}
