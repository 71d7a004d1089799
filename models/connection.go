package models

import "time"

// Node is the GraphQL Node interface: everything node(id) resolves.
type Node interface{ IsNode() }

// PageInfo is a Relay page's info.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

// PostConnection is a page of a user's timeline.
type PostConnection struct {
	Edges      []*PostEdge
	PageInfo   *PageInfo
	TotalCount int
}

// PostEdge is one post of a PostConnection.
type PostEdge struct {
	Cursor string
	Node   *Post
}

// UserConnection is a page of a followers or following list.
type UserConnection struct {
	Edges      []*UserEdge
	PageInfo   *PageInfo
	TotalCount int
}

// UserEdge is one user of a UserConnection; its node is loaded by id.
type UserEdge struct {
	Cursor     string
	UserID     int64
	FollowedAt time.Time
}

// FeedConnection is a page of the viewer's home feed.
type FeedConnection struct {
	Edges    []*FeedEdge
	PageInfo *PageInfo
}

// FeedEdge is one entry of a FeedConnection.
type FeedEdge struct {
	Cursor string
	Node   *FeedItem
}

// FeedItem is one original post in a home feed; the post and reposters are
// loaded by id, so a page costs one batched query per type.
type FeedItem struct {
	PostID      int64
	ReposterIDs []int64 // most recent first
	AddedAt     time.Time
	// LoadedPost is the post when the feed read already loaded it (to check
	// that it is live), so that the API need not load it again; else nil
	// until the API loads it (dataloader.PrimeFeed). The GraphQL field post.
	LoadedPost *Post
	// Reposters are the users of ReposterIDs that exist, in their order,
	// once the API loaded them (dataloader.PrimeFeed). The GraphQL field
	// reposters: a plain field, which gqlgen resolves without a goroutine.
	Reposters []*User
}

// RelatedUserConnection is a page of one of the viewer's own relation
// lists (blocked or muted users).
type RelatedUserConnection struct {
	Edges      []*RelatedUserEdge
	PageInfo   *PageInfo
	TotalCount int
}

// RelatedUserEdge is one user of a RelatedUserConnection, with when the
// relation began; its node is loaded by id.
type RelatedUserEdge struct {
	Cursor string
	UserID int64
	Since  time.Time
}
