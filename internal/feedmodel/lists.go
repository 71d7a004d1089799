package feedmodel

import "slices"

// A list is a reader's feed of a chosen subset of the people they follow:
// its feed is what the owner's feed would hold if they followed only its
// members, hidden users hidden as in Feed.

// CreateList records owner's new list id.
func (m *Model) CreateList(owner, id string) {
	if m.lists[id] != nil {
		panic("model: list id recorded twice: " + id)
	}
	m.lists[id] = &modelList{owner: owner}
}

// AddToList records member's addition to owner's list id (idempotent). It
// reports false, recording nothing, when the server refuses it: owner does
// not follow member.
func (m *Model) AddToList(owner, id, member string) bool {
	l := m.lists[id]
	if l == nil || l.owner != owner {
		panic("model: no list " + id + " of " + owner)
	}
	if !m.IsFollowing(owner, member) {
		return false
	}
	if !slices.Contains(l.members, member) {
		l.members = append(l.members, member)
	}
	return true
}

// RemoveFromList records member's removal from list id (idempotent).
func (m *Model) RemoveFromList(id, member string) {
	if l := m.lists[id]; l != nil {
		l.members = slices.DeleteFunc(l.members, func(u string) bool { return u == member })
	}
}

// ListMembers are list id's members, in the order they were added.
func (m *Model) ListMembers(id string) []string { return slices.Clone(m.lists[id].members) }

// ListFeed computes list id's whole expected feed, newest first.
func (m *Model) ListFeed(id string) []Entry {
	l := m.lists[id]
	return m.feedThrough(l.owner, func(followee string) bool {
		return slices.Contains(l.members, followee) && m.countsThrough(l.owner, followee)
	})
}

// leaveLists takes followee out of every list of follower's: an unfollow
// (a block's included) does so on the server.
func (m *Model) leaveLists(follower, followee string) {
	for _, l := range m.lists {
		if l.owner == follower {
			l.members = slices.DeleteFunc(l.members, func(u string) bool { return u == followee })
		}
	}
}

// modelList is a list as the model knows it.
type modelList struct {
	owner   string
	members []string
}
