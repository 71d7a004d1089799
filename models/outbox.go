package models

import "time"

// Outbox event kinds. Each is written in the same transaction as the change
// it describes; the feed engine's dispatcher moves them on.
const (
	EventPostCreated     = "post_created"
	EventPostDeleted     = "post_deleted"
	EventFollowed        = "followed"
	EventUnfollowed      = "unfollowed"
	EventFollowerRemoved = "follower_removed"
	// A block writes, before its blocked event, the unfollowed and
	// follower_removed events of the follows it ended (see store.Block).
	EventBlocked   = "blocked"
	EventUnblocked = "unblocked"
	EventMuted     = "muted"
	EventUnmuted   = "unmuted"
	// EventUserChanged says a user row changed other than by the events
	// above (a profile, a read marker): its cached copies are refreshed.
	EventUserChanged = "user_changed"
)

// EventKinds are the kinds above, every one an outbox event may have.
var EventKinds = []string{EventPostCreated, EventPostDeleted, EventFollowed, EventUnfollowed, EventFollowerRemoved,
	EventBlocked, EventUnblocked, EventMuted, EventUnmuted, EventUserChanged}

// OutboxEvent is a committed change waiting to be dispatched.
type OutboxEvent struct {
	ID           int64  `gorm:"primaryKey"`
	Kind         string `gorm:"size:32;not null"`
	Payload      string `gorm:"type:text;not null"` // JSON
	CreatedAt    time.Time
	DispatchedAt *time.Time `gorm:"index"`
	// TraceParent is the W3C traceparent of the change's trace, so that
	// its fan-out continues it; empty when it was not traced.
	TraceParent string `gorm:"size:64;not null;default:''"`
}

// PostEventPayload is the payload of post_created and post_deleted.
type PostEventPayload struct {
	PostID     int64  `json:"postId"`
	AuthorID   int64  `json:"authorId"`
	RepostOfID *int64 `json:"repostOfId,omitempty"`
}

// FollowEventPayload is the payload of followed, unfollowed and follower_removed.
type FollowEventPayload struct {
	FollowerID int64 `json:"followerId"`
	FolloweeID int64 `json:"followeeId"`
}

// BlockEventPayload is the payload of blocked and unblocked.
type BlockEventPayload struct {
	BlockerID int64 `json:"blockerId"`
	BlockedID int64 `json:"blockedId"`
}

// MuteEventPayload is the payload of muted and unmuted.
type MuteEventPayload struct {
	MuterID int64 `json:"muterId"`
	MutedID int64 `json:"mutedId"`
}

// UserEventPayload is the payload of user_changed.
type UserEventPayload struct {
	UserID int64 `json:"userId"`
}
