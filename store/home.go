package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm/clause"
)

// The kinds of home entries a viewer can dismiss (home_dismissals.kind).
const (
	DismissPromoted  = 1 // item_id is a post id
	DismissSuggested = 2 // item_id is a user id
)

type promotedPost struct {
	PostID    int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

type homeDismissal struct {
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Kind      int   `gorm:"primaryKey;autoIncrement:false"`
	ItemID    int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

func (promotedPost) TableName() string  { return "promoted_posts" }
func (homeDismissal) TableName() string { return "home_dismissals" }

// SetPromoted adds postID to the promoted posts, or takes it out.
// Idempotent both ways.
func (s *Store) SetPromoted(ctx context.Context, postID int64, promoted bool) error {
	db := s.db.WithContext(ctx)
	if !promoted {
		return db.Where("post_id = ?", postID).Delete(&promotedPost{}).Error
	}
	return db.Clauses(clause.OnConflict{DoNothing: true}).Create(&promotedPost{PostID: postID, CreatedAt: time.Now().UTC()}).Error
}

// PromotedPostIDs lists up to limit promoted posts, the most recently
// promoted first.
func (s *Store) PromotedPostIDs(ctx context.Context, limit int) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&promotedPost{}).Order("created_at DESC, post_id DESC").Limit(limit).Pluck("post_id", &ids).Error
	return ids, err
}

// Dismiss records that userID never wants to see the home entry (kind,
// itemID) again. Idempotent.
func (s *Store) Dismiss(ctx context.Context, userID int64, kind int, itemID int64) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&homeDismissal{UserID: userID, Kind: kind, ItemID: itemID, CreatedAt: time.Now().UTC()}).Error
}

// DismissedAmong returns which of ids userID dismissed as kind.
func (s *Store) DismissedAmong(ctx context.Context, userID int64, kind int, ids []int64) (map[int64]bool, error) {
	found := map[int64]bool{}
	if len(ids) == 0 {
		return found, nil
	}
	var hits []int64
	err := s.db.WithContext(ctx).Model(&homeDismissal{}).Where("user_id = ? AND kind = ? AND item_id IN ?", userID, kind, ids).Pluck("item_id", &hits).Error
	for _, id := range hits {
		found[id] = true
	}
	return found, err
}

// RecentFolloweeIDs lists the limit accounts userID followed most recently:
// one range scan of (user_id, id).
func (s *Store) RecentFolloweeIDs(ctx context.Context, userID int64, limit int) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Table("followings").Where("user_id = ?", userID).Order("id DESC").Limit(limit).Pluck("followee_id", &ids).Error
	return ids, err
}

// RecentFolloweesOf lists, for each of users, the perUser accounts it
// followed most recently, all in one statement of one bounded range scan
// per user: the work is at most len(users) * perUser index entries.
func (s *Store) RecentFolloweesOf(ctx context.Context, users []int64, perUser int) ([]int64, error) {
	if len(users) == 0 {
		return nil, nil
	}
	parts := make([]string, len(users))
	args := make([]any, 0, 2*len(users))
	for i, u := range users {
		// A derived table per user: both MariaDB and SQLite take LIMIT
		// there, and neither takes it inside a bare UNION branch.
		parts[i] = "SELECT followee_id FROM (SELECT followee_id FROM followings WHERE user_id = ? ORDER BY id DESC LIMIT ?) AS f" + fmt.Sprint(i)
		args = append(args, u, perUser)
	}
	var ids []int64
	err := s.db.WithContext(ctx).Raw(strings.Join(parts, " UNION ALL "), args...).Scan(&ids).Error
	return ids, err
}
