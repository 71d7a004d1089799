package home

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
)

// The home connection is the feed with an inserted entry (an insertion)
// in every Nth place, N = Config.HomeInsertEvery. Seed 000 says fixed
// places are built at read time (pull), so nothing is written into the
// inboxes and feed keeps its meaning: the places are counted while paging,
// and the count travels in the cursors. A position's count is homeState:
// how many feed entries since the last slot (c), the insertion the last
// filled slot showed (prev), and how many slots came empty since (empty:
// the insertions ran out). Paging forward fills a slot with the smallest
// insertion after prev; paging back undoes that exactly, so a page read
// back shows what was shown going forward, as long as the insertions
// themselves did not change meanwhile (a dismissed or deleted one just
// goes).
type homeState struct {
	key   int64 // the feed entry's sort key; for an insertion, the key of the feed entry it follows
	slot  bool  // the position is an insertion's
	c     int
	prev  int64
	empty int
}

// bottomPrev starts a count from the bottom of the home (last without
// before): slots going up show the insertions from the largest down.
const bottomPrev = int64(1) << 62

const cursorHome = "home"

// A home cursor is base64url("home:key.slot.c.prev.empty").
func (s homeState) cursor() string {
	slot := 0
	if s.slot {
		slot = 1
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d.%d.%d.%d.%d", cursorHome, s.key, slot, s.c, s.prev, s.empty))
}

// decodeHomeCursor accepts only the spelling cursor gives.
func decodeHomeCursor(cursor string) (homeState, error) {
	var s homeState
	var slot int
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		_, err = fmt.Sscanf(string(raw), cursorHome+":%d.%d.%d.%d.%d", &s.key, &slot, &s.c, &s.prev, &s.empty)
	}
	s.slot = slot == 1
	if err != nil || s.key <= 0 || slot < 0 || slot > 1 || s.c < 0 || s.c > config.MaxHomeInsertEvery || s.prev < 0 || s.prev > bottomPrev || s.empty < 0 || s.cursor() != cursor {
		return homeState{}, apperr.BadInput("the cursor %q is not a home cursor this API handed out", cursor)
	}
	return s, nil
}

// homeItem is one entry of a home page with the state just after it.
type homeItem struct {
	edge  *models.FeedEdge // a feed entry, or nil for an insertion
	ins   insertion
	state homeState
}

// Home pages the viewer's home: feed's entries with the insertions in
// their slots. It returns the feed page it read as well, whose posts the
// caller primes its loaders with.
func (mx *Mixer) Home(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.HomeConnection, *models.FeedConnection, error) {
	size, err := args.Size()
	if err != nil {
		return nil, nil, err
	}
	var after, before *homeState
	for _, c := range []struct {
		raw *string
		to  **homeState
	}{{args.After, &after}, {args.Before, &before}} {
		if c.raw != nil {
			s, err := decodeHomeCursor(*c.raw)
			if err != nil {
				return nil, nil, err
			}
			*c.to = &s
		}
	}
	if args.Last != nil {
		return mx.homeBackward(ctx, viewerID, size, before, after)
	}
	return mx.homeForward(ctx, viewerID, size, after, before)
}

// fetchSize is how many feed entries a home page of size reads: one more,
// to tell whether more follow, within what feed allows.
func fetchSize(size int) int { return min(size+1, config.MaxPageSize) }

// startInsertions starts the Redis read of what the slots may show, to
// run while the feed page is read; its answer is used after the page,
// whose read left the viewer's followee set for the follow check. So a
// home page costs the feed page's time plus the work on the answer, not a
// round trip more.
func (mx *Mixer) startInsertions(ctx context.Context, viewerID int64) *pendingInsertions {
	p := &pendingInsertions{read: make(chan *candidateRead, 1)}
	if mx.d.Cfg.HomeInsertEvery == 0 {
		p.read <- nil
		return p
	}
	go func() { p.read <- mx.readHomeCandidates(ctx, viewerID) }()
	return p
}

