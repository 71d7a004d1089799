package models

import "time"

// User is an account. Its three counts are kept in the same transaction as
// the change that moves them, so reading them is O(1).
type User struct {
	ID             int64  `gorm:"primaryKey;autoIncrement:false"`
	Username       string `gorm:"size:30;not null"`
	UsernameKey    string `gorm:"size:30;not null;uniqueIndex"` // lower-cased Username: uniqueness ignores case on every database
	DisplayName    string `gorm:"size:200;not null"`
	Bio            string `gorm:"size:1200;not null"`
	PasswordHash   string `gorm:"size:100;not null"`
	CreatedAt      time.Time
	FollowerCount  int `gorm:"not null;default:0"`
	FollowingCount int `gorm:"not null;default:0"`
	PostCount      int `gorm:"not null;default:0"`
	LastActiveAt   time.Time
	FeedReadKey    int64 `gorm:"not null;default:0"` // the read marker: feed entries with a larger sort key are unread
	// Version goes up by one with every update of the row, in the same
	// statement; the Redis copies keep the highest they were given.
	Version int64 `gorm:"not null;default:0"`
	// TokenVersion is carried in every token issued to the user; a token
	// of another version is refused. Log-out moves it up by one, revoking
	// every token issued before.
	TokenVersion int64 `gorm:"not null;default:0"`
	// IsProtected says that new followers need the user's approval (a
	// follow becomes a request) and that the user's posts are for them
	// and their approved followers only.
	IsProtected bool `gorm:"not null;default:false"`
}

// IsNode marks User as a GraphQL Node.
func (User) IsNode() {}

// GlobalID is the user's global node ID, its GraphQL id.
func (u *User) GlobalID() string { return NodeID(KindUser, u.ID) }

// ProfileChange is a change of a user's profile: the fields that are not
// nil are set.
type ProfileChange struct {
	DisplayName, Bio *string
	IsProtected      *bool
}
