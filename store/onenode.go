package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// The writes of the sharded layout between two users on two data nodes:
// each commits on the actor's node alone, its side with the other node's
// half through the relay (relay.go). The actor reads their own side at
// once; the other side follows within the relay's bound. On one database,
// and between two users of one node, the writes are those of
// relations.go, blocks.go, mutes.go and followrequests.go, in one
// transaction.

// acrossNodes reports whether a write between a and b spans two data
// nodes.
func (s *Store) acrossNodes(a, b int64) bool {
	return s.shards != nil && s.ShardOf(a) != s.ShardOf(b)
}

// userExists checks, outside any transaction (a read of the other node
// within one would make the commit touch it), that user id exists.
func (s *Store) userExists(ctx context.Context, id int64) error {
	var found []int64
	if err := s.db.WithContext(ctx).Model(&models.User{}).Where("id = ?", id).Limit(1).Pluck("id", &found).Error; err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	return nil
}

// lockUser locks user id's row on their node: ErrNotFound when missing.
// Every write of the actor takes it first, as findPair does.
func lockUser(tx *gorm.DB, id int64) error {
	var found []int64
	err := tx.Model(&models.User{}).Where("id = ?", id).Clauses(clause.Locking{Strength: "UPDATE"}).Pluck("id", &found).Error
	if err == nil && len(found) == 0 {
		err = fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	return err
}

// followAcross is Follow between two nodes: followings with the
// follower's count and marks on the follower's node; the followers row
// follows through the relay, which undoes the follow if the followee
// blocked the follower meanwhile. Blocks either way are checked on the
// follower's node (blocks, and blocked_by for the followee's).
func (s *Store) followAcross(ctx context.Context, followerID, followeeID, seq int64, at time.Time) (bool, error) {
	if err := s.userExists(ctx, followeeID); err != nil {
		return false, err
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		if err := lockUser(tx, followerID); err != nil {
			return err
		}
		var blocked []int64
		err := tx.Raw(`SELECT 1 FROM blocks WHERE blocker_id = ? AND blocked_id = ?
			UNION ALL SELECT 1 FROM blocked_by WHERE user_id = ? AND blocker_id = ?`,
			followerID, followeeID, followerID, followeeID).Scan(&blocked).Error
		if err != nil {
			return err
		}
		if len(blocked) > 0 {
			return ErrBlocked
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Following{UserID: followerID, FolloweeID: followeeID, ID: seq, CreatedAt: at})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		side := followSides{following: true}
		if err := bumpFollowCounts(tx, followerID, followeeID, +1, side); err != nil {
			return err
		}
		if err := shiftRelationMarks(tx, followerID, followeeID, seq, +1, side); err != nil {
			return err
		}
		changed = true
		half := &relayed{}
		half.op(relayOp{Op: opFollowerAdded, User: followeeID, Other: followerID, Seq: seq, At: at})
		if err := half.event(tx, models.EventFollowed, models.FollowEventPayload{FollowerID: followerID, FolloweeID: followeeID}, at); err != nil {
			return err
		}
		return s.relay(tx, followerID, followeeID, half)
	})
	return changed, err
}

// approveAcross is ApproveFollowRequest between two nodes, committed on
// the approver's (the target's): the request, and the followers row with
// the target's count and marks; the requester's side (followings with
// their count and marks, their record of the request) follows through the
// relay, with the follow's event, and is refused there if the requester
// blocked the target meanwhile. A block either way made before drops the
// request, on this node too, so a request still here is one to approve.
func (s *Store) approveAcross(ctx context.Context, targetID, requesterID, seq int64, at time.Time) (bool, error) {
	if err := s.userExists(ctx, requesterID); err != nil {
		return false, err
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		if err := lockUser(tx, targetID); err != nil {
			return err
		}
		n, err := s.deleteRows(tx, &models.FollowRequest{}, "follow_requests", "user_id = ? AND requester_id = ?", targetID, requesterID)
		if err != nil || n == 0 {
			return err
		}
		changed = true
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Follower{UserID: targetID, FollowerID: requesterID, ID: seq, CreatedAt: at})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// A follow's row, whose end may be on its way here: the
			// approval's id outlives that end (takeApprovalID).
			if err := takeApprovalID(tx, FollowersList, targetID, requesterID, seq, at); err != nil {
				return err
			}
		} else {
			side := followSides{follower: true}
			if err := bumpFollowCounts(tx, requesterID, targetID, +1, side); err != nil {
				return err
			}
			if err := shiftRelationMarks(tx, requesterID, targetID, seq, +1, side); err != nil {
				return err
			}
		}
		half := &relayed{}
		half.op(relayOp{Op: opFollowingAdded, User: requesterID, Other: targetID, Seq: seq, At: at})
		if err := half.event(tx, models.EventFollowed, models.FollowEventPayload{FollowerID: requesterID, FolloweeID: targetID}, at); err != nil {
			return err
		}
		return s.relay(tx, targetID, requesterID, half)
	})
	return changed, err
}

