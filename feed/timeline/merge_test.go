package timeline

import (
	"slices"
	"testing"
)

// dropUnreachable takes out of a round (paging older from bound 1000, its
// sources covering down to 500, the window's floor at 100) only the
// candidates it cannot emit: those the outboxes alone brought, looked up
// in the inbox, in the window, with every arrival below 500. It keeps the
// inbox page's entries, a candidate not looked up yet, one with an inbox
// source or an outbox arrival in the covered part, and one below the
// window; and a round whose sources all ran dry drops nothing.
func TestDropUnreachable(t *testing.T) {
	setUp := func(full bool) (round, sources) {
		rd := round{window: 100, edge: 500, full: full, cands: map[int64]*candidate{
			// in the inbox page
			600: {post: 600, inInbox: true, score: 600},
			// beyond: an outbox arrival only, looked up, not in the inbox
			300: {post: 300, celeb: []Source{{User: 7, Event: 300}}},
			// beyond: in the inbox below the covered part, an outbox repost below it too
			310: {post: 310, inInbox: true, score: 310, recorded: []Source{{User: 0, Event: 310}}, celeb: []Source{{User: 7, Event: 320}}},
			// not looked up: complete does that
			330: {post: 330, celeb: []Source{{User: 7, Event: 330}}},
			// an inbox source within the covered part
			340: {post: 340, inInbox: true, score: 340, recorded: []Source{{User: 5, Event: 340}, {User: 6, Event: 700}}},
			// an outbox repost within the covered part
			350: {post: 350, celeb: []Source{{User: 7, Event: 350}, {User: 8, Event: 800}}},
			// below the window: exactPositions places it
			50: {post: 50, celeb: []Source{{User: 7, Event: 60}}},
		}}
		src := sources{
			page:  inboxPage{Floor: 100, Items: []InboxItem{{PostID: 600, Score: 600}}},
			asked: []int64{50, 300, 310, 340, 350},
		}
		return rd, src
	}
	rd, src := setUp(true)
	rd.dropUnreachable(src, true, 1000)
	var kept []int64
	for id := range rd.cands {
		kept = append(kept, id)
	}
	slices.Sort(kept)
	if want := []int64{50, 330, 340, 350, 600}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	rd, src = setUp(false)
	rd.dropUnreachable(src, true, 1000)
	if len(rd.cands) != 7 {
		t.Fatalf("a round whose sources ran dry kept %d of 7 candidates", len(rd.cands))
	}
	// Paging newer from 100, covered up to 500: a candidate whose arrivals
	// all lie above 500 goes, one with an arrival at 450 stays.
	rd = round{window: 50, edge: 500, full: true, cands: map[int64]*candidate{
		700: {post: 700, celeb: []Source{{User: 7, Event: 700}}},
		400: {post: 400, celeb: []Source{{User: 7, Event: 450}}},
	}}
	rd.dropUnreachable(sources{page: inboxPage{Floor: 50}, asked: []int64{400, 700}}, false, 100)
	if _, ok := rd.cands[700]; ok || rd.cands[400] == nil {
		t.Fatalf("paging newer, kept %v; want only 400", rd.cands)
	}
}
