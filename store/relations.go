package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// Follow makes follower follow followee: both relation rows, both counts and a
// "followed" event in one transaction. seq orders the lists (a time-ordered
// id). It reports false, changing nothing, when the relation already exists;
// ErrBlocked when either user blocks the other, ErrNotFound when either is
// unknown.
func (s *Store) Follow(ctx context.Context, followerID, followeeID, seq int64, at time.Time) (bool, error) {
	if s.acrossNodes(followerID, followeeID) {
		return s.followAcross(ctx, followerID, followeeID, seq, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		// The users' row locks, taken first as Block takes them, order a
		// follow and a block of the same two: the check below sees a block
		// committed before it, and a block after it sees the follow.
		if err := s.findPair(tx, followerID, followeeID, true); err != nil {
			return err
		}
		var err error
		changed, err = s.follow(tx, followerID, followeeID, seq, at)
		return err
	})
	return changed, err
}

// follow is Follow within its transaction, the two users' rows locked.
func (s *Store) follow(tx *gorm.DB, followerID, followeeID, seq int64, at time.Time) (bool, error) {
	blocked, err := s.blockedEitherWay(tx, followerID, followeeID)
	if err != nil {
		return false, err
	}
	if blocked {
		return false, ErrBlocked
	}
	// Each side is written if it is missing: on the sharded layout the
	// two sides commit on two data nodes, and a retry after one failed
	// completes the other (with its count and marks) instead of
	// answering "unchanged" over half a follow.
	var sides followSides
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.Following{UserID: followerID, FolloweeID: followeeID, ID: seq, CreatedAt: at})
	if res.Error != nil {
		return false, res.Error
	}
	sides.following = res.RowsAffected == 1
	res = tx.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.Follower{UserID: followeeID, FollowerID: followerID, ID: seq, CreatedAt: at})
	if res.Error != nil {
		return false, res.Error
	}
	sides.follower = res.RowsAffected == 1
	if sides == (followSides{}) {
		return false, nil
	}
	if err := bumpFollowCounts(tx, followerID, followeeID, +1, sides); err != nil {
		return false, err
	}
	if err := shiftRelationMarks(tx, followerID, followeeID, seq, +1, sides); err != nil {
		return false, err
	}
	return true, s.appendEvent(tx, models.EventFollowed, models.FollowEventPayload{FollowerID: followerID, FolloweeID: followeeID}, at)
}

// Unfollow ends the relation follower -> followee at the follower's word,
// with its counts and an unfollowed event. It reports false when there was
// no relation. id is the unfollow's, a time-ordered id as a follow's: on
// the sharded layout the unfollow also ends a follow of the two made
// before it that the follower's node had not seen yet (the followee
// approved a request meanwhile); 0 ends the follow the follower's node
// holds, and older ones.
func (s *Store) Unfollow(ctx context.Context, followerID, followeeID, id int64, at time.Time) (bool, error) {
	if s.acrossNodes(followerID, followeeID) {
		return s.unfollowAcross(ctx, followerID, followeeID, id, at)
	}
	return s.unfollowOnOneNode(ctx, followerID, followeeID, models.EventUnfollowed, at)
}

// RemoveFollower ends the relation follower -> user at the user's word,
// with its counts and a follower_removed event. It reports false when
// there was no relation. id is the removal's, a time-ordered id as a
// follow's: on the sharded layout the removal also ends a follow the
// follower made before it that the user's node had not seen yet (the
// follower unfollowed and followed again meanwhile).
func (s *Store) RemoveFollower(ctx context.Context, userID, followerID, id int64, at time.Time) (bool, error) {
	if s.acrossNodes(followerID, userID) {
		return s.removeFollowerAcross(ctx, userID, followerID, id, at)
	}
	return s.unfollowOnOneNode(ctx, followerID, userID, models.EventFollowerRemoved, at)
}

