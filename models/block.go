package models

import "time"

// Block says BlockerID blocks BlockedID: the two stop seeing each other and
// neither may follow the other until it ends. One row per edge, keyed by
// the blocker so that one user's list is one range scan; ID is a
// time-ordered id taken when the block began, and orders the list.
type Block struct {
	BlockerID int64 `gorm:"primaryKey;autoIncrement:false"`
	BlockedID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID        int64 `gorm:"not null"`
	CreatedAt time.Time
}

// Mute says MuterID mutes MutedID: the muter keeps any follow but stops
// seeing the muted user's posts. Keyed and ordered as Block.
type Mute struct {
	MuterID   int64 `gorm:"primaryKey;autoIncrement:false"`
	MutedID   int64 `gorm:"primaryKey;autoIncrement:false"`
	ID        int64 `gorm:"not null"`
	CreatedAt time.Time
}
