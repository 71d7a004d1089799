// Package feedmodel is the reference model of the home feed: the plainest
// code that says what every feed must hold, against which the engine's tests
// (feed/) and the API's tests (api/) check the real thing.
package feedmodel

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Model is the reference model of the home feed: it records what
// happened (sign-ups, follows, blocks, mutes, posts, reposts, deletions)
// and computes any user's whole expected feed by the plainest possible
// code, looping over everything on each call. It knows nothing of the
// server's ids except as opaque names: users and posts are keyed by the
// ids the caller gives (the API tests give GraphQL global ids, the engine
// tests numeric ids as text), and time is the order in which operations
// were recorded (the server makes time-ordered ids, and the tests run
// operations one after the other, so recording order is the server's
// order).
//
// The rules it encodes are the contract's (Query.feed and FeedItem):
//   - an original post is in a viewer's feed when its author is followed, or
//     when a followee reposted it (a live repost);
//   - it appears once; its place is its earliest arrival: the original itself
//     when its author is followed, else the first live repost by a followee;
//   - reposters are the followees with a live repost of it, most recent repost
//     first, at most m.limits.MaxReposters;
//   - the viewer's own posts arrive only through a followee's repost (nobody
//     follows themselves);
//   - deleted posts and deleted reposts count for nothing;
//   - an entry counts for the viewer only through followees the viewer
//     neither mutes nor blocks (its place and its reposters alike), and
//     never when its original's author is muted or blocked by the viewer,
//     or blocks the viewer.
type Model struct {
	users   []string           // in sign-up order
	follows map[[2]string]bool // {follower, followee}
	blocks  map[[2]string]bool // {blocker, blocked}
	mutes   map[[2]string]bool // {muter, muted}
	posts   []*Post            // in creation order
	byID    map[string]*Post
	clock   int               // the order of the last recorded post
	names   map[string]string // readable names, for messages
	marker  map[string]int    // each user's read marker: the Seq of the entry's arrival
	lists   map[string]*modelList
	// protected are the users whose followers need approval; requests
	// are the follows waiting for it, {requester, target}, oldest first.
	protected map[string]bool
	requests  [][2]string
	limits    Limits
}

// Limits are the engine's caps that the rules name.
type Limits struct {
	MaxReposters   int // reposters listed on an entry (config.MaxReposters)
	MaxUnreadCount int // the most unreadCount says (config.Config.MaxUnreadCount)
}

// Post is a post or (RepostOf set) a repost, as the model knows it.
type Post struct {
	ID       string
	Author   string
	RepostOf string    // the original's id for a repost, "" otherwise
	Seq      int       // creation order, 1 for the first post
	At       time.Time // the server's createdAt, when the caller knows it
	Deleted  bool
}

// Entry is one expected feed entry.
type Entry struct {
	PostID    string    // the original post
	Reposters []string  // followees with a live repost, most recent first, at most m.limits.MaxReposters
	Arrival   string    // the post or repost whose creation placed the entry
	Seq       int       // the sort position: Seq of Arrival (larger is newer)
	AddedAt   time.Time // At of Arrival (zero when unknown)
}

// New is an empty model; limits are the engine's.
func New(limits Limits) *Model {
	return &Model{
		limits:  limits,
		follows: map[[2]string]bool{},
		blocks:  map[[2]string]bool{},
		mutes:   map[[2]string]bool{},
		byID:    map[string]*Post{},
		names:   map[string]string{},
		marker:  map[string]int{},
		lists:   map[string]*modelList{},

		protected: map[string]bool{},
	}
}

// SignUp records a new user; name is only used in messages.
func (m *Model) SignUp(user, name string) {
	if slices.Contains(m.users, user) {
		panic("model: user signed up twice: " + user)
	}
	m.users = append(m.users, user)
	m.names[user] = name
}

// Follow records that a follows b (idempotent). It reports false, recording
// nothing, when the server refuses the follow (see CanFollow): following
// oneself, or a follow between two users one of whom blocks the other.
//
// A follow of a protected user b is a request (see protected.go), which
// the server accepts as it does a follow.
func (m *Model) Follow(a, b string) bool {
	if !m.CanFollow(a, b) {
		return false
	}
	if m.protected[b] && !m.IsFollowing(a, b) {
		m.request(a, b)
		return true
	}
	m.follows[[2]string{a, b}] = true
	return true
}

// Unfollow records that a no longer follows b (idempotent).
//
// An unfollow withdraws a's request to follow b, if any.
func (m *Model) Unfollow(a, b string) {
	delete(m.follows, [2]string{a, b})
	m.dropRequest(a, b)
	m.leaveLists(a, b)
}

// RemoveFollower records that viewer removed follower: follower no longer
// follows viewer.
// A request of follower's waiting for viewer stays.
func (m *Model) RemoveFollower(viewer, follower string) {
	delete(m.follows, [2]string{follower, viewer})
	m.leaveLists(follower, viewer)
}

// IsFollowing reports whether a follows b.
func (m *Model) IsFollowing(a, b string) bool { return m.follows[[2]string{a, b}] }

// AddPost records an original post by author. at is the server's createdAt
// (zero when unknown).
func (m *Model) AddPost(author, id string, at time.Time) {
	m.add(&Post{ID: id, Author: author, At: at})
}

