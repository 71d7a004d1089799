package feedmodel

// Block records that a blocks b, as the server does: idempotent, and a and
// b stop following each other. Until Unblock a follow between them either
// way is refused, and neither sees the other's posts (see Feed). It
// reports false, recording nothing, when a is b: the server refuses that.
func (m *Model) Block(a, b string) bool {
	if a == b {
		return false
	}
	m.blocks[[2]string{a, b}] = true
	m.Unfollow(a, b)
	m.Unfollow(b, a)
	return true
}

// Unblock records that a no longer blocks b (idempotent). It restores no
// follow; b may still block a. It reports false when a is b.
func (m *Model) Unblock(a, b string) bool {
	if a == b {
		return false
	}
	delete(m.blocks, [2]string{a, b})
	return true
}

// Mute records that a mutes b (idempotent): a keeps following b, and b's
// posts and reposts and others' reposts of b's posts leave a's feed (see
// Feed). It reports false when a is b.
func (m *Model) Mute(a, b string) bool {
	if a == b {
		return false
	}
	m.mutes[[2]string{a, b}] = true
	return true
}

// Unmute records that a no longer mutes b (idempotent). Since Feed is
// computed from the whole history, what the mute hid comes back in its
// place. It reports false when a is b.
func (m *Model) Unmute(a, b string) bool {
	if a == b {
		return false
	}
	delete(m.mutes, [2]string{a, b})
	return true
}

// IsBlocking reports whether a blocks b.
func (m *Model) IsBlocking(a, b string) bool { return m.blocks[[2]string{a, b}] }

// IsMuting reports whether a mutes b.
func (m *Model) IsMuting(a, b string) bool { return m.mutes[[2]string{a, b}] }

// CanRepostAs reports whether the server accepts user's repost of target:
// CanRepost, and no block stands either way between user and the author
// of target or of its original (to user such a post is as absent).
func (m *Model) CanRepostAs(user, target string) bool {
	if !m.CanRepost(target) {
		return false
	}
	t := m.byID[target]
	if t.Author != user && m.blocksEitherWay(user, t.Author) {
		return false
	}
	if o := m.byID[t.RepostOf]; o != nil && o.Author != user && m.blocksEitherWay(user, o.Author) {
		return false
	}
	return true
}

// CanFollow reports whether the server accepts a follow of b by a: they are
// two users and neither blocks the other.
func (m *Model) CanFollow(a, b string) bool {
	return a != b && !m.blocksEitherWay(a, b)
}

// VisibleTimeline is what viewer may read of author's timeline: author's
// live posts and reposts, oldest first, or none when either blocks the
// other, or when author is protected and viewer is not their follower.
func (m *Model) VisibleTimeline(viewer, author string) []string {
	if m.blocksEitherWay(viewer, author) || m.hiddenByProtection(viewer, author) {
		return nil
	}
	return m.LivePosts(author)
}

func (m *Model) blocksEitherWay(a, b string) bool {
	return m.IsBlocking(a, b) || m.IsBlocking(b, a)
}

// countsThrough reports whether viewer's feed takes entries through
// followee: viewer follows followee and neither mutes nor blocks them.
func (m *Model) countsThrough(viewer, followee string) bool {
	return followee != viewer && m.IsFollowing(viewer, followee) &&
		!m.IsMuting(viewer, followee) && !m.IsBlocking(viewer, followee)
}

// hidesAuthor reports whether viewer's feed leaves out every entry whose
// original author wrote: viewer mutes or blocks author, or author blocks
// viewer.
func (m *Model) hidesAuthor(viewer, author string) bool {
	return m.IsMuting(viewer, author) || m.blocksEitherWay(viewer, author)
}