// unfollowOnOneNode is Unfollow and RemoveFollower in one transaction,
// with an event of the given kind.
func (s *Store) unfollowOnOneNode(ctx context.Context, followerID, followeeID int64, kind string, at time.Time) (bool, error) {
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var err error
		changed, err = s.unfollow(tx, followerID, followeeID, kind, at)
		return err
	})
	return changed, err
}

// unfollow is Unfollow inside the caller's transaction.
func (s *Store) unfollow(tx *gorm.DB, followerID, followeeID int64, kind string, at time.Time) (bool, error) {
	// Each side is removed if it is there, as Follow writes each: a retry
	// completes an unfollow whose other data node failed to commit. The
	// lists go first, whatever is left of the follow: their rows are on
	// the follower's node, with the following side.
	if err := removeFromLists(tx, followerID, followeeID); err != nil {
		return false, err
	}
	var seq []int64
	if err := tx.Model(&models.Following{}).Where("user_id = ? AND followee_id = ?", followerID, followeeID).Pluck("id", &seq).Error; err != nil {
		return false, err
	}
	if len(seq) == 0 {
		if err := tx.Model(&models.Follower{}).Where("user_id = ? AND follower_id = ?", followeeID, followerID).Pluck("id", &seq).Error; err != nil || len(seq) == 0 {
			return false, err
		}
	}
	var sides followSides
	n, err := s.deleteRows(tx, &models.Following{}, "followings", "user_id = ? AND followee_id = ?", followerID, followeeID)
	if err != nil {
		return false, err
	}
	sides.following = n > 0
	if n, err = s.deleteRows(tx, &models.Follower{}, "followers", "user_id = ? AND follower_id = ?", followeeID, followerID); err != nil {
		return false, err
	}
	sides.follower = n > 0
	if sides == (followSides{}) {
		return false, nil
	}
	if err := bumpFollowCounts(tx, followerID, followeeID, -1, sides); err != nil {
		return false, err
	}
	if err := shiftRelationMarks(tx, followerID, followeeID, seq[0], -1, sides); err != nil {
		return false, err
	}
	return true, s.appendEvent(tx, kind, models.FollowEventPayload{FollowerID: followerID, FolloweeID: followeeID}, at)
}

// followSides are the two rows of a follow a change wrote or removed: the
// follower's (followings, with their following count and marks) and the
// followee's (followers, with their follower count and marks). On one
// database a change writes both or neither; on the sharded layout a retry
// after a data node failed between the two commits writes the missing one.
type followSides struct{ following, follower bool }

// bumpFollowCounts moves the counts of the sides of a follow that changed,
// locking the two rows in id order so that two users following each other
// cannot deadlock.
func bumpFollowCounts(tx *gorm.DB, followerID, followeeID int64, delta int, sides followSides) error {
	first, second := followerID, followeeID
	if second < first {
		first, second = second, first
	}
	for _, id := range []int64{first, second} {
		column := "follower_count"
		if id == followerID {
			column = "following_count"
		}
		if column == "following_count" && !sides.following || column == "follower_count" && !sides.follower {
			continue
		}
		res := tx.Model(&models.User{}).Where("id = ?", id).
			Updates(map[string]any{column: gorm.Expr(column+" + ?", delta), "version": nextVersion})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("user %d: %w", id, ErrNotFound)
		}
	}
	return nil
}

// FollowersPage lists who follows userID, keyset-paged by follow id from bound.
func (s *Store) FollowersPage(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	return s.relationPage(ctx, "followers", "user_id", "follower_id", userID, dir, bound, limit)
}

// FollowingPage lists whom userID follows, keyset-paged by follow id from bound.
func (s *Store) FollowingPage(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	return s.relationPage(ctx, "followings", "user_id", "followee_id", userID, dir, bound, limit)
}

// relationPage pages the rows of table whose ownerColumn is userID, the
// other user being in otherColumn.
func (s *Store) relationPage(ctx context.Context, table, ownerColumn, otherColumn string, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	var rows []models.Relation
	q := s.read(ctx).Table(table).
		Select(otherColumn+" AS user_id, id, created_at AS followed_at").
		Where(ownerColumn+" = ?", userID)
	err := keyset(q, "id", dir, bound).Limit(limit).Scan(&rows).Error
	return rows, err
}

