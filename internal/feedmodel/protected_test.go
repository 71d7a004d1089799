package feedmodel

import (
	"slices"
	"testing"
	"time"
)

// TestModelProtectedAccounts: the model's own rules of protected
// accounts: a follow of a protected user is a request, approved into a
// follow, rejected, withdrawn by unfollow, dropped by a block, approved
// all at once by turning protection off; the user's posts leave the feed
// of whoever does not follow them; reposts of them are refused.
func TestModelProtectedAccounts(t *testing.T) {
	m := New(Limits{MaxReposters: 10, MaxUnreadCount: 100})
	for _, u := range []string{"p", "a", "r", "f", "x"} {
		m.SignUp(u, u)
	}
	m.Follow("a", "p")
	m.Follow("r", "f")
	m.AddPost("p", "p1", time.Time{})
	m.Repost("f", "f1", "p1", time.Time{})
	if got := feedPosts(m.Feed("r")); !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("r's feed with p public: %v", got)
	}
	m.Protect("p", true)
	if got := feedPosts(m.Feed("r")); len(got) != 0 {
		t.Fatalf("r's feed with p protected: %v, want p1 gone", got)
	}
	if got := feedPosts(m.Feed("a")); !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("a's feed with p protected: %v, want p1 kept", got)
	}
	if got := m.VisibleTimeline("r", "p"); len(got) != 0 {
		t.Fatalf("p's timeline as r: %v", got)
	}
	if m.RepostRefusal("a", "p1") != "FORBIDDEN" || m.RepostRefusal("r", "p1") != "NOT_FOUND" || m.RepostRefusal("r", "f1") != "NOT_FOUND" || m.RepostRefusal("p", "p1") != "" {
		t.Fatal("reposts of a protected post: want FORBIDDEN to a follower, NOT_FOUND to a stranger, taken from the author")
	}
	m.Follow("r", "p")
	m.Follow("x", "p")
	if m.IsFollowing("r", "p") || !m.HasRequested("r", "p") || !slices.Equal(m.Requesters("p"), []string{"x", "r"}) {
		t.Fatalf("follows of protected p: requests %v", m.Requesters("p"))
	}
	if !m.Approve("p", "r") || !m.IsFollowing("r", "p") || m.Approve("p", "r") {
		t.Fatal("approval: want the follow once")
	}
	if got := feedPosts(m.Feed("r")); !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("r's feed after approval: %v", got)
	}
	m.Reject("p", "x")
	m.Follow("x", "p")
	m.Unfollow("x", "p")
	m.Follow("x", "p")
	m.Block("x", "p")
	if got := m.Requesters("p"); len(got) != 0 {
		t.Fatalf("requests after reject, withdrawal and block: %v", got)
	}
	m.Follow("f", "p")
	m.Protect("p", false)
	if !m.IsFollowing("f", "p") || len(m.Requesters("p")) != 0 {
		t.Fatal("protection off: want f's request approved")
	}
}

func feedPosts(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.PostID)
	}
	return out
}
