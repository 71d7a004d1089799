package models

import "time"

// List is a reader's list: a feed of a chosen subset of the people they
// follow. Its rows, and its members', are keyed by the owner first, so that
// everything about one user's lists lies on the owner's data node of the
// sharded layout; ID is a time-ordered id taken when it was made, and
// orders the owner's lists.
type List struct {
	OwnerID   int64  `gorm:"primaryKey;autoIncrement:false"`
	ID        int64  `gorm:"primaryKey;autoIncrement:false"`
	Name      string `gorm:"size:400;not null"`
	CreatedAt time.Time
	// MemberCount is counted when the list is read, not stored.
	MemberCount int `gorm:"-"`
}

// IsNode marks List as a GraphQL Node.
func (List) IsNode() {}

// GlobalID is the list's global node ID, its GraphQL id.
func (l *List) GlobalID() string { return NodeID(KindList, l.ID) }

// ListMember says MemberID is in the owner's list ListID. ID is a
// time-ordered id taken when the member was added: it orders the members.
type ListMember struct {
	OwnerID   int64 `gorm:"primaryKey;autoIncrement:false"`
	ListID    int64 `gorm:"primaryKey;autoIncrement:false"`
	MemberID  int64 `gorm:"primaryKey;autoIncrement:false"`
	ID        int64 `gorm:"not null"`
	CreatedAt time.Time
}

// ListConnection is a page of the viewer's lists.
type ListConnection struct {
	Edges      []*ListEdge
	PageInfo   *PageInfo
	TotalCount int
}

// ListEdge is one list of a ListConnection.
type ListEdge struct {
	Cursor string
	Node   *List
}

// ListPayload answers the list mutations but deleteList.
type ListPayload struct {
	List *List
}

// DeleteListPayload answers deleteList.
type DeleteListPayload struct {
	DeletedListID string
}
