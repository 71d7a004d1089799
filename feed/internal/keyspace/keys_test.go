package keyspace

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"feedservice/internal/slot"
	"feedservice/store"
)

var (
	int64Type        = reflect.TypeOf(int64(0))
	intType          = reflect.TypeOf(0)
	relationListType = reflect.TypeOf(store.RelationList(0))
	stringType       = reflect.TypeOf("")
)

// notUserKeys are the methods that take an id but name no user's key.
var notUserKeys = map[string]bool{
	"CachedPost": true, // a post's, without hash tag: a batch reads many posts, one GET each
}

// named is a key and the call that named it.
type named struct{ call, key string }

// userKeys is every key and channel of user id that Keys names, found by
// the methods' signatures, so that a key added later is checked too.
func userKeys(t *testing.T, k Keys, id int64) []named {
	t.Helper()
	var out []named
	v := reflect.ValueOf(k)
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		typ := m.Type()
		if typ.NumOut() != 1 || typ.Out(0) != stringType || notUserKeys[name] {
			continue
		}
		switch {
		case typ.NumIn() == 1 && typ.In(0) == int64Type:
			out = append(out, named{fmt.Sprintf("%s(%d)", name, id), m.Call([]reflect.Value{reflect.ValueOf(id)})[0].String()})
		case typ.NumIn() == 2 && typ.In(0) == relationListType && typ.In(1) == int64Type:
			for _, list := range []store.RelationList{store.FollowersList, store.FollowingList} {
				key := m.Call([]reflect.Value{reflect.ValueOf(list), reflect.ValueOf(id)})[0].String()
				out = append(out, named{fmt.Sprintf("%s(%d, %d)", name, list, id), key})
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d keys of a user: the signatures of Keys' methods changed", len(out))
	}
	return out
}

// allKeys is every key and channel Keys names for ids 1 and 2.
func allKeys(t *testing.T, k Keys) []named {
	t.Helper()
	out := append(userKeys(t, k, 1), userKeys(t, k, 2)...)
	v := reflect.ValueOf(k)
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		typ := m.Type()
		if typ.NumOut() != 1 || typ.Out(0) != stringType || name == "Prefix" {
			continue
		}
		switch {
		case typ.NumIn() == 0:
			out = append(out, named{name, m.Call(nil)[0].String()})
		case typ.NumIn() == 1 && typ.In(0) == intType:
			for _, n := range []int{1, 2} {
				out = append(out, named{fmt.Sprintf("%s(%d)", name, n), m.Call([]reflect.Value{reflect.ValueOf(n)})[0].String()})
			}
		case notUserKeys[name]:
			for _, id := range []int64{1, 2} {
				out = append(out, named{fmt.Sprintf("%s(%d)", name, id), m.Call([]reflect.Value{reflect.ValueOf(id)})[0].String()})
			}
		}
	}
	return out
}

// The keys of one user share a Redis Cluster slot, so that a script or a
// RENAME over them (an inbox and its temp, sources and followee set) runs
// on a cluster.
func TestKeysOfOneUserShareASlot(t *testing.T) {
	for _, prefix := range []string{"", "feed:", "tenant-7:"} {
		k := New(prefix)
		for _, id := range []int64{1, 42, 1 << 40} {
			keys := userKeys(t, k, id)
			want := slot.Of(keys[0].key)
			for _, nk := range keys[1:] {
				if got := slot.Of(nk.key); got != want {
					t.Errorf("prefix %q, user %d: %s %q is in slot %d, %s %q in slot %d",
						prefix, id, nk.call, nk.key, got, keys[0].call, keys[0].key, want)
				}
			}
		}
	}
}

// Users are spread over the slots, not all in one: each has a tag of its own.
func TestUsersSpreadOverSlots(t *testing.T) {
	k := New("feed:")
	slots := map[int]bool{}
	for id := int64(1); id <= 1000; id++ {
		slots[slot.Of(k.Inbox(id))] = true
	}
	if len(slots) < 900 {
		t.Errorf("the inboxes of 1000 users fall in %d slots, want them spread", len(slots))
	}
	if slot.Of(k.CachedPost(1)) == slot.Of(k.CachedPost(2)) && slot.Of(k.CachedPost(2)) == slot.Of(k.CachedPost(3)) {
		t.Error("cached posts share a slot: a post's key has a hash tag")
	}
}

// Every key and channel starts with the prefix, and no two name the same
// thing: two settings' or two users' keys never collide.
func TestKeysStartWithThePrefixAndAreDistinct(t *testing.T) {
	k := New("tenant-7:")
	if k.Prefix() != "tenant-7:" {
		t.Errorf("Prefix() = %q", k.Prefix())
	}
	seen := map[string]string{}
	for _, nk := range allKeys(t, k) {
		if !strings.HasPrefix(nk.key, "tenant-7:") {
			t.Errorf("%s = %q does not start with the prefix", nk.call, nk.key)
		}
		if other, ok := seen[nk.key]; ok {
			t.Errorf("%s and %s both name %q", other, nk.call, nk.key)
		}
		seen[nk.key] = nk.call
	}
	for _, nk := range allKeys(t, New("tenant-8:")) {
		if other, ok := seen[nk.key]; ok {
			t.Errorf("%s under another prefix names %q, %s's key", nk.call, nk.key, other)
		}
	}
}

func TestAuthorOfChannelReadsAuthorChannel(t *testing.T) {
	k := New("feed:")
	for _, id := range []int64{1, 42, 1 << 53} {
		if got, ok := k.AuthorOfChannel(k.AuthorChannel(id)); !ok || got != id {
			t.Errorf("AuthorOfChannel(AuthorChannel(%d)) = (%d, %v)", id, got, ok)
		}
	}
	for _, channel := range []string{
		New("other:").AuthorChannel(5), // another prefix's
		New("").AuthorChannel(5),       // no prefix
		k.ReaderChannel(5),
		k.CelebritiesChannel(),
		"feed:author:{u5",
		"feed:author:{u}",
		"feed:author:{uabc}",
		"feed:author:{u5}x",
		"feed:author:u5",
		"",
	} {
		if got, ok := k.AuthorOfChannel(channel); ok {
			t.Errorf("AuthorOfChannel(%q) = (%d, true), want no author", channel, got)
		}
	}
}
