package livemsg

import (
	"errors"
	"reflect"
	"testing"
)

func TestMessageRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		m    Message
		wire string
	}{
		{Change(), "change"},
		{Added(Add{Post: 375522246430720, Key: 375522246430721}), "add 375522246430720 375522246430721"},
		{Followed(7, true), "follow 7"},
		{Followed(7, false), "unfollow 7"},
		{Hid(9), "hide 9"},
		{Hid(0), "hide"},
	} {
		if got := tc.m.Encode(); got != tc.wire {
			t.Errorf("%+v encodes as %q, want %q", tc.m, got, tc.wire)
		}
		back, err := ParseMessage(tc.wire)
		if err != nil || back != tc.m {
			t.Errorf("%q parses as %+v, %v; want %+v", tc.wire, back, err, tc.m)
		}
	}
}

// TestParseLuaWords reads what the inbox scripts publish from Lua on a
// reader's channel ('add ' .. o .. ' ' .. key, and 'change'), whose ids
// stay strings there.
func TestParseLuaWords(t *testing.T) {
	m, err := ParseMessage("add 375522246430720 375522246430999")
	if err != nil || m != Added(Add{Post: 375522246430720, Key: 375522246430999}) {
		t.Errorf("Lua's add parses as %+v, %v", m, err)
	}
	if m, err := ParseMessage("change"); err != nil || m != Change() {
		t.Errorf("Lua's change parses as %+v, %v", m, err)
	}
}

func TestMessageMalformed(t *testing.T) {
	for _, payload := range []string{
		"", " ", "chnage", "add", "add 5", "add 5 x", "add 5 7 9", "follow", "follow x",
		"unfollow 1 2", "hide x", "hide 1 2", "change 3", "ADD 5 7", "add 5 99999999999999999999",
	} {
		m, err := ParseMessage(payload)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%q parses as %+v, %v; want ErrMalformed", payload, m, err)
		}
	}
}

func TestChangesAuthors(t *testing.T) {
	for m, want := range map[Message]bool{
		Change(): false, Added(Add{1, 2}): false, Followed(3, true): true, Followed(3, false): true, Hid(4): true, Hid(0): true,
	} {
		if got := m.ChangesAuthors(); got != want {
			t.Errorf("%s: ChangesAuthors %v, want %v", m.Encode(), got, want)
		}
	}
}

func TestBatchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		b    Batch
		wire string
	}{
		{Batch{Added(Add{Post: 5, Key: 7}), []int64{1, 2, 3}}, "add 5 7 1 2 3"},
		{Batch{Change(), []int64{4}}, "change 4"},
	} {
		if got := tc.b.Encode(); got != tc.wire {
			t.Errorf("%+v encodes as %q, want %q", tc.b, got, tc.wire)
		}
		back, err := ParseBatch(tc.wire)
		if err != nil || !reflect.DeepEqual(back, tc.b) {
			t.Errorf("%q parses as %+v, %v; want %+v", tc.wire, back, err, tc.b)
		}
	}
}

func TestBatchMalformed(t *testing.T) {
	for _, payload := range []string{
		"", "add 5 7", "change", "add 5 x 1", "add 5 7 1 x", "change 1 two", "hide 3 1", "follow 3 1", "junk 1 2",
	} {
		b, err := ParseBatch(payload)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%q parses as %+v, %v; want ErrMalformed", payload, b, err)
		}
	}
}

func TestInvalidationRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		i    Invalidation
		wire string
	}{
		{Invalidation{Kind: "user", IDs: []int64{1, 2, 3}}, "user 1 2 3"},
		{Invalidation{Kind: KindLogOut, IDs: []int64{375522246430720}}, "logout 375522246430720"},
		{Invalidation{Sync: "a1b2c3"}, "sync a1b2c3"},
	} {
		if got := tc.i.Encode(); got != tc.wire {
			t.Errorf("%+v encodes as %q, want %q", tc.i, got, tc.wire)
		}
		back, err := ParseInvalidation(tc.wire)
		if err != nil || !reflect.DeepEqual(back, tc.i) {
			t.Errorf("%q parses as %+v, %v; want %+v", tc.wire, back, err, tc.i)
		}
	}
}

func TestInvalidationMalformed(t *testing.T) {
	for _, payload := range []string{"", "user", "user x", "post 1 2 x", "sync", "sync a b"} {
		i, err := ParseInvalidation(payload)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%q parses as %+v, %v; want ErrMalformed", payload, i, err)
		}
	}
}
