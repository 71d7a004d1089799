package feedmodel

import "slices"

// A protected user's new followers need their approval: a follow of them
// is a request until they approve it. Their posts are for them and their
// approved followers only: no one else's feed holds them, whoever
// reposted them.

// Protect records that user turned protection on or off. Off approves
// every waiting request (each a follow, in the order they were made); on
// keeps the followers.
func (m *Model) Protect(user string, on bool) {
	if on {
		m.protected[user] = true
		return
	}
	delete(m.protected, user)
	for _, r := range m.Requesters(user) {
		m.Approve(user, r)
	}
}

// IsProtected says whether user is protected.
func (m *Model) IsProtected(user string) bool { return m.protected[user] }

// Approve records that target approved requester's request: it becomes
// the follow. It reports false, recording nothing, when there was none.
func (m *Model) Approve(target, requester string) bool {
	if !m.dropRequest(requester, target) {
		return false
	}
	m.follows[[2]string{requester, target}] = true
	return true
}

// Reject records that target rejected requester's request (idempotent).
func (m *Model) Reject(target, requester string) { m.dropRequest(requester, target) }

// HasRequested says whether requester waits for target's approval.
func (m *Model) HasRequested(requester, target string) bool {
	return slices.Contains(m.requests, [2]string{requester, target})
}

// Requesters are who waits for target's approval, most recent first.
func (m *Model) Requesters(target string) []string {
	var out []string
	for _, r := range slices.Backward(m.requests) {
		if r[1] == target {
			out = append(out, r[0])
		}
	}
	return out
}

// RepostRefusal is the server's refusal of user's repost of target, ""
// when it takes it: NOT_FOUND across a block or to whom a protected
// author hides the target or its original, FORBIDDEN for anyone but the
// author of a protected original.
func (m *Model) RepostRefusal(user, target string) string {
	if !m.CanRepostAs(user, target) {
		return "NOT_FOUND"
	}
	t := m.byID[target]
	o := t
	if t.RepostOf != "" {
		o = m.byID[t.RepostOf]
	}
	if m.hiddenByProtection(user, t.Author) || m.hiddenByProtection(user, o.Author) {
		return "NOT_FOUND"
	}
	if m.protected[o.Author] && o.Author != user {
		return "FORBIDDEN"
	}
	return ""
}

// request records requester's request to follow target (made once).
func (m *Model) request(requester, target string) {
	if !m.HasRequested(requester, target) {
		m.requests = append(m.requests, [2]string{requester, target})
	}
}

// dropRequest drops requester's request to follow target, and reports
// whether there was one.
func (m *Model) dropRequest(requester, target string) bool {
	n := len(m.requests)
	m.requests = slices.DeleteFunc(m.requests, func(r [2]string) bool { return r == [2]string{requester, target} })
	return len(m.requests) < n
}

// hiddenByProtection says whether author's protection hides their posts
// from viewer: author is protected, and viewer is neither them nor their
// follower.
func (m *Model) hiddenByProtection(viewer, author string) bool {
	return m.protected[author] && author != viewer && !m.IsFollowing(viewer, author)
}
