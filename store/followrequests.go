package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// A follow request is a follow that waits for the followed user's
// approval (a protected account's). Its row is kept by the asked user, on
// their data node; the sharded layout keeps it a second time by the
// requester (follow_requests_sent), so that "whom have I asked" is read on
// the requester's node, as blocked_by keeps a block. The changes lock both
// users' rows first, as Follow and Block do, so that a request, its
// approval, a follow and a block of the same two run one after the other.
// Between two data nodes each commits on the actor's node alone, the
// other node's side relayed (onenode.go): a request on the requester's,
// a rejection and an approval on the asked user's, a withdrawal on the
// requester's.

// RequestFollow makes requester ask to follow target, with id ordering
// target's requests (a time-ordered id). It reports false, changing
// nothing, when requester follows target already or has asked before;
// ErrBlocked when either blocks the other, ErrNotFound when either is
// unknown. Between two data nodes the request reaches target's node
// through the relay, refused there if a block came between them
// meanwhile, and made the follow if target is not protected any more.
func (s *Store) RequestFollow(ctx context.Context, requesterID, targetID, id int64, at time.Time) (bool, error) {
	if s.acrossNodes(requesterID, targetID) {
		return s.requestAcross(ctx, requesterID, targetID, id, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := s.findPair(tx, requesterID, targetID, true); err != nil {
			return err
		}
		var err error
		changed, err = s.requestFollow(tx, requesterID, targetID, id, at)
		return err
	})
	return changed, err
}

// requestFollow is RequestFollow within its transaction, the two users'
// rows locked.
func (s *Store) requestFollow(tx *gorm.DB, requesterID, targetID, id int64, at time.Time) (bool, error) {
	blocked, err := s.blockedEitherWay(tx, requesterID, targetID)
	if err != nil {
		return false, err
	}
	if blocked {
		return false, ErrBlocked
	}
	var follows []int64
	if err := tx.Model(&models.Following{}).Where("user_id = ? AND followee_id = ?", requesterID, targetID).Pluck("id", &follows).Error; err != nil || len(follows) > 0 {
		return false, err
	}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.FollowRequest{UserID: targetID, RequesterID: requesterID, ID: id, CreatedAt: at})
	if res.Error != nil {
		return false, res.Error
	}
	changed := res.RowsAffected == 1
	if s.shards != nil {
		// Written if missing, as the blocks' second part: a retry
		// completes a request whose other node failed to commit.
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&followRequestSent{UserID: requesterID, TargetID: targetID, ID: id})
		if res.Error != nil {
			return false, res.Error
		}
		changed = changed || res.RowsAffected == 1
	}
	return changed, nil
}

// FollowOutcome is what FollowOrRequest did.
type FollowOutcome int

const (
	// Unchanged: the follow, or the request, was there already.
	Unchanged FollowOutcome = iota
	// Followed: the follow was made.
	Followed
	// Requested: the followee is protected, and a request was made.
	Requested
)

// FollowOrRequest makes follower follow followee (as Follow), or, when
// followee is protected, ask to (as RequestFollow). The followee's
// protection is read under the lock of both users' rows, the lock a
// change of it takes too, so that a follow never slips past a
// protection turned on and no request is left behind one turned off.
//
// On the sharded layout, between users on two data nodes, the follow
// or the request commits on the follower's node alone, its other half
// relayed (as Follow's and RequestFollow's); there the protection is read
// on the followee's node just before, so a protection turned on at that
// moment may let one follow through, as it would have had it come a
// moment earlier, and a request whose followee turned protection off
// meanwhile is approved when it arrives.
func (s *Store) FollowOrRequest(ctx context.Context, followerID, followeeID, seq int64, at time.Time) (FollowOutcome, error) {
	if s.acrossNodes(followerID, followeeID) {
		var flags []bool
		if err := s.db.WithContext(ctx).Model(&models.User{}).Where("id = ?", followeeID).Pluck("is_protected", &flags).Error; err != nil {
			return Unchanged, err
		}
		if len(flags) == 0 {
			return Unchanged, fmt.Errorf("user %d: %w", followeeID, ErrNotFound)
		}
		write, kind := s.followAcross, Followed
		if flags[0] {
			write, kind = s.requestAcross, Requested
		}
		changed, err := write(ctx, followerID, followeeID, seq, at)
		if changed {
			return kind, err
		}
		return Unchanged, err
	}
	outcome := Unchanged
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		outcome = Unchanged
		if err := s.findPair(tx, followerID, followeeID, true); err != nil {
			return err
		}
		protected, err := s.isProtected(tx, followeeID)
		if err != nil {
			return err
		}
		changed, kind := false, Followed
		if protected {
			changed, err = s.requestFollow(tx, followerID, followeeID, seq, at)
			kind = Requested
		} else {
			changed, err = s.follow(tx, followerID, followeeID, seq, at)
		}
		if changed {
			outcome = kind
		}
		return err
	})
	return outcome, err
}

