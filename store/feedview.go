package store

import (
	"context"

	"feedservice/models"
)

// A reader's feed counts through the users they follow and neither mute nor
// block, and hides every post whose author they mute or block or who
// blocks them (see internal/feedmodel). Block ends the follows both ways
// in its own transaction, so of the followees only the muted ones are
// hidden; the hidden users are named apart because reposts bring posts by
// people the reader does not follow.

// Kinds of the rows of FeedView's one query.
const (
	viewFollowee = 0
	viewHidden   = 1
)

// FeedView lists, in one statement (so from one snapshot), everyone
// readerID follows and everyone whose posts their feed hides: whom they
// mute or block, and who blocks them. The two may share ids (a muted
// followee).
func (s *Store) FeedView(ctx context.Context, readerID int64) (followees, hidden []int64, err error) {
	var rows []struct {
		Kind  int
		Other int64
	}
	err = s.read(ctx).Raw(`SELECT ? AS kind, followee_id AS other FROM followings WHERE user_id = ?
		UNION ALL SELECT ?, muted_id FROM mutes WHERE muter_id = ?
		UNION ALL SELECT ?, blocked_id FROM blocks WHERE blocker_id = ?
		UNION ALL `+s.whoBlocks(),
		viewFollowee, readerID, viewHidden, readerID, viewHidden, readerID, viewHidden, readerID).Scan(&rows).Error
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		if r.Kind == viewFollowee {
			followees = append(followees, r.Other)
		} else {
			hidden = append(hidden, r.Other)
		}
	}
	return followees, hidden, nil
}

// Hides reports whether readerID's feed hides otherID's posts: readerID
// mutes or blocks otherID, or otherID blocks readerID. It reads the primary:
// the writers that settle Redis ask it after their own commit.
// On the sharded layout every part is read on the reader's node: the
// reverse block from blocked_by, not from the blocker's blocks.
func (s *Store) Hides(ctx context.Context, readerID, otherID int64) (bool, error) {
	reverse := "SELECT COUNT(*) FROM blocks WHERE blocker_id = ? AND blocked_id = ?"
	if s.shards != nil {
		reverse = "SELECT COUNT(*) FROM blocked_by WHERE blocker_id = ? AND user_id = ?"
	}
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT
		(SELECT COUNT(*) FROM mutes WHERE muter_id = ? AND muted_id = ?) +
		(SELECT COUNT(*) FROM blocks WHERE blocker_id = ? AND blocked_id = ?) +
		(`+reverse+`)`,
		readerID, otherID, readerID, otherID, otherID, readerID).Scan(&n).Error
	return n > 0, err
}

// BlockedEitherWay reports whether a blocks b or b blocks a.
func (s *Store) BlockedEitherWay(ctx context.Context, a, b int64) (bool, error) {
	var n int64
	err := s.read(ctx).Model(&models.Block{}).
		Where("(blocker_id = ? AND blocked_id = ?) OR (blocker_id = ? AND blocked_id = ?)", a, b, b, a).Count(&n).Error
	return n > 0, err
}
