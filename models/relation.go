package models

import "time"

// Following says UserID follows FolloweeID. Rows are keyed by UserID first so
// that one user's list is one range scan and the table shards by user.
// ID is a time-ordered id taken when the follow happened: it orders the list.
type Following struct {
	UserID     int64 `gorm:"primaryKey;autoIncrement:false"`
	FolloweeID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID         int64 `gorm:"not null"`
	CreatedAt  time.Time
}

// Follower is the mirror row of a Following: FollowerID follows UserID.
type Follower struct {
	UserID     int64 `gorm:"primaryKey;autoIncrement:false"`
	FollowerID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID         int64 `gorm:"not null"`
	CreatedAt  time.Time
}

// Relation is one row of a followers, following, blocked or muted list: the
// other user, and the edge's id (its place in the list) and the time it
// began (for a block or a mute, FollowedAt is when the block or mute began).
type Relation struct {
	UserID     int64
	ID         int64
	FollowedAt time.Time
}

// FollowRequest says RequesterID asked to follow UserID, a protected
// account, and waits for their approval. Keyed by the asked user first, so
// that their list of requests is one range scan and lies on their data
// node; ID is a time-ordered id taken when the request was made, and
// orders the list.
type FollowRequest struct {
	UserID      int64 `gorm:"primaryKey;autoIncrement:false"`
	RequesterID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID          int64 `gorm:"not null"`
	CreatedAt   time.Time
}