// isProtected reads whether user id is protected, within a transaction
// that holds the row's lock.
func (s *Store) isProtected(tx *gorm.DB, id int64) (bool, error) {
	var flags []bool
	q := tx.Model(&models.User{}).Where("id = ?", id)
	if s.mysql {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	if err := q.Pluck("is_protected", &flags).Error; err != nil {
		return false, err
	}
	return len(flags) > 0 && flags[0], nil
}

// ApproveFollowRequest turns requester's request to follow target into
// the follow, in one transaction: the request goes, and the follow comes
// with everything Follow writes (seq orders the lists). It reports false
// when there was no request, changing nothing; ErrNotFound when either
// user is unknown. Between two data nodes it commits on target's, the
// requester's side relayed (onenode.go).
func (s *Store) ApproveFollowRequest(ctx context.Context, targetID, requesterID, seq int64, at time.Time) (bool, error) {
	if s.acrossNodes(requesterID, targetID) {
		return s.approveAcross(ctx, targetID, requesterID, seq, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		if err := s.findPair(tx, requesterID, targetID, true); err != nil {
			return err
		}
		n, err := s.dropFollowRequest(tx, targetID, requesterID)
		if err != nil || n == 0 {
			return err
		}
		changed = true
		_, err = s.follow(tx, requesterID, targetID, seq, at)
		return err
	})
	return changed, err
}

// DropFollowRequest removes requester's request to follow target: target
// rejected it, or requester withdrew it (actor says which). It reports
// false when there was none. Between two data nodes it commits on the
// actor's, the other node's side relayed (onenode.go).
func (s *Store) DropFollowRequest(ctx context.Context, actorID, targetID, requesterID int64) (bool, error) {
	if s.acrossNodes(requesterID, targetID) {
		return s.dropRequestAcross(ctx, actorID, targetID, requesterID)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		n, err := s.dropFollowRequest(tx, targetID, requesterID)
		changed = n > 0
		return err
	})
	return changed, err
}

// dropFollowRequest removes the request's rows within a transaction and
// says how many it removed.
func (s *Store) dropFollowRequest(tx *gorm.DB, targetID, requesterID int64) (int64, error) {
	n, err := s.deleteRows(tx, &models.FollowRequest{}, "follow_requests", "user_id = ? AND requester_id = ?", targetID, requesterID)
	if err != nil || s.shards == nil {
		return n, err
	}
	m, err := s.deleteRows(tx, &followRequestSent{}, "follow_requests_sent", "user_id = ? AND target_id = ?", requesterID, targetID)
	return n + m, err
}

// FollowRequestsPage lists who asked to follow userID, keyset-paged by
// the request's id from bound.
func (s *Store) FollowRequestsPage(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	return s.relationPage(ctx, "follow_requests", "user_id", "requester_id", userID, dir, bound, limit)
}

// FollowRequestCount counts who asked to follow userID.
func (s *Store) FollowRequestCount(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := s.read(ctx).Model(&models.FollowRequest{}).Where("user_id = ?", userID).Count(&n).Error
	return int(n), err
}

// FollowRequesterIDs lists everyone waiting for userID's approval.
func (s *Store) FollowRequesterIDs(ctx context.Context, userID int64) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&models.FollowRequest{}).Where("user_id = ?", userID).Order("id").Pluck("requester_id", &ids).Error
	return ids, err
}

// RequestedAmong returns which of ids requester has asked to follow and
// waits for.
func (s *Store) RequestedAmong(ctx context.Context, requesterID int64, ids []int64) (map[int64]bool, error) {
	if s.shards != nil {
		return s.among(ctx, &followRequestSent{}, "user_id", "target_id", requesterID, ids)
	}
	return s.among(ctx, &models.FollowRequest{}, "requester_id", "user_id", requesterID, ids)
}

// dropFollowRequestsBetween removes the requests of a and b to follow each
// other: a block ends them, as it ends the follows.
func (s *Store) dropFollowRequestsBetween(tx *gorm.DB, a, b int64) error {
	for _, pair := range [][2]int64{{a, b}, {b, a}} {
		if _, err := s.dropFollowRequest(tx, pair[0], pair[1]); err != nil {
			return err
		}
	}
	return nil
}

// followRequestSent is a row of the sharded layout's follow_requests_sent
// table: a request kept a second time by its requester (UserID), on their
// data node. One database answers from follow_requests' reverse index.
type followRequestSent struct {
	UserID   int64 `gorm:"primaryKey;autoIncrement:false"`
	TargetID int64 `gorm:"primaryKey;autoIncrement:false"`
	// ID is the request's (follow_requests' id), so that a rejection's
	// half removes the record of the request it rejected and not of one
	// made again since. 0 on the records made before the column.
	ID int64 `gorm:"not null;default:0"`
}

func (followRequestSent) TableName() string { return "follow_requests_sent" }