// requestAcross is RequestFollow between two nodes, committed on the
// requester's: their record of the request (follow_requests_sent); the
// request itself (follow_requests) follows through the relay, which
// refuses it if a block came between them meanwhile and approves it if
// the target is not protected any more. Blocks either way and a follow
// already made are checked on the requester's node, as followAcross
// checks them.
func (s *Store) requestAcross(ctx context.Context, requesterID, targetID, id int64, at time.Time) (bool, error) {
	if err := s.userExists(ctx, targetID); err != nil {
		return false, err
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		if err := lockUser(tx, requesterID); err != nil {
			return err
		}
		var found []int64
		err := tx.Raw(`SELECT 1 FROM blocks WHERE blocker_id = ? AND blocked_id = ?
			UNION ALL SELECT 1 FROM blocked_by WHERE user_id = ? AND blocker_id = ?`,
			requesterID, targetID, requesterID, targetID).Scan(&found).Error
		if err != nil {
			return err
		}
		if len(found) > 0 {
			return ErrBlocked
		}
		if err := tx.Model(&models.Following{}).Where("user_id = ? AND followee_id = ?", requesterID, targetID).Pluck("id", &found).Error; err != nil || len(found) > 0 {
			return err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&followRequestSent{UserID: requesterID, TargetID: targetID, ID: id})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		changed = true
		half := &relayed{}
		half.op(relayOp{Op: opRequestAdded, User: targetID, Other: requesterID, Seq: id, At: at})
		return s.relay(tx, requesterID, targetID, half)
	})
	return changed, err
}

// dropRequestAcross is DropFollowRequest between two nodes, committed on
// the actor's: a rejection removes the request on the target's node, and
// the requester's record of it through the relay; a withdrawal the
// record on the requester's node, and the request through the relay.
func (s *Store) dropRequestAcross(ctx context.Context, actorID, targetID, requesterID int64) (bool, error) {
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		half := &relayed{}
		other := requesterID
		switch actorID {
		case targetID:
			seq, err := s.deleteFollow(tx, "follow_requests", "requester_id", targetID, requesterID, 0, 0)
			if err != nil || seq == 0 {
				return err
			}
			half.op(relayOp{Op: opRequestSentRemoved, User: requesterID, Other: targetID, Seq: seq, At: time.Now().UTC()})
		case requesterID:
			other = targetID
			var seq []int64
			err := tx.Raw("DELETE FROM follow_requests_sent WHERE user_id = ? AND target_id = ? RETURNING id", requesterID, targetID).Scan(&seq).Error
			if err != nil || len(seq) == 0 {
				return err
			}
			half.op(relayOp{Op: opRequestRemoved, User: targetID, Other: requesterID, Seq: seq[0], At: time.Now().UTC()})
		default:
			return fmt.Errorf("user %d drops the request of %d to follow %d: only either of them may", actorID, requesterID, targetID)
		}
		changed = true
		return s.relay(tx, actorID, other, half)
	})
	return changed, err
}

// unfollowAcross is Unfollow between two nodes, committed on the
// follower's: followings with their count, marks and lists; the
// followee's side through the relay, which ends there every follow of the
// two made before the unfollow (id), the one this node knew of included
// whatever its id. A follow this node had not seen yet (the followee's
// approval of a request, on its way here) ends here too once it arrives
// (applyHalf).
func (s *Store) unfollowAcross(ctx context.Context, followerID, followeeID, id int64, at time.Time) (bool, error) {
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		seq, err := s.deleteFollow(tx, "followings", "followee_id", followerID, followeeID, 0, 0)
		if err != nil || seq == 0 {
			return err
		}
		if err := removeFromLists(tx, followerID, followeeID); err != nil {
			return err
		}
		side := followSides{following: true}
		if err := bumpFollowCounts(tx, followerID, followeeID, -1, side); err != nil {
			return err
		}
		if err := shiftRelationMarks(tx, followerID, followeeID, seq, -1, side); err != nil {
			return err
		}
		changed = true
		half := &relayed{}
		half.op(relayOp{Op: opFollowerRemoved, User: followeeID, Other: followerID, Seq: seq, Before: max(id, seq+1), At: at})
		if err := half.event(tx, models.EventUnfollowed, models.FollowEventPayload{FollowerID: followerID, FolloweeID: followeeID}, at); err != nil {
			return err
		}
		return s.relay(tx, followerID, followeeID, half)
	})
	return changed, err
}