// Repost records what the server does when user reposts target (a post or a
// repost): a repost of target's original, unless user already has a live
// repost of it, which the server returns instead. It returns the id the
// server must have answered: id for a new repost, the existing one otherwise.
// target must be live.
func (m *Model) Repost(user, id, target string, at time.Time) string {
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
	if existing := m.LiveRepost(user, original); existing != "" {
		return existing
	}
	m.add(&Post{ID: id, Author: user, RepostOf: original, At: at})
	return id
}

// CanRepost reports whether the server accepts a repost of target: it and
// its original are live.
func (m *Model) CanRepost(target string) bool {
	t := m.byID[target]
	if t == nil || t.Deleted {
		return false
	}
	return t.RepostOf == "" || !m.byID[t.RepostOf].Deleted
}

// LiveRepost is user's live repost of original, or "".
func (m *Model) LiveRepost(user, original string) string {
	for _, p := range m.posts {
		if p.Author == user && p.RepostOf == original && !p.Deleted {
			return p.ID
		}
	}
	return ""
}

// Delete records the deletion of a post or repost (idempotent).
func (m *Model) Delete(id string) {
	p := m.byID[id]
	if p == nil {
		panic("model: delete of an unknown post: " + id)
	}
	p.Deleted = true
}

// LivePosts lists the ids of live posts and reposts by author ("" for
// anyone's), oldest first.
func (m *Model) LivePosts(author string) []string {
	var out []string
	for _, p := range m.posts {
		if !p.Deleted && (author == "" || p.Author == author) {
			out = append(out, p.ID)
		}
	}
	return out
}

// Users lists the users, in sign-up order.
func (m *Model) Users() []string { return m.users }

// Lookup is the recorded post or repost id, or nil.
func (m *Model) Lookup(id string) *Post { return m.byID[id] }

// PostCount is how many posts and reposts were recorded, deleted ones
// included.
func (m *Model) PostCount() int { return len(m.posts) }

func (m *Model) add(p *Post) {
	if m.byID[p.ID] != nil {
		panic("model: post id recorded twice: " + p.ID)
	}
	m.clock++
	p.Seq = m.clock
	m.posts = append(m.posts, p)
	m.byID[p.ID] = p
}

// Feed computes user's whole expected feed, newest first.
func (m *Model) Feed(user string) []Entry {
	return m.feedThrough(user, func(followee string) bool { return m.countsThrough(user, followee) })
}

// feedThrough is the feed of user whose entries arrive through the users
// counts says, hidden authors hidden as in Feed.
func (m *Model) feedThrough(user string, counts func(followee string) bool) []Entry {
	var out []Entry
	for _, orig := range m.posts {
		if orig.RepostOf != "" || orig.Deleted || m.hidesAuthor(user, orig.Author) || m.hiddenByProtection(user, orig.Author) {
			continue
		}
		var arrival *Post
		if counts(orig.Author) {
			arrival = orig
		}
		var reposts []*Post
		for _, r := range m.posts {
			if r.RepostOf == orig.ID && !r.Deleted && counts(r.Author) {
				reposts = append(reposts, r)
				if arrival == nil || r.Seq < arrival.Seq {
					arrival = r
				}
			}
		}
		if arrival == nil {
			continue
		}
		slices.SortFunc(reposts, func(a, b *Post) int { return b.Seq - a.Seq })
		e := Entry{PostID: orig.ID, Reposters: []string{}, Arrival: arrival.ID, Seq: arrival.Seq, AddedAt: arrival.At}
		for _, r := range reposts {
			if len(e.Reposters) < m.limits.MaxReposters {
				e.Reposters = append(e.Reposters, r.Author)
			}
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return b.Seq - a.Seq })
	return out
}

// MarkRead records markFeedRead by user: up to the entry that arrival
// placed (the entry a cursor points at), or to the newest entry when arrival
// is "". The marker never moves backwards.
func (m *Model) MarkRead(user, arrival string) {
	seq := 0
	if arrival != "" {
		seq = m.SeqOf(arrival)
	} else if f := m.Feed(user); len(f) > 0 {
		seq = f[0].Seq
	}
	m.marker[user] = max(m.marker[user], seq)
}

// Unread is user's expected unreadCount: the entries newer than the read
// marker, at most m.limits.MaxUnreadCount.
func (m *Model) Unread(user string) int {
	n := 0
	for _, e := range m.Feed(user) {
		if e.Seq > m.marker[user] {
			n++
		}
	}
	return min(n, m.limits.MaxUnreadCount)
}

// SeqOf is the creation order of a recorded post (0 when unknown).
func (m *Model) SeqOf(id string) int {
	if p := m.byID[id]; p != nil {
		return p.Seq
	}
	return 0
}

// Name is a readable name for a user or post id, for messages.
func (m *Model) Name(id string) string {
	if n, ok := m.names[id]; ok {
		return n
	}
	if p := m.byID[id]; p != nil {
		if p.RepostOf != "" {
			return fmt.Sprintf("repost#%d(%s of #%d)", p.Seq, m.Name(p.Author), m.SeqOf(p.RepostOf))
		}
		return fmt.Sprintf("post#%d(%s)", p.Seq, m.Name(p.Author))
	}
	return id
}

// Describe renders entries readably, for failure messages.
func (m *Model) Describe(entries []Entry) string {
	var b strings.Builder
	for i, e := range entries {
		rs := make([]string, len(e.Reposters))
		for j, r := range e.Reposters {
			rs[j] = m.Name(r)
		}
		fmt.Fprintf(&b, "  %2d. %s via %s reposters=[%s]\n", i, m.Name(e.PostID), m.Name(e.Arrival), strings.Join(rs, " "))
	}
	return b.String()
}