// keyset restricts q to the ids beyond bound in direction dir, in page order.
func keyset(q *gorm.DB, column string, dir Direction, bound int64) *gorm.DB {
	if dir == Older {
		return q.Where(column+" < ?", bound).Order(column + " DESC")
	}
	return q.Where(column+" > ?", bound).Order(column + " ASC")
}

// FolloweeIDs lists everyone userID follows.
func (s *Store) FolloweeIDs(ctx context.Context, userID int64) ([]int64, error) {
	var ids []int64
	err := s.read(ctx).Model(&models.Following{}).Where("user_id = ?", userID).Pluck("followee_id", &ids).Error
	return ids, err
}

// FollowedAmong returns which of ids userID follows.
func (s *Store) FollowedAmong(ctx context.Context, userID int64, ids []int64) (map[int64]bool, error) {
	return s.among(ctx, &models.Following{}, "user_id", "followee_id", userID, ids)
}

// FollowersAmong returns which of ids follow userID.
func (s *Store) FollowersAmong(ctx context.Context, userID int64, ids []int64) (map[int64]bool, error) {
	return s.among(ctx, &models.Follower{}, "user_id", "follower_id", userID, ids)
}

// PostReadersAmong returns which of readers an author's new post goes
// to: those who follow author and whose feeds do not hide author's posts
// (they mute author, or one of the two blocks the other), read now. On one
// database it is one statement, with the readers listed once; on the
// sharded layout three (FollowersAmong, MutingAmong,
// BlockedEitherWayAmong), each on the author's node, as a correlated
// subquery through the Spider head would ask the node once for each
// reader.
func (s *Store) PostReadersAmong(ctx context.Context, author int64, readers []int64) (map[int64]bool, error) {
	if s.shards != nil {
		return s.postReadersAcross(ctx, author, readers)
	}
	found := map[int64]bool{}
	if len(readers) == 0 {
		return found, nil
	}
	var hits []int64
	err := s.db.WithContext(ctx).Raw(`SELECT f.follower_id FROM followers f
		WHERE f.user_id = ? AND f.follower_id IN ?
		AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = f.follower_id AND m.muted_id = ?)
		AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ? AND b.blocked_id = f.follower_id)
		AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = f.follower_id AND b.blocked_id = ?)`,
		author, readers, author, author, author).Scan(&hits).Error
	for _, id := range hits {
		found[id] = true
	}
	return found, err
}

// postReadersAcross is PostReadersAmong on the sharded layout.
func (s *Store) postReadersAcross(ctx context.Context, author int64, readers []int64) (map[int64]bool, error) {
	following, err := s.FollowersAmong(ctx, author, readers)
	if err != nil || len(following) == 0 {
		return following, err
	}
	muting, err := s.MutingAmong(ctx, author, readers)
	if err != nil {
		return nil, err
	}
	blocked, err := s.BlockedEitherWayAmong(ctx, author, readers)
	if err != nil {
		return nil, err
	}
	for id := range following {
		if muting[id] || blocked[id] {
			delete(following, id)
		}
	}
	return following, nil
}

// among returns which of ids are in column of the rows of table whose
// ownerColumn is userID, read on the primary: the reader's own relations.
func (s *Store) among(ctx context.Context, table any, ownerColumn, column string, userID int64, ids []int64) (map[int64]bool, error) {
	found := map[int64]bool{}
	if len(ids) == 0 {
		return found, nil
	}
	var hits []int64
	err := s.db.WithContext(ctx).Model(table).Where(ownerColumn+" = ? AND "+column+" IN ?", userID, ids).Pluck(column, &hits).Error
	for _, id := range hits {
		found[id] = true
	}
	return found, err
}

// Follows reports whether follower follows followee.
func (s *Store) Follows(ctx context.Context, followerID, followeeID int64) (bool, error) {
	found, err := s.FollowedAmong(ctx, followerID, []int64{followeeID})
	return found[followeeID], err
}
