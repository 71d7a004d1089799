package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// Mute makes muter mute muted, with a muted event, in one transaction; it
// moves no count and keeps any follow. id orders the muter's list (a
// time-ordered id). It reports false, changing nothing, when the mute
// already exists; ErrNotFound when either user is unknown.
func (s *Store) Mute(ctx context.Context, muterID, mutedID, id int64, at time.Time) (bool, error) {
	if s.acrossNodes(muterID, mutedID) {
		return s.muteAcross(ctx, muterID, mutedID, id, true, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		// A mute touches neither user's row, so it needs no lock on them.
		if err := s.findPair(tx, muterID, mutedID, false); err != nil {
			return err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Mute{MuterID: muterID, MutedID: mutedID, ID: id, CreatedAt: at})
		if res.Error != nil {
			return res.Error
		}
		wrote := res.RowsAffected == 1
		if s.shards != nil {
			// Each part is written if it is missing, as Block's: a retry
			// completes a mute whose other node failed to commit.
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&mutedBy{UserID: mutedID, MuterID: muterID})
			if res.Error != nil {
				return res.Error
			}
			wrote = wrote || res.RowsAffected == 1
		}
		if !wrote {
			return nil
		}
		changed = true
		return s.appendEvent(tx, models.EventMuted, models.MuteEventPayload{MuterID: muterID, MutedID: mutedID}, at)
	})
	return changed, err
}

// Unmute ends muter's mute of muted, with an unmuted event. It reports
// false, changing nothing, when there was no mute (an unknown user
// included, as Unfollow).
func (s *Store) Unmute(ctx context.Context, muterID, mutedID int64, at time.Time) (bool, error) {
	if s.acrossNodes(muterID, mutedID) {
		return s.muteAcross(ctx, muterID, mutedID, 0, false, at)
	}
	changed := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		changed = false
		n, err := s.deleteRows(tx, &models.Mute{}, "mutes", "muter_id = ? AND muted_id = ?", muterID, mutedID)
		if err != nil {
			return err
		}
		if s.shards != nil {
			m, err := s.deleteRows(tx, &mutedBy{}, "muted_by", "user_id = ? AND muter_id = ?", mutedID, muterID)
			if err != nil {
				return err
			}
			n += m
		}
		if n == 0 {
			return nil
		}
		changed = true
		return s.appendEvent(tx, models.EventUnmuted, models.MuteEventPayload{MuterID: muterID, MutedID: mutedID}, at)
	})
	return changed, err
}

// MutedPage lists whom userID mutes, keyset-paged by the mute's id from
// bound.
func (s *Store) MutedPage(ctx context.Context, userID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	return s.relationPage(ctx, "mutes", "muter_id", "muted_id", userID, dir, bound, limit)
}

// MutedCount counts whom userID mutes.
func (s *Store) MutedCount(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := s.read(ctx).Model(&models.Mute{}).Where("muter_id = ?", userID).Count(&n).Error
	return int(n), err
}

// MutedAmong returns which of ids viewer mutes.
func (s *Store) MutedAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return s.among(ctx, &models.Mute{}, "muter_id", "muted_id", viewerID, ids)
}

// MutingAmong returns which of ids mute userID: the followers a post of
// userID's need not reach.
func (s *Store) MutingAmong(ctx context.Context, userID int64, ids []int64) (map[int64]bool, error) {
	if s.shards != nil {
		return s.among(ctx, &mutedBy{}, "user_id", "muter_id", userID, ids)
	}
	return s.among(ctx, &models.Mute{}, "muted_id", "muter_id", userID, ids)
}

// mutedBy is a row of the sharded layout's muted_by table: a mute kept a
// second time by the muted user (UserID), on their data node, so that
// "who mutes me" (MutingAmong, once per post the fan-out sends) is read
// there, as blocked_by keeps a block. Mute and Unmute write it with the
// mutes row, in their transaction. One database answers from mutes'
// reverse index instead.
type mutedBy struct {
	UserID  int64 `gorm:"primaryKey;autoIncrement:false"`
	MuterID int64 `gorm:"primaryKey;autoIncrement:false"`
}

func (mutedBy) TableName() string { return "muted_by" }
