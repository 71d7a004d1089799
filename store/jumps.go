package store

import (
	"context"
	"errors"
	"math"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// A page jump (the page at an offset of a followers or following list) is
// answered below from the offset index of seed 004: relation_marks holds,
// for each list, marks (id, below) where below is the number of the list's
// rows whose follow id is under id. A mark need not be a row: it keeps its
// meaning when its row is unfollowed, because every follow and unfollow
// moves the below of the marks above its id in its own transaction. Two
// marks bound every list: (0, 0) and (math.MaxInt64, the list's length).
// A jump finds the mark nearest under its position through an index and
// reads from there, so it skips at most 2*RelationMarkSpacing rows, never
// the rows before the offset; when a gap grew wider than that (follows
// land at the newest end), the list's marks are rebuilt first.

// RelationMarkSpacing is the number of rows between two marks of a rebuilt
// offset index. A jump reads at most twice this many rows it does not
// return; a follow or unfollow moves at most length/RelationMarkSpacing marks.
const RelationMarkSpacing = 100

// relationMarkBatch is the most rows one read of a rebuild or of a cache
// build takes.
const relationMarkBatch = 10_000

// RelationList names one of a user's two relation lists.
type RelationList int8

const (
	FollowersList RelationList = 1 // who follows the user
	FollowingList RelationList = 2 // whom the user follows
)

// table and other are the list's table and the column of the other user.
func (l RelationList) table() (string, string) {
	if l == FollowersList {
		return "followers", "follower_id"
	}
	return "followings", "followee_id"
}

type relationMark struct {
	List   RelationList `gorm:"primaryKey;autoIncrement:false"`
	UserID int64        `gorm:"primaryKey;autoIncrement:false"`
	ID     int64        `gorm:"primaryKey;autoIncrement:false"`
	Below  int64
}

func (relationMark) TableName() string { return "relation_marks" }

// errMarksStale says a list's offset index is missing or too sparse where
// a jump needs it.
var errMarksStale = errors.New("offset index stale")

// shiftMarks moves the marks of a list above id by delta: a row with that
// id entered (+1) or left (-1) the list.
func shiftMarks(tx *gorm.DB, list RelationList, userID, id int64, delta int) error {
	return tx.Model(&relationMark{}).Where("list = ? AND user_id = ? AND id > ?", list, userID, id).
		Update("below", gorm.Expr("below + ?", delta)).Error
}

// RelationsAt reads up to limit rows of userID's list, newest follow first,
// from offset rows after the newest, and the list's length. Its cost does
// not grow with offset (see RelationMarkSpacing).
func (s *Store) RelationsAt(ctx context.Context, list RelationList, userID int64, offset, limit int) ([]models.Relation, int, error) {
	for range 2 {
		rows, total, err := s.relationsAt(ctx, list, userID, offset, limit)
		if !errors.Is(err, errMarksStale) {
			return rows, total, err
		}
		if err := s.RebuildMarks(ctx, list, userID); err != nil {
			return nil, 0, err
		}
	}
	return nil, 0, errors.New("offset index: stale right after its rebuild")
}

func (s *Store) relationsAt(ctx context.Context, list RelationList, userID int64, offset, limit int) ([]models.Relation, int, error) {
	var rows []models.Relation
	var total int64
	table, other := list.table()
	// One snapshot for the marks and the rows, which change together.
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var top []relationMark
		if err := tx.Where("list = ? AND user_id = ? AND id = ?", list, userID, int64(math.MaxInt64)).Limit(1).Find(&top).Error; err != nil {
			return err
		}
		if len(top) == 0 {
			return errMarksStale
		}
		total = top[0].Below
		if int64(offset) >= total || limit == 0 {
			return nil
		}
		// Ascending positions of the page: from lo (its oldest) to hi.
		hi := total - 1 - int64(offset)
		lo := max(0, hi-int64(limit)+1)
		q := tx.Table(table).Select(other+" AS user_id, id, created_at AS followed_at").Where("user_id = ?", userID)
		if offset < RelationMarkSpacing {
			// Near the newest end: the rows before the page are few.
			return q.Order("id DESC").Offset(offset).Limit(int(hi - lo + 1)).Scan(&rows).Error
		}
		var near []relationMark
		err := tx.Where("list = ? AND user_id = ? AND below <= ?", list, userID, lo).
			Order("below DESC, id DESC").Limit(1).Find(&near).Error
		if err != nil {
			return err
		}
		if len(near) == 0 || lo-near[0].Below > 2*RelationMarkSpacing {
			return errMarksStale
		}
		err = q.Where("id >= ?", near[0].ID).Order("id ASC").
			Offset(int(lo - near[0].Below)).Limit(int(hi - lo + 1)).Scan(&rows).Error
		slices.Reverse(rows)
		return err
	})
	return rows, int(total), err
}

