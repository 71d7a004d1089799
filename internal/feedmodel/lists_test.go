package feedmodel

import (
	"slices"
	"testing"
	"time"
)

// TestModelLists: a list's feed is the owner's feed through its members
// alone; a member must be followed; an unfollow or a block takes them
// out; a mute hides as in the feed.
func TestModelLists(t *testing.T) {
	var zero time.Time
	m := New(Limits{MaxReposters: 10, MaxUnreadCount: 999})
	for _, u := range []string{"r", "a", "b", "c"} {
		m.SignUp(u, u)
	}
	m.Follow("r", "a")
	m.Follow("r", "b")
	m.CreateList("r", "L")
	if !m.AddToList("r", "L", "a") || m.AddToList("r", "L", "c") {
		t.Fatal("a followee is taken, a user not followed refused")
	}
	m.AddPost("a", "a1", zero)
	m.AddPost("b", "b1", zero)
	m.AddPost("c", "c1", zero)
	m.Repost("b", "bA1", "a1", zero)
	m.Repost("a", "aC1", "c1", zero)
	got := m.ListFeed("L")
	if want := []string{"c1@aC1 by a", "a1@a1"}; !slices.Equal(listEntries(got), want) {
		t.Fatalf("list feed %v, want %v (b's repost of a1 is not a member's)", listEntries(got), want)
	}
	m.Mute("r", "c")
	if got := listEntries(m.ListFeed("L")); !slices.Equal(got, []string{"a1@a1"}) {
		t.Fatalf("after muting c: %v", got)
	}
	m.Block("a", "r")
	if len(m.ListMembers("L")) != 0 || len(m.ListFeed("L")) != 0 {
		t.Fatalf("after a blocked r: members %v feed %v, want none", m.ListMembers("L"), m.ListFeed("L"))
	}
}

func listEntries(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := e.PostID + "@" + e.Arrival
		if len(e.Reposters) > 0 {
			s += " by " + e.Reposters[0]
		}
		out = append(out, s)
	}
	return out
}
