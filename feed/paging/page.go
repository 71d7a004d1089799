// Package paging reads Relay connection pages: the arguments (PageArgs), the
// cursors, and Paginate, which pages any list read by key.
package paging

import (
	"context"
	"math"
	"slices"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// PageArgs are a connection's Relay arguments.
type PageArgs struct {
	First, Last   *int
	After, Before *string
}

// FetchFunc reads up to limit entries beyond bound in direction dir, in
// page order (Older: descending keys; Newer: ascending).
type FetchFunc[T any] func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]T, error)

// Size is the page size a asks for: first or last (not both), from 0 to
// MaxPageSize; DefaultPageSize when neither is given.
func (a PageArgs) Size() (int, error) {
	if a.First != nil && a.Last != nil {
		return 0, apperr.BadInput("pass first or last, not both")
	}
	size := config.DefaultPageSize
	for _, n := range []*int{a.First, a.Last} {
		if n == nil {
			continue
		}
		if *n < 0 {
			return 0, apperr.BadInput("first and last cannot be negative")
		}
		if *n > config.MaxPageSize {
			return 0, apperr.BadInput("first and last are at most %d", config.MaxPageSize)
		}
		size = *n
	}
	return size, nil
}

// Window is a checked PageArgs: a direction, a size, and the cursor keys
// (0 where a cursor is absent).
type Window struct {
	backward      bool
	size          int
	after, before int64
}

func (a PageArgs) Window(kind CursorKind) (Window, error) {
	var w Window
	var err error
	if w.size, err = a.Size(); err != nil {
		return w, err
	}
	w.backward = a.Last != nil
	if a.After != nil {
		if w.after, err = DecodeCursor(kind, *a.After); err != nil {
			return w, err
		}
	}
	if a.Before != nil {
		if w.before, err = DecodeCursor(kind, *a.Before); err != nil {
			return w, err
		}
	}
	return w, nil
}

// Paginate reads one Relay page, newest first, with exact hasNextPage and
// hasPreviousPage: the far side of a cursor is probed for one entry.
//
// A page claims another one only past the cursor it was asked from: a
// client follows endCursor (or startCursor) for as long as the page says
// there is more, so a page whose last entry is not beyond the request's
// cursor would send it round the same page forever. Such a page, which a
// fetch that ignored its bound would give, says there is no more instead,
// and m counts it.
func Paginate[T any](ctx context.Context, m *metrics.Metrics, kind CursorKind, args PageArgs, fetch FetchFunc[T], key func(T) int64) ([]T, *models.PageInfo, error) {
	w, err := args.Window(kind)
	if err != nil {
		return nil, nil, err
	}
	// Forward pages stop at before; backward pages stop at after.
	dir, bound, limit := w.FirstFetch()
	stop, farCursor, farDir := w.before, w.after, store.Newer
	beyondStop := func(k int64) bool { return stop != 0 && k <= stop }
	if w.backward {
		stop, farCursor, farDir = w.after, w.before, store.Older
		beyondStop = func(k int64) bool { return stop != 0 && k >= stop }
	}
	items, err := fetch(ctx, dir, bound, limit)
	if err != nil {
		return nil, nil, err
	}
	if i := slices.IndexFunc(items, func(it T) bool { return beyondStop(key(it)) }); i >= 0 {
		items = items[:i]
	}
	more := len(items) > w.size
	if more {
		items = items[:w.size]
	}
	if more && farCursor != 0 && len(items) > 0 && !beyond(key(items[len(items)-1]), farCursor, dir) {
		more = false
		m.NoProgress.WithLabelValues(metrics.NoProgressCursor).Inc()
	}
	behind := false
	if farCursor != 0 {
		// The cursor's own entry lies behind the page too: probe from just
		// beyond it. (Deleted, it is simply not found.)
		from := farCursor - 1
		if farDir == store.Older {
			from = farCursor + 1
		}
		probe, err := fetch(ctx, farDir, from, 1)
		if err != nil {
			return nil, nil, err
		}
		behind = len(probe) > 0
	}
	info := &models.PageInfo{HasNextPage: more, HasPreviousPage: behind}
	if w.backward {
		slices.Reverse(items)
		info.HasNextPage, info.HasPreviousPage = behind, more
	}
	if len(items) > 0 {
		start, end := EncodeCursor(kind, key(items[0])), EncodeCursor(kind, key(items[len(items)-1]))
		info.StartCursor, info.EndCursor = &start, &end
	}
	return items, info, nil
}

// FirstFetch is the read Paginate starts with: forward pages read older
// from after (or the top), backward pages newer from before (or the
// bottom), one entry more than the page, to learn whether more follow.
func (w Window) FirstFetch() (dir store.Direction, bound int64, limit int) {
	dir, bound, from := store.Older, int64(math.MaxInt64), w.after
	if w.backward {
		dir, bound, from = store.Newer, 0, w.before
	}
	if from != 0 {
		bound = from
	}
	return dir, bound, w.size + 1
}

// beyond says whether key lies past cursor in direction dir: the way a
// page read from cursor must move.
func beyond(key, cursor int64, dir store.Direction) bool {
	if dir == store.Older {
		return key < cursor
	}
	return key > cursor
}