// removeFollowerAcross is RemoveFollower between two nodes, committed on
// the user's: followers with the user's count and marks; the follower's
// side through the relay, which ends there every follow of theirs made
// before the removal (id), the one this node knew of included whatever
// its id (the instances' clocks differ). A follow made after the one this
// node knew, whose half had not arrived yet, ends there too, and the
// relay takes its followers row away here once it arrives (applyHalf).
func (s *Store) removeFollowerAcross(ctx context.Context, userID, followerID, id int64, at time.Time) (bool, error) {
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		seq, err := s.deleteFollow(tx, "followers", "follower_id", userID, followerID, 0, 0)
		if err != nil || seq == 0 {
			return err
		}
		side := followSides{follower: true}
		if err := bumpFollowCounts(tx, followerID, userID, -1, side); err != nil {
			return err
		}
		if err := shiftRelationMarks(tx, followerID, userID, seq, -1, side); err != nil {
			return err
		}
		changed = true
		half := &relayed{}
		half.op(relayOp{Op: opFollowingRemoved, User: followerID, Other: userID, Seq: seq, Before: max(id, seq+1), At: at})
		if err := half.event(tx, models.EventFollowerRemoved, models.FollowEventPayload{FollowerID: followerID, FolloweeID: userID}, at); err != nil {
			return err
		}
		return s.relay(tx, userID, followerID, half)
	})
	return changed, err
}

// blockAcross is Block between two nodes, committed on the blocker's: the
// block, the blocker's side of the follows either way and of the follow
// requests; the blocked user's side (blocked_by, their rows of the
// follows and requests) through the relay. The relay ends any follow of
// the blocked user's, including one whose own half is still on its way
// (that one is refused on arrival), and any request of the blocked
// user's, even one that arrives after an unblock (voidedRequests).
func (s *Store) blockAcross(ctx context.Context, blockerID, blockedID, id int64, at time.Time) (bool, error) {
	if err := s.userExists(ctx, blockedID); err != nil {
		return false, err
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		if err := lockUser(tx, blockerID); err != nil {
			return err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Block{BlockerID: blockerID, BlockedID: blockedID, ID: id, CreatedAt: at})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		half := &relayed{}
		// The requests of either way kept on the blocker's node: the
		// blocked user's that arrived, and the blocker's records of their
		// own. The blocked user's still on their way are void on arrival.
		arrived, err := s.deleteFollow(tx, "follow_requests", "requester_id", blockerID, blockedID, 0, 0)
		if err != nil {
			return err
		}
		if _, err := s.deleteRows(tx, &followRequestSent{}, "follow_requests_sent", "user_id = ? AND target_id = ?", blockerID, blockedID); err != nil {
			return err
		}
		err = tx.Clauses(clause.OnConflict{DoUpdates: clause.Assignments(map[string]any{"before_id": gorm.Expr("GREATEST(before_id, ?)", id)})}).
			Create(&voidedRequests{UserID: blockerID, RequesterID: blockedID, BeforeID: id}).Error
		if err != nil {
			return err
		}
		// On the blocked user's node the records of their requests go:
		// those the block voids, and the one that arrived here, whose id
		// may be larger than the block's (the instances' clocks differ).
		// A later one is still on its way, and its arrival decides.
		half.op(relayOp{Op: opBlockedByAdded, User: blockedID, Other: blockerID, At: at})
		half.op(relayOp{Op: opRequestsDropped, User: blockedID, Other: blockerID, Before: max(id, arrived+1), At: at})
		// The blocker's follow of the blocked user.
		seq, err := s.deleteFollow(tx, "followings", "followee_id", blockerID, blockedID, 0, 0)
		if err != nil {
			return err
		}
		if seq != 0 {
			if err := removeFromLists(tx, blockerID, blockedID); err != nil {
				return err
			}
			side := followSides{following: true}
			if err := bumpFollowCounts(tx, blockerID, blockedID, -1, side); err != nil {
				return err
			}
			if err := shiftRelationMarks(tx, blockerID, blockedID, seq, -1, side); err != nil {
				return err
			}
			if err := half.event(tx, models.EventUnfollowed, models.FollowEventPayload{FollowerID: blockerID, FolloweeID: blockedID}, at); err != nil {
				return err
			}
		}
		half.op(relayOp{Op: opFollowerRemoved, User: blockedID, Other: blockerID, At: at})
		// The blocked user's follow of the blocker.
		seq, err = s.deleteFollow(tx, "followers", "follower_id", blockerID, blockedID, 0, 0)
		if err != nil {
			return err
		}
		removed, err := newEvent(models.EventFollowerRemoved, models.FollowEventPayload{FollowerID: blockedID, FolloweeID: blockerID}, at)
		if err != nil {
			return err
		}
		removed.TraceParent = TraceParent(tx.Statement.Context)
		if seq != 0 {
			side := followSides{follower: true}
			if err := bumpFollowCounts(tx, blockedID, blockerID, -1, side); err != nil {
				return err
			}
			if err := shiftRelationMarks(tx, blockedID, blockerID, seq, -1, side); err != nil {
				return err
			}
			half.events = append(half.events, removed)
		}
		half.op(relayOp{Op: opFollowingRemoved, User: blockedID, Other: blockerID, Seq: seq, Before: max(id, seq+1), At: at, Event: &removed})
		if err := half.event(tx, models.EventBlocked, models.BlockEventPayload{BlockerID: blockerID, BlockedID: blockedID}, at); err != nil {
			return err
		}
		changed = true
		return s.relay(tx, blockerID, blockedID, half)
	})
	return changed, err
}

