package feedmodel

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The scripts below are read one line at a time. Lines that change the model:
//
//	follow A B | unfollow A B | block A B | unblock A B | mute A B | unmute A B
//	post AUTHOR ID | repost USER ID TARGET | delete ID | read USER ARRIVAL
//
// "follow", "block", "unblock", "mute" and "unmute" must be accepted; prefixed
// with "refused " they must be refused (and, for follow, CanFollow must agree
// and no follow be recorded). Lines that check it:
//
//	feed USER ENTRY...      USER's whole feed, newest first, each entry
//	                        written post<-arrival[reposter,reposter]
//	following A B | not-following A B
//	blocking A B | not-blocking A B | muting A B | not-muting A B
//	timeline VIEWER AUTHOR ID...   what VIEWER may read of AUTHOR's posts
//	unread USER N
//	snapshot USER | unchanged USER  USER's whole feed (places, times and
//	                                reposters) now equals the snapshot's
type blockMuteCase struct {
	name   string
	script []string
}

// The block and mute rules, one case each; every case checks what the rule
// changes, so a model without the rule fails it.
var blockMuteCases = []blockMuteCase{
	{"block removes both follows and leaves others'", []string{
		"follow ann bob", "follow bob ann", "follow ann cat", "follow cat bob",
		"block ann bob",
		"not-following ann bob", "not-following bob ann",
		"following ann cat", "following cat bob",
		"blocking ann bob", "not-blocking bob ann",
	}},
	{"a follow either way is refused until unblock, which restores none", []string{
		"follow ann bob", "follow bob ann",
		"block ann bob",
		"refused follow ann bob", "refused follow bob ann",
		"unblock ann bob",
		"not-following ann bob", "not-following bob ann", "not-blocking ann bob",
		"follow bob ann",
	}},
	{"the blocker no longer sees the blocked: originals, reposts, third users' reposts", []string{
		"follow ann bob", "follow ann cat",
		"post bob p1", "post dan p2", "repost bob r1 p2", "repost cat r2 p1", "post cat p3",
		"feed ann p3<-p3[] p2<-r1[bob] p1<-p1[cat]",
		"block ann bob",
		"feed ann p3<-p3[]",
		"follow ann dan",
		"feed ann p3<-p3[] p2<-p2[]", // dan's own post, which bob had reposted
	}},
	{"the blocked no longer sees the blocker, not even through a third user's repost", []string{
		"follow bob ann", "follow bob cat",
		"post ann p1", "repost cat r1 p1", "post bob p2", "repost cat r2 p2", "post cat p3",
		"feed bob p3<-p3[] p2<-r2[cat] p1<-p1[cat]",
		"block ann bob",
		// bob's own post, reposted by cat, is still his to see.
		"feed bob p3<-p3[] p2<-r2[cat]",
		// Timelines are hidden either way, and only between the two.
		"timeline bob ann", "timeline ann bob", "timeline cat ann p1",
		"unblock ann bob",
		"feed bob p3<-p3[] p2<-r2[cat] p1<-r1[cat]", // the follow is gone: p1 comes through cat
		"timeline bob ann p1",
	}},
	{"blocking someone who blocks you: each block holds until its own unblock", []string{
		"follow ann cat", "follow bob cat", "follow ann bob", "follow bob ann",
		"post ann p1", "post bob p2", "repost cat r1 p1", "repost cat r2 p2",
		"feed ann p1<-r1[cat] p2<-p2[cat]", "feed bob p2<-r2[cat] p1<-p1[cat]",
		"block bob ann",
		"not-following ann bob", "not-following bob ann",
		"block ann bob",
		"blocking ann bob", "blocking bob ann",
		"feed ann p1<-r1[cat]", "feed bob p2<-r2[cat]",
		"unblock ann bob",
		"refused follow ann bob", "refused follow bob ann",
		"feed ann p1<-r1[cat]", "feed bob p2<-r2[cat]",
		"timeline ann bob", "timeline bob ann",
		"unblock bob ann",
		"feed ann p2<-r2[cat] p1<-r1[cat]", "feed bob p2<-r2[cat] p1<-r1[cat]",
		"follow ann bob",
	}},
	{"block is idempotent, and so is unblock", []string{
		"follow ann bob", "follow ann cat", "post bob p1", "repost cat r1 p1",
		"block ann bob", "block ann bob",
		"blocking ann bob", "not-following ann bob", "feed ann",
		"unblock ann bob", "unblock ann bob", "unblock ann dan",
		"not-blocking ann bob", "feed ann p1<-r1[cat]",
		"follow ann bob", "block ann bob", "block ann bob", "refused follow ann bob",
	}},
	{"oneself cannot be blocked, muted, or followed", []string{
		"follow ann bob", "post bob p1", "post ann p2", "repost bob r1 p2",
		"refused block ann ann", "refused unblock ann ann",
		"refused mute ann ann", "refused unmute ann ann",
		"refused follow ann ann",
		"not-blocking ann ann", "not-muting ann ann",
		"feed ann p2<-r1[bob] p1<-p1[]",
	}},
	{"mute keeps the follow and hides the muted's posts, reposts and others' reposts of them", []string{
		"follow ann bob", "follow ann cat",
		"post bob p1", "post dan p2", "repost bob r1 p2", "post eve p3", "repost cat r2 p1",
		"repost bob r3 p3", "repost cat r4 p3", "post cat p4",
		"feed ann p4<-p4[] p3<-r3[cat,bob] p2<-r1[bob] p1<-p1[cat]",
		"mute ann bob",
		"following ann bob", "muting ann bob", "not-muting bob ann",
		"feed ann p4<-p4[] p3<-r4[cat]",
	}},
	{"a mute is the viewer's own: others who follow the muted still see them", []string{
		"follow ann bob", "follow cat bob", "post bob p1",
		"mute ann bob",
		"feed ann", "feed cat p1<-p1[]",
	}},
	{"a muted reposter drops out; the entry stays when another followee brought it", []string{
		"follow ann cat", "follow ann dan", "follow ann eve",
		"post bob p1", "repost cat r1 p1", "repost dan r2 p1", "repost eve r3 p1",
		"post bob p2", "repost cat r4 p2",
		"feed ann p2<-r4[cat] p1<-r1[eve,dan]", // capped at two reposters
		"mute ann eve",
		"feed ann p2<-r4[cat] p1<-r1[dan,cat]", // cat takes eve's place in the list
		"mute ann cat",
		"feed ann p1<-r2[dan]", // p2 came only through cat; p1 now arrives with dan
	}},
	{"a muted reposter of a followed author's post leaves the entry in its place", []string{
		"follow ann bob", "follow ann cat", "post bob p1", "repost cat r1 p1",
		"feed ann p1<-p1[cat]",
		"mute ann cat",
		"feed ann p1<-p1[]",
	}},
	{"mute then unmute restores the exact places and reposters", []string{
		"follow ann bob", "follow ann cat", "follow ann dan",
		"post bob p1", "post eve p2", "repost bob r1 p2", "repost cat r2 p2",
		"post dan p3", "repost bob r3 p3",
		"feed ann p3<-p3[bob] p2<-r1[cat,bob] p1<-p1[]",
		"snapshot ann",
		"mute ann bob",
		"feed ann p3<-p3[] p2<-r2[cat]",
		"unmute ann bob",
		"unchanged ann",
	}},
	{"what arrives during a mute is in its place after unmute", []string{
		"follow ann bob", "follow ann cat", "follow ann dan",
		"post bob p1", "post eve p2", "repost bob r1 p2", "repost cat r2 p2",
		"post dan p3", "repost bob r3 p3",
		"mute ann bob",
		"post bob p4", "delete r3", "repost bob r4 p3", "post cat p5", "repost dan r5 p2",
		"feed ann p5<-p5[] p3<-p3[] p2<-r2[dan,cat]",
		"unmute ann bob",
		"feed ann p5<-p5[] p4<-p4[] p3<-p3[bob] p2<-r1[dan,cat] p1<-p1[]",
	}},
	{"mute is idempotent, and so is unmute", []string{
		"follow ann bob", "post bob p1",
		"mute ann bob", "mute ann bob",
		"muting ann bob", "feed ann",
		"unmute ann bob", "unmute ann bob", "unmute ann cat",
		"not-muting ann bob", "feed ann p1<-p1[]",
	}},
	{"a mute of what is unread lowers the unread count; unmute restores it", []string{
		"follow ann bob", "follow ann cat", "post bob p1", "post cat p2", "post bob p3",
		"unread ann 3",
		"mute ann bob",
		"unread ann 1",
		"unmute ann bob",
		"unread ann 3",
	}},
	{"block and mute are separate: an unblock leaves a mute in force", []string{
		"follow ann bob", "post bob p1",
		"mute ann bob", "block ann bob", "unblock ann bob", "follow ann bob",
		"muting ann bob", "feed ann",
		"unmute ann bob", "feed ann p1<-p1[]",
	}},
}

