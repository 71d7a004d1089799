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

// Sentinel errors of the lists.
var (
	// ErrNotFollowing refuses a list member whom the list's owner does not
	// follow.
	ErrNotFollowing = errors.New("not following")
	// ErrLimitReached refuses a list, or a member, past its limit.
	ErrLimitReached = errors.New("limit reached")
)

// Every statement of a list names its owner, by which both tables are
// placed (store/shards.go): a list's reads and writes reach the owner's
// data node alone, and a list is found only through its owner, so another
// user's id finds nothing.

// CreateList makes owner's list named name with id (a time-ordered id),
// unless owner has maxLists lists already (ErrLimitReached). ErrNotFound
// when owner is unknown.
func (s *Store) CreateList(ctx context.Context, ownerID, id int64, name string, at time.Time, maxLists int) (*models.List, error) {
	l := &models.List{OwnerID: ownerID, ID: id, Name: name, CreatedAt: at}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		// The owner's row lock makes two creations of one owner count one
		// after the other, so that the limit holds.
		if err := s.findPair(tx, ownerID, ownerID, true); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.List{}).Where("owner_id = ?", ownerID).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(maxLists) {
			return fmt.Errorf("user %d has %d lists: %w", ownerID, n, ErrLimitReached)
		}
		return tx.Create(l).Error
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// RenameList renames owner's list id. ErrNotFound when owner has no such
// list.
func (s *Store) RenameList(ctx context.Context, ownerID, id int64, name string) error {
	return s.transaction(ctx, func(tx *gorm.DB) error {
		if _, err := s.lockList(tx, ownerID, id); err != nil {
			return err
		}
		return tx.Model(&models.List{}).Where("owner_id = ? AND id = ?", ownerID, id).Update("name", name).Error
	})
}

// DeleteList deletes owner's list id and its members. ErrNotFound when
// owner has no such list.
func (s *Store) DeleteList(ctx context.Context, ownerID, id int64) error {
	return s.transaction(ctx, func(tx *gorm.DB) error {
		if _, err := s.lockList(tx, ownerID, id); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM list_members WHERE owner_id = ? AND list_id = ?", ownerID, id).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM lists WHERE owner_id = ? AND id = ?", ownerID, id).Error
	})
}

// AddListMember adds member to owner's list listID with id (a
// time-ordered id, which orders the members). It reports false, changing
// nothing, when member is in the list already; ErrNotFound when owner has
// no such list, ErrNotFollowing when owner does not follow member, and
// ErrLimitReached when the list has maxMembers members.
func (s *Store) AddListMember(ctx context.Context, ownerID, listID, memberID, id int64, at time.Time, maxMembers int) (bool, error) {
	added := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		added = false
		// The list's row lock makes two additions to it count one after the
		// other; the share lock on the follow waits out an unfollow, whose
		// transaction takes the member out of the owner's lists.
		if _, err := s.lockList(tx, ownerID, listID); err != nil {
			return err
		}
		q := tx.Model(&models.Following{}).Where("user_id = ? AND followee_id = ?", ownerID, memberID)
		if s.mysql {
			q = q.Clauses(clause.Locking{Strength: "SHARE"})
		}
		var follows []int64
		if err := q.Pluck("followee_id", &follows).Error; err != nil {
			return err
		}
		if len(follows) == 0 {
			return fmt.Errorf("user %d does not follow %d: %w", ownerID, memberID, ErrNotFollowing)
		}
		var n int64
		if err := tx.Model(&models.ListMember{}).Where("owner_id = ? AND list_id = ?", ownerID, listID).Count(&n).Error; err != nil {
			return err
		}
		var there int64
		if err := tx.Model(&models.ListMember{}).Where("owner_id = ? AND list_id = ? AND member_id = ?", ownerID, listID, memberID).Count(&there).Error; err != nil || there > 0 {
			return err
		}
		if n >= int64(maxMembers) {
			return fmt.Errorf("list %d has %d members: %w", listID, n, ErrLimitReached)
		}
		added = true
		return tx.Create(&models.ListMember{OwnerID: ownerID, ListID: listID, MemberID: memberID, ID: id, CreatedAt: at}).Error
	})
	return added, err
}

// RemoveListMember takes member out of owner's list listID. ErrNotFound
// when owner has no such list; nothing happens when member is not in it.
func (s *Store) RemoveListMember(ctx context.Context, ownerID, listID, memberID int64) error {
	return s.transaction(ctx, func(tx *gorm.DB) error {
		if _, err := s.lockList(tx, ownerID, listID); err != nil {
			return err
		}
		return tx.Exec("DELETE FROM list_members WHERE owner_id = ? AND list_id = ? AND member_id = ?", ownerID, listID, memberID).Error
	})
}

