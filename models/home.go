package models

// HomeEntry is a node of the home connection: a *FeedItem, a
// *SuggestedUser or a *PromotedPost.
type HomeEntry interface{ IsHomeEntry() }

// IsHomeEntry marks FeedItem as a home entry.
func (FeedItem) IsHomeEntry() {}

// SuggestedUser is a user the viewer may want to follow; loaded by id.
type SuggestedUser struct {
	UserID          int64
	FollowedByCount int
}

// IsHomeEntry marks SuggestedUser as a home entry.
func (SuggestedUser) IsHomeEntry() {}

// PromotedPost is a post an operator placed in every home; loaded by id.
type PromotedPost struct {
	PostID int64
	// LoadedPost is the post as the home read loaded it, else nil.
	LoadedPost *Post
}

// IsHomeEntry marks PromotedPost as a home entry.
func (PromotedPost) IsHomeEntry() {}

// HomeConnection is a page of the viewer's home.
type HomeConnection struct {
	Edges    []*HomeEdge
	PageInfo *PageInfo
}

// HomeEdge is one entry of a HomeConnection. FeedCursor is set on feed
// items only.
type HomeEdge struct {
	Cursor     string
	Node       HomeEntry
	FeedCursor *string
}

// PromotePostPayload answers promotePost and unpromotePost.
type PromotePostPayload struct {
	PostID   int64
	Promoted bool
}

// DismissHomeEntryPayload answers dismissHomeEntry.
type DismissHomeEntryPayload struct {
	DismissedID string
}
