package api

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"feedservice/feed"
)

// feedModel is the reference model of the home feed: it records what
// happened (sign-ups, follows, posts, reposts, deletions) and computes any
// user's whole expected feed by the plainest possible code, looping over
// everything on each call. It knows nothing of the server's ids except as
// opaque names: users and posts are keyed by the GraphQL global ids the
// server returned, and time is the order in which operations were recorded
// (the server makes time-ordered ids, and the tests run operations one after
// the other, so recording order is the server's order).
//
// The rules it encodes are the contract's (Query.feed and FeedItem):
//   - an original post is in a viewer's feed when its author is followed, or
//     when a followee reposted it (a live repost);
//   - it appears once; its place is its earliest arrival: the original itself
//     when its author is followed, else the first live repost by a followee;
//   - reposters are the followees with a live repost of it, most recent repost
//     first, at most feed.MaxReposters;
//   - the viewer's own posts arrive only through a followee's repost (nobody
//     follows themselves);
//   - deleted posts and deleted reposts count for nothing.
type feedModel struct {
	users   []string           // in sign-up order
	follows map[[2]string]bool // {follower, followee}
	posts   []*modelPost       // in creation order
	byID    map[string]*modelPost
	clock   int               // the order of the last recorded post
	names   map[string]string // readable names, for messages
	marker  map[string]int    // each user's read marker: the Seq of the entry's arrival
}

// modelPost is a post or (RepostOf set) a repost, as the model knows it.
type modelPost struct {
	ID       string
	Author   string
	RepostOf string    // the original's id for a repost, "" otherwise
	Seq      int       // creation order, 1 for the first post
	At       time.Time // the server's createdAt, when the caller knows it
	Deleted  bool
}

// modelEntry is one expected feed entry.
type modelEntry struct {
	PostID    string    // the original post
	Reposters []string  // followees with a live repost, most recent first, at most feed.MaxReposters
	Arrival   string    // the post or repost whose creation placed the entry
	Seq       int       // the sort position: Seq of Arrival (larger is newer)
	AddedAt   time.Time // At of Arrival (zero when unknown)
}

func feedNewModel() *feedModel {
	return &feedModel{
		follows: map[[2]string]bool{},
		byID:    map[string]*modelPost{},
		names:   map[string]string{},
		marker:  map[string]int{},
	}
}

// signUp records a new user; name is only used in messages.
func (m *feedModel) signUp(user, name string) {
	if slices.Contains(m.users, user) {
		panic("model: user signed up twice: " + user)
	}
	m.users = append(m.users, user)
	m.names[user] = name
}

// follow records that a follows b (idempotent; following oneself is refused by
// the server and ignored here).
func (m *feedModel) follow(a, b string) {
	if a != b {
		m.follows[[2]string{a, b}] = true
	}
}

// unfollow records that a no longer follows b (idempotent).
func (m *feedModel) unfollow(a, b string) { delete(m.follows, [2]string{a, b}) }

// removeFollower records that viewer removed follower: follower no longer
// follows viewer.
func (m *feedModel) removeFollower(viewer, follower string) { m.unfollow(follower, viewer) }

// isFollowing reports whether a follows b.
func (m *feedModel) isFollowing(a, b string) bool { return m.follows[[2]string{a, b}] }

// post records an original post by author. at is the server's createdAt
// (zero when unknown).
func (m *feedModel) post(author, id string, at time.Time) {
	m.add(&modelPost{ID: id, Author: author, At: at})
}

// repost records what the server does when user reposts target (a post or a
// repost): a repost of target's original, unless user already has a live
// repost of it, which the server returns instead. It returns the id the
// server must have answered: id for a new repost, the existing one otherwise.
// target must be live.
func (m *feedModel) repost(user, id, target string, at time.Time) string {
	t := m.byID[target]
	if t == nil || t.Deleted {
		panic("model: repost of a missing or deleted post: " + target)
	}
	original := t.ID
	if t.RepostOf != "" {
		original = t.RepostOf
	}
	if m.byID[original].Deleted {
		panic("model: repost of a repost whose original is deleted: " + target)
	}
	if existing := m.liveRepost(user, original); existing != "" {
		return existing
	}
	m.add(&modelPost{ID: id, Author: user, RepostOf: original, At: at})
	return id
}

// canRepost reports whether the server accepts a repost of target: it and
// its original are live.
func (m *feedModel) canRepost(target string) bool {
	t := m.byID[target]
	if t == nil || t.Deleted {
		return false
	}
	return t.RepostOf == "" || !m.byID[t.RepostOf].Deleted
}

