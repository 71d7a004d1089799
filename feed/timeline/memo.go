package timeline

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"feedservice/models"
)

// A query's reads share what they learn of the viewer's own keys: a
// response that shows a feed page, its unread count and viewerIsFollowing
// on the page's users reads the reader's state (inbox, followee set,
// followed celebrities, the viewer's own copy with the read marker) in one
// round trip, not one per field. Only queries carry a memo (WithReadMemo):
// a mutation changes that state between its fields, and each event of a
// subscription is answered with a memo of its own, or none.
type readMemo struct {
	mu      sync.Mutex
	readers map[int64]*memoReader
}

// memoReader is one viewer's state, read once.
type memoReader struct {
	once sync.Once
	done atomic.Bool // once has finished: r, self and err may be read
	r    *readState  // shared: callers take a copy
	self *models.User
	err  error
}

type readMemoKey struct{}

// WithReadMemo gives the reads made with ctx one memo of the viewers'
// state. The API layer calls it once per query response.
func WithReadMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, readMemoKey{}, &readMemo{readers: map[int64]*memoReader{}})
}

// memoFor is ctx's memo of viewer, or nil when ctx carries none.
func memoFor(ctx context.Context, viewer int64) *memoReader {
	m, _ := ctx.Value(readMemoKey{}).(*readMemo)
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mr := m.readers[viewer]
	if mr == nil {
		mr = &memoReader{}
		m.readers[viewer] = mr
	}
	return mr
}

// state is the reader's state for a read: from ctx's memo when it
// has one (read once per response), else read now.
func (reads *Reads) state(ctx context.Context, viewer int64, early *inboxRead) (*readState, error) {
	m := memoFor(ctx, viewer)
	if m == nil {
		r, _, err := reads.loadState(ctx, viewer, early)
		return r, err
	}
	m.once.Do(func() {
		m.r, m.self, m.err = reads.loadState(ctx, viewer, early)
		m.done.Store(true)
	})
	if m.err != nil {
		return nil, m.err
	}
	return m.r.copy(), nil
}

// copy is a readState for one more read of the same state: what it learns
// as it reads (the posts it checked, followees loaded from MySQL) stays
// its own.
func (r *readState) copy() *readState {
	c := *r
	c.posts = map[int64]*models.Post{}
	return &c
}

// memoFollowed answers whom of ids the viewer follows from the state a
// read of this response already loaded whole; ok is false when there is
// none (no memo, not read yet, or a followee set too large to read whole).
// It never reads the state itself: a query that shows no feed must not
// build the viewer an inbox.
func memoFollowed(ctx context.Context, viewer int64, ids []int64) (map[int64]bool, bool) {
	m := memoFor(ctx, viewer)
	if m == nil || !m.done.Load() || m.err != nil || !m.r.loaded {
		return nil, false
	}
	found := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if _, ok := slices.BinarySearch(m.r.followees, id); ok {
			found[id] = true
		}
	}
	return found, true
}

// memoSelf is the viewer's own copy read with their state in this
// response, or nil.
func memoSelf(ctx context.Context, viewer int64) *models.User {
	m := memoFor(ctx, viewer)
	if m == nil || !m.done.Load() || m.err != nil {
		return nil
	}
	return m.self
}

// FollowedBy returns which of ids the viewer follows: from the followee set
// a feed read of the same query loaded, or from their followee set when it
// exists (an active readState), else from MySQL.
func (reads *Reads) FollowedBy(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	if found, ok := memoFollowed(ctx, viewerID, ids); ok {
		return found, nil // the query's feed read loaded the whole set
	}
	return reads.inboxes.FollowedAmong(ctx, viewerID, ids)
}

// loadedFollowees are the followees a page read of viewer goes by, as its state
// loads them; loaded is false when the set is too large to read whole (a
// page then asks about the ids it needs).
func (reads *Reads) loadedFollowees(ctx context.Context, viewer int64) (ids []int64, loaded bool, err error) {
	r, _, err := reads.loadState(ctx, viewer, nil)
	if err != nil {
		return nil, false, err
	}
	return r.followees, r.loaded, nil
}
