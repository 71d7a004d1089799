package paging

import (
	"feedservice/feed/apperr"
	"feedservice/feed/config"
)

// JumpArgs are a page jump's arguments: the offset from the newest entry,
// and first, the page size (DefaultPageSize when nil).
type JumpArgs struct {
	Offset int
	First  *int
}

// Size validates a jump's arguments against the API's limits.
func (a JumpArgs) Size() (int, error) {
	if a.Offset < 0 {
		return 0, apperr.BadInput("offset cannot be negative")
	}
	if a.Offset > config.MaxListOffset {
		return 0, apperr.BadInput("offset is at most %d", config.MaxListOffset)
	}
	if a.First == nil {
		return config.DefaultPageSize, nil
	}
	if *a.First < 0 {
		return 0, apperr.BadInput("first cannot be negative")
	}
	if *a.First > config.MaxPageSize {
		return 0, apperr.BadInput("first and last are at most %d", config.MaxPageSize)
	}
	return *a.First, nil
}

// JumpArgs reads a relation connection's offset argument: nil when the
// request pages by cursor only, an error when it mixes the two.
func (a PageArgs) JumpArgs(offset *int) (*JumpArgs, error) {
	if offset == nil {
		return nil, nil
	}
	if a.After != nil || a.Before != nil || a.Last != nil {
		return nil, apperr.BadInput("offset goes with first only, not with after, before or last")
	}
	return &JumpArgs{Offset: *offset, First: a.First}, nil
}
