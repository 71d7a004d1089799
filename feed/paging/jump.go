package paging

import (
	"feedservice/feed/config"
	"feedservice/internal/apperr"
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
	return PageArgs{First: a.First}.Size()
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