// removeFromLists takes followee out of every list of follower's: the
// members of a list are followees, and an unfollow ends that.
func removeFromLists(tx *gorm.DB, followerID, followeeID int64) error {
	return tx.Exec("DELETE FROM list_members WHERE owner_id = ? AND member_id = ?", followerID, followeeID).Error
}

// lockList reads owner's list id, locking its row on MySQL; ErrNotFound
// when there is none.
func (s *Store) lockList(tx *gorm.DB, ownerID, id int64) (*models.List, error) {
	q := tx.Where("owner_id = ? AND id = ?", ownerID, id)
	if s.mysql {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var found []models.List
	if err := q.Limit(1).Find(&found).Error; err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("list %d of user %d: %w", id, ownerID, ErrNotFound)
	}
	return &found[0], nil
}

// ListByID is owner's list id with its member count; nil when owner has
// no such list (another user's included).
func (s *Store) ListByID(ctx context.Context, ownerID, id int64) (*models.List, error) {
	var found []*models.List
	if err := s.read(ctx).Where("owner_id = ? AND id = ?", ownerID, id).Limit(1).Find(&found).Error; err != nil || len(found) == 0 {
		return nil, err
	}
	return found[0], s.countMembers(ctx, ownerID, found)
}

// ListsPage pages owner's lists by id from bound, with their member
// counts.
func (s *Store) ListsPage(ctx context.Context, ownerID int64, dir Direction, bound int64, limit int) ([]*models.List, error) {
	var lists []*models.List
	if err := keyset(s.read(ctx).Where("owner_id = ?", ownerID), "id", dir, bound).Limit(limit).Find(&lists).Error; err != nil {
		return nil, err
	}
	return lists, s.countMembers(ctx, ownerID, lists)
}

// countMembers sets the member counts of owner's lists, in one statement.
func (s *Store) countMembers(ctx context.Context, ownerID int64, lists []*models.List) error {
	if len(lists) == 0 {
		return nil
	}
	ids := make([]int64, len(lists))
	for i, l := range lists {
		ids[i] = l.ID
	}
	var rows []struct {
		ListID int64
		N      int
	}
	err := s.read(ctx).Raw("SELECT list_id, COUNT(*) AS n FROM list_members WHERE owner_id = ? AND list_id IN ? GROUP BY list_id", ownerID, ids).Scan(&rows).Error
	counts := make(map[int64]int, len(rows))
	for _, r := range rows {
		counts[r.ListID] = r.N
	}
	for _, l := range lists {
		l.MemberCount = counts[l.ID]
	}
	return err
}

// ListCount counts owner's lists.
func (s *Store) ListCount(ctx context.Context, ownerID int64) (int, error) {
	var n int64
	err := s.read(ctx).Model(&models.List{}).Where("owner_id = ?", ownerID).Count(&n).Error
	return int(n), err
}

// ListMembersPage pages the members of owner's list listID, keyset-paged
// by the member's id (when they were added) from bound.
func (s *Store) ListMembersPage(ctx context.Context, ownerID, listID int64, dir Direction, bound int64, limit int) ([]models.Relation, error) {
	var rows []models.Relation
	q := s.read(ctx).Table("list_members").
		Select("member_id AS user_id, id, created_at AS followed_at").
		Where("owner_id = ? AND list_id = ?", ownerID, listID)
	err := keyset(q, "id", dir, bound).Limit(limit).Scan(&rows).Error
	return rows, err
}

// OwnedList is one of an owner's lists with its members, most recently
// added first: what the cache tiers keep of a list (feed/lists).
type OwnedList struct {
	ID        int64
	Name      string
	CreatedAt time.Time
	Members   []int64
}

// ListsWithMembers lists owner's lists, by id, each with its members, in
// two statements on the primary (each reaches the owner's data node
// alone): the cache tiers fill their copy of a user's lists from it, and
// a copy filled from a lagging replica could undo a change of the owner's
// that they were told of.
func (s *Store) ListsWithMembers(ctx context.Context, ownerID int64) ([]OwnedList, error) {
	var lists []models.List
	db := s.db.WithContext(ctx)
	if err := db.Where("owner_id = ?", ownerID).Order("id").Find(&lists).Error; err != nil || len(lists) == 0 {
		return nil, err
	}
	var members []models.ListMember
	if err := db.Where("owner_id = ?", ownerID).Order("id DESC").Find(&members).Error; err != nil {
		return nil, err
	}
	out := make([]OwnedList, len(lists))
	at := make(map[int64]int, len(lists))
	for i, l := range lists {
		out[i] = OwnedList{ID: l.ID, Name: l.Name, CreatedAt: l.CreatedAt}
		at[l.ID] = i
	}
	for _, m := range members {
		if i, ok := at[m.ListID]; ok {
			out[i].Members = append(out[i].Members, m.MemberID)
		}
	}
	return out, nil
}
