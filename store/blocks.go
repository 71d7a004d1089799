package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// Block makes blocker block blocked, in one transaction: the block row, the
// end of the follows between the two either way (rows, counts and list
// marks exactly as Unfollow moves them) and the outbox events. id orders the
// blocker's list (a time-ordered id). It reports false, changing nothing,
// when the block already exists; ErrNotFound when either user is unknown.
//
// The events are those a separate unfollow and removal of the follower
// would write, then one blocked event: an unfollowed event when the blocker
// followed the blocked user, a follower_removed event when the blocked user
// followed the blocker (the blocker, the actor, removed that follower). So
// the dispatcher repairs inboxes, followee sets and relation lists for the
// ended follows as it does for any unfollow, and the blocked event carries
// only what is new, the block itself. Once Block returns, neither user
// follows the other whatever the events were, so the caller may settle both
// directions as "not following" after the commit.
func (s *Store) Block(ctx context.Context, blockerID, blockedID, id int64, at time.Time) (bool, error) {
	if s.acrossNodes(blockerID, blockedID) {
		return s.blockAcross(ctx, blockerID, blockedID, id, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		// The same locks, in the same order, as Follow: see there.
		if err := s.findPair(tx, blockerID, blockedID, true); err != nil {
			return err
		}
		// Every part is written if it is missing, and each unfollow removes
		// what is left of its follow: on the sharded layout the parts commit
		// on two data nodes, and a retry after one failed completes the
		// block instead of answering "unchanged" over half of it.
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Block{BlockerID: blockerID, BlockedID: blockedID, ID: id, CreatedAt: at})
		if res.Error != nil {
			return res.Error
		}
		wrote := res.RowsAffected == 1
		if s.shards != nil {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&blockedBy{UserID: blockedID, BlockerID: blockerID})
			if res.Error != nil {
				return res.Error
			}
			wrote = wrote || res.RowsAffected == 1
		}
		if err := s.dropFollowRequestsBetween(tx, blockerID, blockedID); err != nil {
			return err
		}
		for _, f := range []struct {
			follower, followee int64
			kind               string
		}{{blockerID, blockedID, models.EventUnfollowed}, {blockedID, blockerID, models.EventFollowerRemoved}} {
			unfollowed, err := s.unfollow(tx, f.follower, f.followee, f.kind, at)
			if err != nil {
				return err
			}
			wrote = wrote || unfollowed
		}
		if !wrote {
			return nil
		}
		changed = true
		return s.appendEvent(tx, models.EventBlocked, models.BlockEventPayload{BlockerID: blockerID, BlockedID: blockedID}, at)
	})
	return changed, err
}

// Unblock ends blocker's block of blocked, with an unblocked event. It
// restores no follow. It reports false, changing nothing, when there was no
// block (an unknown user included, as Unfollow).
func (s *Store) Unblock(ctx context.Context, blockerID, blockedID int64, at time.Time) (bool, error) {
	if s.acrossNodes(blockerID, blockedID) {
		return s.unblockAcross(ctx, blockerID, blockedID, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		n, err := s.deleteRows(tx, &models.Block{}, "blocks", "blocker_id = ? AND blocked_id = ?", blockerID, blockedID)
		if err != nil || n == 0 {
			return err
		}
		if s.shards != nil {
			if err := tx.Where("user_id = ? AND blocker_id = ?", blockedID, blockerID).Delete(&blockedBy{}).Error; err != nil {
				return err
			}
		}
		changed = true
		return s.appendEvent(tx, models.EventUnblocked, models.BlockEventPayload{BlockerID: blockerID, BlockedID: blockedID}, at)
	})
	return changed, err
}

// findPair checks that users a and b exist: ErrNotFound when either does
// not. With lock, it takes the two rows' locks in id order on MySQL (the
// order the follow counts take them in), which every change of the follows
// and blocks between two users takes first, so that such changes of the
// same two run one after the other. SQLite runs every transaction alone.
func (s *Store) findPair(tx *gorm.DB, a, b int64, lock bool) error {
	q := tx.Model(&models.User{}).Where("id IN ?", []int64{a, b}).Order("id")
	if lock && s.mysql {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var found []int64
	if err := q.Pluck("id", &found).Error; err != nil {
		return err
	}
	want := 2
	if a == b {
		want = 1
	}
	if len(found) < want {
		return fmt.Errorf("users %d and %d: %w", a, b, ErrNotFound)
	}
	return nil
}

// blockedEitherWay reports whether a blocks b or b blocks a. On MySQL it is
// a locking read, which sees the newest committed rows whatever the
// transaction read before.
func (s *Store) blockedEitherWay(tx *gorm.DB, a, b int64) (bool, error) {
	q := tx.Model(&models.Block{}).
		Where("(blocker_id = ? AND blocked_id = ?) OR (blocker_id = ? AND blocked_id = ?)", a, b, b, a)
	if s.mysql {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var found []int64
	err := q.Limit(1).Pluck("blocker_id", &found).Error
	return len(found) > 0, err
}

// BlockedPage lists whom userID blocks, keyset-paged by the block's id from
// bound.
func (s *Store) BlockedPage(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	return s.relationPage(ctx, "blocks", "blocker_id", "blocked_id", userID, dir, bound, limit)
}

// BlockedCount counts whom userID blocks.
func (s *Store) BlockedCount(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := s.read(ctx).Model(&models.Block{}).Where("blocker_id = ?", userID).Count(&n).Error
	return int(n), err
}

// BlockedAmong returns which of ids viewer blocks.
func (s *Store) BlockedAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return s.among(ctx, &models.Block{}, "blocker_id", "blocked_id", viewerID, ids)
}

// BlockedEitherWayAmong returns which of ids viewer blocks or is blocked
// by: whose posts a block hides from viewer, wherever they are read. One
// statement.
func (s *Store) BlockedEitherWayAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	found := map[int64]bool{}
	if len(ids) == 0 {
		return found, nil
	}
	var hits []int64
	reverse := "SELECT blocker_id FROM blocks WHERE blocked_id = ? AND blocker_id IN ?"
	if s.shards != nil {
		reverse = "SELECT blocker_id FROM blocked_by WHERE user_id = ? AND blocker_id IN ?"
	}
	err := s.read(ctx).Raw(`SELECT blocked_id FROM blocks WHERE blocker_id = ? AND blocked_id IN ?
		UNION `+reverse,
		viewerID, ids, viewerID, ids).Scan(&hits).Error
	for _, id := range hits {
		found[id] = true
	}
	return found, err
}

// BlockingAmong returns which of ids block viewer.
func (s *Store) BlockingAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	if s.shards != nil {
		return s.among(ctx, &blockedBy{}, "user_id", "blocker_id", viewerID, ids)
	}
	return s.among(ctx, &models.Block{}, "blocked_id", "blocker_id", viewerID, ids)
}

// blockedBy is a row of the sharded layout's blocked_by table: a block
// kept a second time by the blocked user (UserID), on their data node, so
// that "who blocks me" is read there, as followers keeps a follow on the
// followee's. Block and Unblock write it with the blocks row, in their
// transaction. One database answers from blocks' reverse index instead.
type blockedBy struct {
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	BlockerID int64 `gorm:"primaryKey;autoIncrement:false"`
}

func (blockedBy) TableName() string { return "blocked_by" }

// whoBlocks is the FeedView branch of those who block the reader (its
// kind and the reader as arguments).
func (s *Store) whoBlocks() string {
	if s.shards != nil {
		return "SELECT ?, blocker_id FROM blocked_by WHERE user_id = ?"
	}
	return "SELECT ?, blocker_id FROM blocks WHERE blocked_id = ?"
}
