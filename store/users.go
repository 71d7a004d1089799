package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// CreateUser inserts a new user; ErrUsernameTaken when the name, ignoring
// case, is in use.
func (s *Store) CreateUser(ctx context.Context, u *models.User) error {
	u.UsernameKey = strings.ToLower(u.Username)
	var err error
	if s.shards == nil {
		err = s.db.WithContext(ctx).Create(u).Error
	} else {
		err = s.transaction(ctx, func(tx *gorm.DB) error {
			if err := s.claimUsernames(tx, []*models.User{u}); err != nil {
				return err
			}
			return tx.Create(u).Error
		})
	}
	if isDuplicate(err) {
		return ErrUsernameTaken
	}
	return err
}

// UserByUsername finds a user by name, ignoring case.
func (s *Store) UserByUsername(ctx context.Context, username string) (*models.User, error) {
	if s.shards != nil {
		return s.userByUsernameOnShards(ctx, username)
	}
	var u models.User
	err := s.db.WithContext(ctx).Where("username_key = ?", strings.ToLower(username)).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &u, err
}

// userByUsernameOnShards is UserByUsername on the sharded layout: the
// name's owner from usernames, on the name's data node, then the user
// from the user's.
func (s *Store) userByUsernameOnShards(ctx context.Context, name string) (*models.User, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&username{}).Where("username_key = ?", strings.ToLower(name)).Pluck("user_id", &ids).Error
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrNotFound
	}
	users, err := s.UsersByIDs(Primary(ctx), ids[:1])
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, ErrNotFound
	}
	return users[0], nil
}

// claimUsernames writes the usernames rows of users on the sharded
// layout, in the transaction that creates them: a name already held fails
// it with a duplicate key. Nothing on one database, where users' unique
// key holds the names.
func (s *Store) claimUsernames(tx *gorm.DB, users []*models.User) error {
	if s.shards == nil {
		return nil
	}
	rows := make([]username, len(users))
	for i, u := range users {
		rows[i] = username{UsernameKey: u.UsernameKey, UserID: u.ID}
	}
	return tx.CreateInBatches(rows, bulkRows).Error
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id int64) (*models.User, error) {
	users, err := s.UsersByIDs(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, ErrNotFound
	}
	return users[0], nil
}

// UsersByIDs loads the users with the given ids in one query; unknown ids are
// left out, and the order is the database's.
func (s *Store) UsersByIDs(ctx context.Context, ids []int64) ([]*models.User, error) {
	var users []*models.User
	if len(ids) == 0 {
		return users, nil
	}
	err := s.read(ctx).Where("id IN ?", ids).Find(&users).Error
	return users, err
}

// UpdateProfile sets the fields of c that are not nil, with a
// user_changed event, and returns the user as stored.
func (s *Store) UpdateProfile(ctx context.Context, id int64, c models.ProfileChange, at time.Time) (*models.User, error) {
	changes := map[string]any{}
	if c.DisplayName != nil {
		changes["display_name"] = *c.DisplayName
	}
	if c.Bio != nil {
		changes["bio"] = *c.Bio
	}
	if c.IsProtected != nil {
		changes["is_protected"] = *c.IsProtected
	}
	if len(changes) > 0 {
		changes["version"] = nextVersion
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			res := tx.Model(&models.User{}).Where("id = ?", id).Updates(changes)
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error
			}
			return s.appendEvent(tx, models.EventUserChanged, models.UserEventPayload{UserID: id}, at)
		})
		if err != nil {
			return nil, err
		}
	}
	return s.UserByID(ctx, id)
}

// RevokeTokens moves user id's token version up by one, with a
// user_changed event, and returns the new version; ErrNotFound when there
// is no such user.
func (s *Store) RevokeTokens(ctx context.Context, id int64, at time.Time) (int64, error) {
	var version int64
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&models.User{}).Where("id = ?", id).
			Updates(map[string]any{"token_version": gorm.Expr("token_version + 1"), "version": nextVersion})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.Model(&models.User{}).Where("id = ?", id).Pluck("token_version", &version).Error; err != nil {
			return err
		}
		return s.appendEvent(tx, models.EventUserChanged, models.UserEventPayload{UserID: id}, at)
	})
	return version, err
}

// MoveFeedReadKey moves the user's read marker up to key, with a
// user_changed event; it never moves back. It reports whether it moved.
func (s *Store) MoveFeedReadKey(ctx context.Context, userID, key int64, at time.Time) (bool, error) {
	moved := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		moved = false
		res := tx.Model(&models.User{}).Where("id = ? AND feed_read_key < ?", userID, key).
			Updates(map[string]any{"feed_read_key": key, "version": nextVersion})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		moved = true
		return s.appendEvent(tx, models.EventUserChanged, models.UserEventPayload{UserID: userID}, at)
	})
	return moved, err
}

// UserIDsWithFollowers lists the users with at least n followers.
func (s *Store) UserIDsWithFollowers(ctx context.Context, n int) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&models.User{}).Where("follower_count >= ?", n).Pluck("id", &ids).Error
	return ids, err
}

// username is a row of the sharded layout's usernames table: the owner of
// a lower-cased name, placed by the name, so that sign-in finds the user's
// id on one data node and then the user on another, and a name is unique
// across the nodes (users itself is placed by id).
type username struct {
	UsernameKey string `gorm:"primaryKey;size:30"`
	UserID      int64  `gorm:"not null"`
}

func (username) TableName() string { return "usernames" }