// liveRepost is user's live repost of original, or "".
func (m *feedModel) liveRepost(user, original string) string {
	for _, p := range m.posts {
		if p.Author == user && p.RepostOf == original && !p.Deleted {
			return p.ID
		}
	}
	return ""
}

// delete records the deletion of a post or repost (idempotent).
func (m *feedModel) delete(id string) {
	p := m.byID[id]
	if p == nil {
		panic("model: delete of an unknown post: " + id)
	}
	p.Deleted = true
}

// livePosts lists the ids of live posts and reposts by author ("" for
// anyone's), oldest first.
func (m *feedModel) livePosts(author string) []string {
	var out []string
	for _, p := range m.posts {
		if !p.Deleted && (author == "" || p.Author == author) {
			out = append(out, p.ID)
		}
	}
	return out
}

func (m *feedModel) add(p *modelPost) {
	if m.byID[p.ID] != nil {
		panic("model: post id recorded twice: " + p.ID)
	}
	m.clock++
	p.Seq = m.clock
	m.posts = append(m.posts, p)
	m.byID[p.ID] = p
}

// feed computes user's whole expected feed, newest first.
func (m *feedModel) feed(user string) []modelEntry {
	var out []modelEntry
	for _, orig := range m.posts {
		if orig.RepostOf != "" || orig.Deleted {
			continue
		}
		var arrival *modelPost
		if orig.Author != user && m.isFollowing(user, orig.Author) {
			arrival = orig
		}
		var reposts []*modelPost
		for _, r := range m.posts {
			if r.RepostOf == orig.ID && !r.Deleted && r.Author != user && m.isFollowing(user, r.Author) {
				reposts = append(reposts, r)
				if arrival == nil || r.Seq < arrival.Seq {
					arrival = r
				}
			}
		}
		if arrival == nil {
			continue
		}
		slices.SortFunc(reposts, func(a, b *modelPost) int { return b.Seq - a.Seq })
		e := modelEntry{PostID: orig.ID, Reposters: []string{}, Arrival: arrival.ID, Seq: arrival.Seq, AddedAt: arrival.At}
		for _, r := range reposts {
			if len(e.Reposters) < feed.MaxReposters {
				e.Reposters = append(e.Reposters, r.Author)
			}
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b modelEntry) int { return b.Seq - a.Seq })
	return out
}

// markRead records markFeedRead by user: up to the entry that arrival
// placed (the entry a cursor points at), or to the newest entry when arrival
// is "". The marker never moves backwards.
func (m *feedModel) markRead(user, arrival string) {
	seq := 0
	if arrival != "" {
		seq = m.seqOf(arrival)
	} else if f := m.feed(user); len(f) > 0 {
		seq = f[0].Seq
	}
	m.marker[user] = max(m.marker[user], seq)
}

// unread is user's expected unreadCount: the entries newer than the read
// marker, at most feed.MaxUnreadCount.
func (m *feedModel) unread(user string) int {
	n := 0
	for _, e := range m.feed(user) {
		if e.Seq > m.marker[user] {
			n++
		}
	}
	return min(n, feed.MaxUnreadCount)
}

// seqOf is the creation order of a recorded post (0 when unknown).
func (m *feedModel) seqOf(id string) int {
	if p := m.byID[id]; p != nil {
		return p.Seq
	}
	return 0
}

// name is a readable name for a user or post id, for messages.
func (m *feedModel) name(id string) string {
	if n, ok := m.names[id]; ok {
		return n
	}
	if p := m.byID[id]; p != nil {
		if p.RepostOf != "" {
			return fmt.Sprintf("repost#%d(%s of #%d)", p.Seq, m.name(p.Author), m.seqOf(p.RepostOf))
		}
		return fmt.Sprintf("post#%d(%s)", p.Seq, m.name(p.Author))
	}
	return id
}

// describe renders entries readably, for failure messages.
func (m *feedModel) describe(entries []modelEntry) string {
	var b strings.Builder
	for i, e := range entries {
		rs := make([]string, len(e.Reposters))
		for j, r := range e.Reposters {
			rs[j] = m.name(r)
		}
		fmt.Fprintf(&b, "  %2d. %s via %s reposters=[%s]\n", i, m.name(e.PostID), m.name(e.Arrival), strings.Join(rs, " "))
	}
	return b.String()
}
