package feedmodel

import (
	"slices"
	"testing"
	"time"
)

// entries renders a feed as "post<-arrival[reposters]" for comparison.
func entries(es []Entry) []string {
	out := []string{}
	for _, e := range es {
		s := e.PostID + "<-" + e.Arrival + "["
		for i, r := range e.Reposters {
			if i > 0 {
				s += " "
			}
			s += r
		}
		out = append(out, s+"]")
	}
	return out
}

func expectFeed(t *testing.T, m *Model, user string, want ...string) {
	t.Helper()
	if got := entries(m.Feed(user)); !slices.Equal(got, want) {
		t.Fatalf("feed of %s:\n got %q\nwant %q", user, got, want)
	}
}

// The rules of the contract, one at a time: an entry once, at its earliest
// arrival; reposters most recent first and capped; the viewer's own posts
// only through a followee's repost; deletions count for nothing.
func TestModelRules(t *testing.T) {
	var zero time.Time
	m := New(Limits{MaxReposters: 2, MaxUnreadCount: 3})
	for _, u := range []string{"ann", "bob", "cat", "dan", "eve"} {
		m.SignUp(u, u)
	}
	m.Follow("ann", "bob")
	m.Follow("ann", "cat")
	m.Follow("ann", "dan")
	m.Follow("ann", "ann") // refused by the server: no effect

	m.AddPost("bob", "p1", zero)
	m.AddPost("eve", "p2", zero)
	m.AddPost("ann", "p3", zero)
	expectFeed(t, m, "ann", "p1<-p1[]") // eve is not followed, ann's own post is not hers to read

	// Reposts of p2 by followees: it arrives with the first one, the
	// reposters are the newest two.
	m.Repost("cat", "r1", "p2", zero)
	m.Repost("dan", "r2", "p2", zero)
	if got := m.Repost("dan", "r3", "r1", zero); got != "r2" {
		t.Fatalf("a second repost of the same original answered %s, want the live r2", got)
	}
	m.Repost("bob", "r4", "r1", zero) // a repost of a repost is of the original
	expectFeed(t, m, "ann", "p2<-r1[bob dan]", "p1<-p1[]")

	// ann's own post reaches her through a followee's repost; a repost of
	// a followed author's post does not move the entry.
	m.Repost("cat", "r5", "p3", zero)
	m.Repost("cat", "r6", "p1", zero)
	expectFeed(t, m, "ann", "p3<-r5[cat]", "p2<-r1[bob dan]", "p1<-p1[cat]")

	// Deleted reposts and posts count for nothing; unfollowing drops what
	// came only through that followee.
	m.Delete("r1")
	m.Delete("p1")
	m.Unfollow("ann", "cat")
	expectFeed(t, m, "ann", "p2<-r2[bob dan]")
	if m.CanRepost("r6") {
		t.Fatal("a repost whose original is deleted can be reposted")
	}
}

// unreadCount counts entries newer than the read marker, capped; the marker
// never moves backwards.
func TestModelUnread(t *testing.T) {
	var zero time.Time
	m := New(Limits{MaxReposters: 2, MaxUnreadCount: 3})
	m.Follow("ann", "bob")
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		m.AddPost("bob", id, zero)
	}
	if n := m.Unread("ann"); n != 3 {
		t.Fatalf("unread %d, want the cap 3", n)
	}
	m.MarkRead("ann", "p3")
	if n := m.Unread("ann"); n != 2 {
		t.Fatalf("unread after marking p3: %d, want 2", n)
	}
	m.MarkRead("ann", "p1")
	if n := m.Unread("ann"); n != 2 {
		t.Fatalf("the marker moved backwards: unread %d, want 2", n)
	}
	m.MarkRead("ann", "")
	if n := m.Unread("ann"); n != 0 {
		t.Fatalf("unread after marking all: %d, want 0", n)
	}
}