// RebuildMarks writes userID's list's offset index afresh: a mark at every
// RelationMarkSpacing-th row. It holds the user's row lock, which every
// follow and unfollow of the list takes before it moves the marks, so
// none of them is counted twice or missed.
func (s *Store) RebuildMarks(ctx context.Context, list RelationList, userID int64) error {
	table, _ := list.table()
	return s.transaction(ctx, func(tx *gorm.DB) error {
		lock := tx.Model(&models.User{}).Select("id").Where("id = ?", userID)
		if s.mysql {
			lock = lock.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var found []int64
		if err := lock.Pluck("id", &found).Error; err != nil {
			return err
		}
		if err := tx.Where("list = ? AND user_id = ?", list, userID).Delete(&relationMark{}).Error; err != nil {
			return err
		}
		marks := []relationMark{{List: list, UserID: userID, ID: 0, Below: 0}}
		var n, after int64
		for {
			var ids []int64
			err := tx.Table(table).Where("user_id = ? AND id > ?", userID, after).
				Order("id ASC").Limit(relationMarkBatch).Pluck("id", &ids).Error
			if err != nil {
				return err
			}
			for _, id := range ids {
				if n > 0 && n%RelationMarkSpacing == 0 {
					marks = append(marks, relationMark{List: list, UserID: userID, ID: id, Below: n})
				}
				n++
			}
			if len(ids) < relationMarkBatch {
				break
			}
			after = ids[len(ids)-1]
		}
		marks = append(marks, relationMark{List: list, UserID: userID, ID: math.MaxInt64, Below: n})
		return tx.CreateInBatches(marks, 1000).Error
	})
}

// DropMarks deletes userID's list's offset index, which then costs its
// follows nothing until a jump through MySQL rebuilds it: a list that a
// cache in Redis serves does not keep one.
func (s *Store) DropMarks(ctx context.Context, list RelationList, userID int64) error {
	return s.db.WithContext(ctx).Where("list = ? AND user_id = ?", list, userID).Delete(&relationMark{}).Error
}

// HasMarks reports whether userID's list has an offset index.
func (s *Store) HasMarks(ctx context.Context, list RelationList, userID int64) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&relationMark{}).Where("list = ? AND user_id = ?", list, userID).Count(&n).Error
	return n > 0, err
}

// RelationsAfter reads up to limit rows of userID's list with follow ids
// above after, oldest first: the batches of a cache build.
func (s *Store) RelationsAfter(ctx context.Context, list RelationList, userID, after int64, limit int) ([]models.Relation, error) {
	table, other := list.table()
	var rows []models.Relation
	err := s.db.WithContext(ctx).Table(table).Select(other+" AS user_id, id, created_at AS followed_at").
		Where("user_id = ? AND id > ?", userID, after).Order("id ASC").Limit(limit).Scan(&rows).Error
	return rows, err
}

// RelationID returns the follow id that places other in userID's list, or
// 0 when other is not in it.
func (s *Store) RelationID(ctx context.Context, list RelationList, userID, other int64) (int64, error) {
	table, column := list.table()
	var ids []int64
	err := s.db.WithContext(ctx).Table(table).Where("user_id = ? AND "+column+" = ?", userID, other).Limit(1).Pluck("id", &ids).Error
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}

// shiftRelationMarks moves the offset indexes of the two lists a follow
// (+1) or unfollow (-1) of id seq changes; it runs after bumpFollowCounts,
// holding both users' row locks (see RebuildMarks).
func shiftRelationMarks(tx *gorm.DB, followerID, followeeID, seq int64, delta int, sides followSides) error {
	if sides.follower {
		if err := shiftMarks(tx, FollowersList, followeeID, seq, delta); err != nil {
			return err
		}
	}
	if !sides.following {
		return nil
	}
	return shiftMarks(tx, FollowingList, followerID, seq, delta)
}

// RelationsOf reads the rows of others in userID's list by primary key, in
// the order of others; one that left the list meanwhile is left out.
func (s *Store) RelationsOf(ctx context.Context, list RelationList, userID int64, others []int64) ([]models.Relation, error) {
	if len(others) == 0 {
		return nil, nil
	}
	table, other := list.table()
	var found []models.Relation
	err := s.db.WithContext(ctx).Table(table).Select(other+" AS user_id, id, created_at AS followed_at").
		Where("user_id = ? AND "+other+" IN ?", userID, others).Scan(&found).Error
	if err != nil {
		return nil, err
	}
	byUser := make(map[int64]models.Relation, len(found))
	for _, r := range found {
		byUser[r.UserID] = r
	}
	rows := make([]models.Relation, 0, len(others))
	for _, id := range others {
		if r, ok := byUser[id]; ok {
			rows = append(rows, r)
		}
	}
	return rows, nil
}
