package feed

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/paging"
	"feedservice/feed/timeline"
	"feedservice/internal/testenv"
)

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
	if cmd.Err() != nil || !h.armed.Load() || len(args) < 4 || args[0] != "evalsha" || args[1] != timeline.Scripts.Read.Hash() || args[3] != h.key {
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
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	hook := &replayInbox{}
	rdb.AddHook(testenv.AfterEachCommand(hook.replay))
	// No workers and no dispatcher: the deletes below stay out of the inbox,
	// whose stale entries the read must then skip.
	te := startTestEngine(t, newTestStore(t), rdb, prefix, func(c *config.Config) {
		c.Mode, c.InboxCap, c.FanoutWorkers, c.Dispatch = config.ModePush, 20, 0, false
	})
	reader, author := te.user("reader"), te.user("author")
	te.follow(reader, author)
	var posts []int64
	for range 12 {
		posts = append(posts, te.post(author, "p"))
	}
	te.readFeed(reader, 20) // the inbox is built with all 12
	for _, p := range posts[2:11] {
		te.deletePost(author, p) // the newest stays; the 9 below it go
	}
	if err := timeline.Scripts.Read.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	hook.key = te.keys.Inbox(reader)
	hook.armed.Store(true)

	// first: 1 reads 7 inbox entries a round: the newest, live, and 6
	// deleted ones; the next round, answered the same, has not moved.
	ctx, cancel := context.WithTimeout(ctx, testenv.Scale(30*time.Second))
	defer cancel()
	one := 1
	conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &one})
	if err != nil {
		t.Fatalf("the read did not end: %v", err)
	}
	if len(conn.Edges) != 1 || conn.Edges[0].Node.PostID != posts[11] {
		t.Fatalf("page %v, want the newest post %d alone, what the merge had", lcItems(conn.Edges), posts[11])
	}
	if got := lcCount(te.metrics.NoProgress.WithLabelValues(metrics.NoProgressMerge)); got != 1 {
		t.Fatalf("feed_page_no_progress_total{at=merge} = %v, want 1", got)
	}
}