func TestModelBlockMute(t *testing.T) {
	for _, c := range blockMuteCases {
		t.Run(c.name, func(t *testing.T) {
			m := New(Limits{MaxReposters: 2, MaxUnreadCount: 10})
			for _, u := range []string{"ann", "bob", "cat", "dan", "eve"} {
				m.SignUp(u, u)
			}
			runScript(t, m, c.script)
		})
	}
}

// runScript runs one case's script (the language is described above
// blockMuteCase), failing at the first line that does not hold.
func runScript(t *testing.T, m *Model, script []string) {
	t.Helper()
	var zero time.Time
	snapshots := map[string][]Entry{}
	for i, line := range script {
		f := strings.Fields(line)
		want := true
		if f[0] == "refused" {
			want, f = false, f[1:]
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("line %d %q: "+format, append([]any{i + 1, line}, args...)...)
		}
		accepted := func(got bool) {
			t.Helper()
			if got != want {
				fail("accepted %v, want %v", got, want)
			}
		}
		relation := func(got, want bool) {
			t.Helper()
			if got != want {
				fail("holds %v, want %v", got, want)
			}
		}
		switch f[0] {
		case "follow":
			if can := m.CanFollow(f[1], f[2]); can != want {
				fail("CanFollow %v, want %v", can, want)
			}
			accepted(m.Follow(f[1], f[2]))
			relation(m.IsFollowing(f[1], f[2]), want)
		case "unfollow":
			m.Unfollow(f[1], f[2])
		case "block":
			accepted(m.Block(f[1], f[2]))
		case "unblock":
			accepted(m.Unblock(f[1], f[2]))
		case "mute":
			accepted(m.Mute(f[1], f[2]))
		case "unmute":
			accepted(m.Unmute(f[1], f[2]))
		case "post":
			m.AddPost(f[1], f[2], zero)
		case "repost":
			if got := m.Repost(f[1], f[2], f[3], zero); got != f[2] {
				fail("the repost answered %s", got)
			}
		case "delete":
			m.Delete(f[1])
		case "read":
			m.MarkRead(f[1], f[2])
		case "feed":
			if got := compactFeed(m.Feed(f[1])); !slices.Equal(got, f[2:]) {
				fail("\n got %q\nwant %q", got, f[2:])
			}
		case "following", "not-following":
			relation(m.IsFollowing(f[1], f[2]), f[0] == "following")
		case "blocking", "not-blocking":
			relation(m.IsBlocking(f[1], f[2]), f[0] == "blocking")
		case "muting", "not-muting":
			relation(m.IsMuting(f[1], f[2]), f[0] == "muting")
		case "timeline":
			if got := m.VisibleTimeline(f[1], f[2]); !slices.Equal(got, f[3:]) {
				fail("got %q, want %q", got, f[3:])
			}
		case "unread":
			n, err := strconv.Atoi(f[2])
			if err != nil {
				fail("%v", err)
			}
			if got := m.Unread(f[1]); got != n {
				fail("unread %d", got)
			}
		case "snapshot":
			snapshots[f[1]] = m.Feed(f[1])
		case "unchanged":
			if got := m.Feed(f[1]); !reflect.DeepEqual(got, snapshots[f[1]]) {
				fail("\n got\n%s want\n%s", m.Describe(got), m.Describe(snapshots[f[1]]))
			}
		default:
			fail("unknown step")
		}
	}
}

// compactFeed writes each entry as post<-arrival[reposter,reposter], the
// scripts' notation.
func compactFeed(es []Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.PostID+"<-"+e.Arrival+"["+strings.Join(e.Reposters, ",")+"]")
	}
	return out
}