// unblockAcross is Unblock between two nodes: blocks on the blocker's,
// blocked_by through the relay.
func (s *Store) unblockAcross(ctx context.Context, blockerID, blockedID int64, at time.Time) (bool, error) {
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		n, err := s.deleteRows(tx, &models.Block{}, "blocks", "blocker_id = ? AND blocked_id = ?", blockerID, blockedID)
		if err != nil || n == 0 {
			return err
		}
		changed = true
		half := &relayed{}
		half.op(relayOp{Op: opBlockedByRemoved, User: blockedID, Other: blockerID, At: at})
		if err := half.event(tx, models.EventUnblocked, models.BlockEventPayload{BlockerID: blockerID, BlockedID: blockedID}, at); err != nil {
			return err
		}
		return s.relay(tx, blockerID, blockedID, half)
	})
	return changed, err
}

// muteAcross is Mute (mute, when true) or Unmute between two nodes:
// mutes on the muter's, muted_by through the relay.
func (s *Store) muteAcross(ctx context.Context, muterID, mutedID, id int64, mute bool, at time.Time) (bool, error) {
	if mute {
		if err := s.userExists(ctx, mutedID); err != nil {
			return false, err
		}
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		half := &relayed{}
		kind := models.EventMuted
		if mute {
			if err := lockUser(tx, muterID); err != nil {
				return err
			}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).
				Create(&models.Mute{MuterID: muterID, MutedID: mutedID, ID: id, CreatedAt: at})
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error
			}
			half.op(relayOp{Op: opMutedByAdded, User: mutedID, Other: muterID, At: at})
		} else {
			kind = models.EventUnmuted
			n, err := s.deleteRows(tx, &models.Mute{}, "mutes", "muter_id = ? AND muted_id = ?", muterID, mutedID)
			if err != nil || n == 0 {
				return err
			}
			half.op(relayOp{Op: opMutedByRemoved, User: mutedID, Other: muterID, At: at})
		}
		changed = true
		if err := half.event(tx, kind, models.MuteEventPayload{MuterID: muterID, MutedID: mutedID}, at); err != nil {
			return err
		}
		return s.relay(tx, muterID, mutedID, half)
	})
	return changed, err
}

// repostSharded is Repost on the sharded layout: the repost, its author's
// count and its event on the reposter's node; the original's count and
// its reposts_by_original row on the original's node, through the relay
// (at once when both are on one node). The original is checked live
// before the transaction.
func (s *Store) repostSharded(ctx context.Context, p *models.Post) (*models.Post, bool, error) {
	original := *p.RepostOfID
	var live []int64
	if err := s.db.WithContext(ctx).Model(&models.Post{}).Where("id = ? AND deleted_at IS NULL", original).Limit(1).Pluck("id", &live).Error; err != nil {
		return nil, false, err
	}
	if len(live) == 0 {
		return p, false, ErrNotFound
	}
	result, created := p, false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		result, created = p, false
		if err := bumpPostCount(tx, p.AuthorID, +1); err != nil {
			return err
		}
		var existing models.Post
		err := tx.Table(s.on("posts", p.AuthorID)).
			Where("author_id = ? AND repost_of_id = ? AND deleted_at IS NULL", p.AuthorID, original).Take(&existing).Error
		if err == nil {
			result = &existing
			return errRollback
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if err := tx.Create(p).Error; err != nil {
			return err
		}
		created = true
		half := &relayed{}
		half.op(relayOp{Op: opRepostAdded, Post: original, Repost: p.ID, Other: p.AuthorID, At: p.CreatedAt})
		if err := half.event(tx, models.EventPostCreated, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, p.CreatedAt); err != nil {
			return err
		}
		return s.relay(tx, p.AuthorID, original, half)
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return result, created, err
}
