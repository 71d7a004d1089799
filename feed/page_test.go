package feed

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/testenv"
	"feedservice/store"
)

// A page read from a fetch that ignores its bound ends where it began: the
// page says there is no more in that direction (else a client following its
// cursor would get the same page for ever), and the metric counts it. A
// fetch that honours its bound still pages on.
func TestPaginateRefusesStalledCursor(t *testing.T) {
	keys := []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1} // a list, newest first
	honest := func(_ context.Context, dir store.Direction, bound int64, limit int) ([]int64, error) {
		var out []int64
		for _, k := range keys {
			if (dir == store.Older && k < bound) || (dir == store.Newer && k > bound) {
				out = append(out, k)
			}
		}
		if dir == store.Newer {
			slices.Reverse(out)
		}
		return out[:min(len(out), limit)], nil
	}
	// stalled answers from the top (or the bottom) whatever bound it is given.
	stalled := func(ctx context.Context, dir store.Direction, _ int64, limit int) ([]int64, error) {
		from := int64(1 << 62)
		if dir == store.Newer {
			from = 0
		}
		return honest(ctx, dir, from, limit)
	}
	two, mid := 2, encodeCursor(cursorTimeline, 6)
	forward, backward := PageArgs{First: &two, After: &mid}, PageArgs{Last: &two, Before: &mid}
	identity := func(k int64) int64 { return k }

	for _, tc := range []struct {
		name     string
		args     PageArgs
		fetch    fetchFunc[int64]
		want     []int64
		more     bool // hasNextPage forward, hasPreviousPage backward
		refusals float64
	}{
		{"forward, honest", forward, honest, []int64{5, 4}, true, 0},
		{"backward, honest", backward, honest, []int64{8, 7}, true, 0},
		{"forward, stalled", forward, stalled, []int64{10, 9}, false, 1},
		{"backward, stalled", backward, stalled, []int64{2, 1}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMetrics()
			items, info, err := paginate(context.Background(), m, cursorTimeline, tc.args, tc.fetch, identity)
			if err != nil {
				t.Fatal(err)
			}
			more, cursor := info.HasNextPage, info.EndCursor
			if tc.args.Last != nil {
				more, cursor = info.HasPreviousPage, info.StartCursor
			}
			if !slices.Equal(items, tc.want) || more != tc.more {
				t.Fatalf("page %v, more %v (cursor %s); want %v, more %v", items, more, derefCursor(cursor), tc.want, tc.more)
			}
			if got := lcCount(m.noProgress.WithLabelValues(noProgressCursor)); got != tc.refusals {
				t.Fatalf("feed_page_no_progress_total{at=cursor} = %v, want %v", got, tc.refusals)
			}
		})
	}
}

func derefCursor(c *string) string {
	if c == nil {
		return "none"
	}
	return *c
}

// replayInbox is a Redis hook that, once armed, answers every read of one
// inbox with the first answer it saw: a Redis (or a proxy in front of it)
// that ignores the bound it is asked from.
type replayInbox struct {
	key   string
	armed atomic.Bool
	mu    sync.Mutex
	first any
}

func (h *replayInbox) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *replayInbox) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.replay(cmd)
		}
		return err
	}
}

func (h *replayInbox) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := next(ctx, cmd); err != nil {
			return err
		}
		h.replay(cmd)
		return nil
	}
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
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	hook := &replayInbox{}
	rdb.AddHook(hook)
	// No workers and no dispatcher: the deletes below stay out of the inbox,
	// whose stale entries the read must then skip.
	te := startTestEngine(t, newTestStore(t), rdb, prefix, func(c *Config) {
		c.Mode, c.InboxCap, c.FanoutWorkers, c.Dispatch = ModePush, 20, 0, false
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
	if err := readInboxScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	hook.key = te.keys.inbox(reader)
	hook.armed.Store(true)

	// first: 1 reads 7 inbox entries a round: the newest, live, and 6
	// deleted ones; the next round, answered the same, has not moved.
	ctx, cancel := context.WithTimeout(ctx, testenv.Scale(30*time.Second))
	defer cancel()
	one := 1
	conn, err := te.Feed(ctx, reader, PageArgs{First: &one})
	if err != nil {
		t.Fatalf("the read did not end: %v", err)
	}
	if len(conn.Edges) != 1 || conn.Edges[0].Node.PostID != posts[11] {
		t.Fatalf("page %v, want the newest post %d alone, what the merge had", lcItems(conn.Edges), posts[11])
	}
	if got := lcCount(te.metrics.noProgress.WithLabelValues(noProgressMerge)); got != 1 {
		t.Fatalf("feed_page_no_progress_total{at=merge} = %v, want 1", got)
	}
}