// pendingInsertions is a started read of a home page's insertions.
type pendingInsertions struct{ read chan *candidateRead }

// finish waits for the read and turns it into insertions.
func (p *pendingInsertions) finish(ctx context.Context) ([]insertion, error) {
	if r := <-p.read; r != nil {
		return r.finish(ctx)
	}
	return nil, nil
}

// drop waits for the read, so that its goroutine ends with the request.
func (p *pendingInsertions) drop() { <-p.read }

// feedAndInsertions reads the viewer's feed page of args and, meanwhile,
// what the page's slots may show.
func (mx *Mixer) feedAndInsertions(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.FeedConnection, []insertion, error) {
	insertions := mx.startInsertions(ctx, viewerID)
	page, err := mx.reads.Feed(ctx, viewerID, args)
	if err != nil {
		insertions.drop()
		return nil, nil, err
	}
	cands, err := insertions.finish(ctx)
	if err != nil {
		return nil, nil, err
	}
	return page, cands, nil
}

func (mx *Mixer) homeForward(ctx context.Context, viewerID int64, size int, after, before *homeState) (*models.HomeConnection, *models.FeedConnection, error) {
	n := mx.d.Cfg.HomeInsertEvery
	st := homeState{}
	var feedAfter *string
	if after != nil {
		st = *after
		c := paging.EncodeCursor(paging.CursorFeed, st.key)
		feedAfter = &c
	}
	k := fetchSize(size)
	page, cands, err := mx.feedAndInsertions(ctx, viewerID, paging.PageArgs{First: &k, After: feedAfter})
	if err != nil {
		return nil, nil, err
	}
	var items []homeItem
	slot := func(anchor int64) {
		st.c, st.key, st.slot = 0, anchor, true
		i := slices.IndexFunc(cands, func(c insertion) bool { return c.packed > st.prev })
		if i < 0 {
			st.empty++
			return
		}
		st.prev, st.empty = cands[i].packed, 0
		items = append(items, homeItem{ins: cands[i], state: st})
	}
	if after != nil && !after.slot && n > 0 && after.c >= n-1 {
		slot(after.key) // the slot that follows the cursor's entry
	}
	consumed := 0
	for _, edge := range page.Edges {
		if len(items) > size {
			break
		}
		consumed++
		key, _ := paging.DecodeCursor(paging.CursorFeed, edge.Cursor)
		st.key, st.slot = key, false
		if n > 0 {
			st.c++
		}
		items = append(items, homeItem{edge: edge, state: st})
		if n > 0 && st.c >= n-1 {
			slot(key)
		}
	}
	if before != nil {
		items = slices.DeleteFunc(items, func(it homeItem) bool { return !homeAbove(it.state, *before) })
	}
	more := len(items) > size || (consumed == len(page.Edges) && page.PageInfo.HasNextPage)
	if len(items) > size {
		items = items[:size]
	}
	if before != nil && len(items) < size {
		more = false
	}
	info := &models.PageInfo{HasNextPage: more, HasPreviousPage: after != nil && (after.slot || page.PageInfo.HasPreviousPage)}
	return homeConnection(items, info), page, nil
}

// homeAbove says whether a lies above (newer than) b in the home's order.
func homeAbove(a, b homeState) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	return !a.slot && b.slot
}

