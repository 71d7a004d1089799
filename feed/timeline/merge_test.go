package timeline

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
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

// replayInbox, once armed, answers every read of one inbox (seen through
// testenv.AfterEachCommand) with the first answer it saw: a Redis (or a
// proxy in front of it) that ignores the bound it is asked from. A read
// that failed is left as it is.
type replayInbox struct {
	key   string
	armed atomic.Bool
	mu    sync.Mutex
	first any
}

// replay answers cmd, if it is a read of the inbox, with the first such
// answer (the read may go alone or in a pipeline with the outboxes').
func (h *replayInbox) replay(cmd redis.Cmder) {
	args := cmd.Args()
	if cmd.Err() != nil || !h.armed.Load() || len(args) < 4 || args[0] != "evalsha" || args[1] != readInboxScript.Hash() || args[3] != h.key {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := cmd.(*redis.Cmd)
	if h.first == nil {
		h.first = c.Val()
	} else {
		c.SetVal(h.first)
	}
}

// A merge whose round reads nothing beyond its bound (here the inbox answers
// the same entries whatever it is asked) stops and returns what it has,
// counted, instead of reading the same round for ever.
func TestMergeStopsWithoutProgress(t *testing.T) {
	p := newTestParts(t, func(c *config.Config) { c.Mode, c.InboxCap = config.ModePush, 20 })
	ctx := context.Background()
	hook := &replayInbox{}
	p.d.Redis.AddHook(testenv.AfterEachCommand(hook.replay))
	reader, author := p.user("reader"), p.user("author")
	p.follow(reader, author)
	var posts []int64
	for range 12 {
		posts = append(posts, p.post(author))
	}
	if got := p.feed(reader, 20); len(got) != 12 { // the inbox is built with all 12
		t.Fatalf("first page of %d entries, want 12", len(got))
	}
	for _, post := range posts[2:11] {
		p.deletePost(author, post) // the newest stays; the 9 below it go, from MySQL alone
	}
	if err := readInboxScript.Load(ctx, p.d.Redis).Err(); err != nil {
		t.Fatal(err)
	}
	hook.key = p.d.Keys.Inbox(reader)
	hook.armed.Store(true)

	// first: 1 reads 7 inbox entries a round: the newest, live, and 6
	// deleted ones; the next round, answered the same, has not moved.
	ctx, cancel := context.WithTimeout(ctx, testenv.Scale(30*time.Second))
	defer cancel()
	one := 1
	conn, err := p.reads.Feed(ctx, reader, paging.PageArgs{First: &one})
	if err != nil {
		t.Fatalf("the read did not end: %v", err)
	}
	if len(conn.Edges) != 1 || conn.Edges[0].Node.PostID != posts[11] {
		t.Fatalf("page of %d entries, want the newest post %d alone, what the merge had", len(conn.Edges), posts[11])
	}
	if got := counterValue(t, p.d.Metrics.NoProgress.WithLabelValues(metrics.NoProgressMerge)); got != 1 {
		t.Fatalf("feed_page_no_progress_total{at=merge} = %v, want 1", got)
	}
}
