package models

import "time"

// Post is a post or, when RepostOfID is set, a repost of an original post.
// A repost always points at the original, never at another repost.
type Post struct {
	ID          int64  `gorm:"primaryKey;autoIncrement:false"`
	AuthorID    int64  `gorm:"not null"`
	Body        string `gorm:"type:text;not null"`
	RepostOfID  *int64
	RepostCount int `gorm:"not null;default:0"`
	CreatedAt   time.Time
	DeletedAt   *time.Time // soft delete: set once, never cleared
	// Version goes up by one with every update of the row (a repost count,
	// the deletion), in the same statement; the Redis copies keep the
	// highest they were given.
	Version int64 `gorm:"not null;default:0"`
	// Reposts are the live reposts of an original, oldest first, as the
	// cache copies keep them (feed/cache/copies.go); RepostsKept says the list is
	// whole. Not a column: a post loaded from MySQL alone has neither.
	Reposts     []Repost `gorm:"-"`
	RepostsKept bool     `gorm:"-"`
}

// Repost is one live repost in Post.Reposts: its id and its author.
type Repost struct {
	ID       int64
	AuthorID int64
}

// IsNode marks Post as a GraphQL Node.
func (Post) IsNode() {}

// OriginalID is the id of the post this entry stands for in a feed: the
// reposted post for a repost, the post itself otherwise.
func (p *Post) OriginalID() int64 {
	if p.RepostOfID != nil {
		return *p.RepostOfID
	}
	return p.ID
}

// Deleted reports whether the post was deleted.
func (p *Post) Deleted() bool { return p.DeletedAt != nil }

// GlobalID is the post's global node ID, its GraphQL id.
func (p *Post) GlobalID() string { return NodeID(KindPost, p.ID) }
