package models

// AuthPayload answers signUp and logIn.
type AuthPayload struct {
	Token string
	User  *User
}

// CreatePostPayload answers createPost and repost.
type CreatePostPayload struct {
	Post *Post
}

// DeletePostPayload answers deletePost.
type DeletePostPayload struct {
	DeletedPostID string
}

// FollowPayload answers follow, unfollow and removeFollower.
type FollowPayload struct {
	User   *User
	Viewer *User
}

// MarkFeedReadPayload answers markFeedRead.
type MarkFeedReadPayload struct {
	UnreadCount       int
	UnreadCountCapped bool
}

// UnreadBadge is one event of the unreadBadge subscription: the unread
// count and whether it stopped at the cap.
type UnreadBadge struct {
	Count  int
	Capped bool
}

// BlockPayload answers block and unblock.
type BlockPayload struct {
	User   *User
	Viewer *User
}

// MutePayload answers mute and unmute.
type MutePayload struct {
	User *User
}