func (mx *Mixer) homeBackward(ctx context.Context, viewerID int64, size int, before, after *homeState) (*models.HomeConnection, *models.FeedConnection, error) {
	n := mx.d.Cfg.HomeInsertEvery
	// st is the count at the position walked to, going up.
	st := homeState{prev: bottomPrev}
	if n == 0 {
		st.prev = 0
	}
	var feedBefore *string
	if before != nil {
		st = *before
		bound := st.key
		if st.slot {
			// Above an insertion: its feed entry (keys above key-1 take it in), which had filled the
			// count; the slot before it showed the insertion before prev.
			bound, st.c, st.empty = st.key-1, max(n-1, 0), 0
		} else if n > 0 {
			st.c--
		}
		c := paging.EncodeCursor(paging.CursorFeed, bound)
		feedBefore = &c
	}
	k := fetchSize(size)
	page, cands, err := mx.feedAndInsertions(ctx, viewerID, paging.PageArgs{Last: &k, Before: feedBefore})
	if err != nil {
		return nil, nil, err
	}
	if before != nil && before.slot {
		st.prev = prevInsertion(cands, st.prev)
	}
	var items []homeItem // nearest the cursor first
	consumed := 0
	for i := len(page.Edges) - 1; i >= 0 && len(items) <= size; i-- {
		edge := page.Edges[i]
		consumed++
		key, _ := paging.DecodeCursor(paging.CursorFeed, edge.Cursor)
		if n > 0 && st.c <= 0 {
			// A slot sits right below this entry: undo it. (From the
			// bottom, the first one is below the last entry: it shows
			// nothing, and paging forward from there shows nothing too.)
			shown := homeState{key: key, slot: true, prev: st.prev}
			switch {
			case st.empty > 0:
				st.empty--
			case st.prev != 0 && st.prev != bottomPrev:
				if j := slices.IndexFunc(cands, func(c insertion) bool { return c.packed == st.prev }); j >= 0 {
					items = append(items, homeItem{ins: cands[j], state: shown})
				}
				st.prev = prevInsertion(cands, st.prev)
			case st.prev == bottomPrev:
				st.prev = prevInsertion(cands, st.prev)
			}
			st.c = n - 1
		}
		items = append(items, homeItem{edge: edge, state: homeState{key: key, c: st.c, prev: st.prev, empty: st.empty}})
		if n > 0 {
			st.c--
		}
	}
	if after != nil {
		items = slices.DeleteFunc(items, func(it homeItem) bool { return !homeAbove(*after, it.state) })
	}
	more := len(items) > size || (consumed == len(page.Edges) && page.PageInfo.HasPreviousPage)
	if len(items) > size {
		items = items[:size]
	}
	if after != nil && len(items) < size {
		more = false
	}
	slices.Reverse(items)
	info := &models.PageInfo{HasPreviousPage: more, HasNextPage: before != nil && (before.slot || page.PageInfo.HasNextPage)}
	return homeConnection(items, info), page, nil
}

// prevInsertion is the largest insertion below packed, or 0.
func prevInsertion(cands []insertion, packed int64) int64 {
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i].packed < packed {
			return cands[i].packed
		}
	}
	return 0
}

func homeConnection(items []homeItem, info *models.PageInfo) *models.HomeConnection {
	conn := &models.HomeConnection{PageInfo: info, Edges: make([]*models.HomeEdge, len(items))}
	for i, it := range items {
		edge := &models.HomeEdge{Cursor: it.state.cursor()}
		if it.edge != nil {
			edge.Node, edge.FeedCursor = it.edge.Node, &it.edge.Cursor
		} else {
			switch kind, id := unpackKind(it.ins.packed); kind {
			case kindPromoted:
				edge.Node = &models.PromotedPost{PostID: id, LoadedPost: it.ins.post}
			default:
				edge.Node = &models.SuggestedUser{UserID: id, FollowedByCount: it.ins.followedBy}
			}
		}
		conn.Edges[i] = edge
	}
	if len(items) > 0 {
		start, end := conn.Edges[0].Cursor, conn.Edges[len(items)-1].Cursor
		info.StartCursor, info.EndCursor = &start, &end
	}
	return conn
}

// CandidatesKey names the Redis key of a viewer's insertions (by global
// id), for tests that drop it to make the engine work them out again.
func (mx *Mixer) CandidatesKey(viewerGlobalID string) string {
	_, id, _ := models.ParseNodeID(viewerGlobalID)
	return mx.d.Keys.HomeCandidates(id)
}
