package feed

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/internal/testenv"

	"github.com/redis/go-redis/v9"
)

// numSub is how many connections Redis counts on a channel.
func numSub(t *testing.T, te *testEngine, channel string) int64 {
	t.Helper()
	n, err := testenv.NumSub(context.Background(), te.redis, channel)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// unreadCounts opens the stream of reader's unread counts, which stop,
// or else the end of the test, closes.
func (te *testEngine) unreadCounts(reader int64) (counts <-chan int, stop context.CancelFunc) {
	te.t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	te.t.Cleanup(stop)
	counts, err := te.UnreadCounts(ctx, reader)
	if err != nil {
		te.t.Fatalf("unread counts of %d: %v", reader, err)
	}
	return counts, stop
}

// waitFor polls cond until it holds, or fails after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scale(5 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that never reads its subscription neither blocks the hub nor
// other clients, and when it reads at last it gets the newest count, not a
// backlog.
func TestSlowClientBlocksNobody(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Mode = config.ModePush })
	author, slow, fast := te.user("author"), te.user("slow"), te.user("fast")
	te.follow(slow, author)
	te.follow(fast, author)
	slowCounts, _ := te.unreadCounts(slow)
	fastCounts, _ := te.unreadCounts(fast)
	if n := <-fastCounts; n != 0 {
		t.Fatalf("first count %d, want 0", n)
	}
	const posts = 30
	for i := range posts {
		te.post(author, "post")
		// The fast client sees each count while the slow one reads nothing.
		deadline := time.After(testenv.Scale(3 * time.Second))
		for got := -1; got != i+1; {
			select {
			case got = <-fastCounts:
			case <-deadline:
				t.Fatalf("fast client stuck at %d after post %d", got, i+1)
			}
		}
	}
	// The slow client's stream holds only the newest count.
	testenv.WaitFor(t, "the slow client's newest count", func() bool {
		select {
		case n := <-slowCounts:
			return n == posts
		default:
			return false
		}
	})
}

// A fan-out announces its entries in one message a round on the inboxes
// channel, which every instance reads: the readers listening on either
// instance see their count rise, and a reader of another author's hears
// nothing.
func TestFanoutAnnouncesToEveryInstance(t *testing.T) {
	t.Parallel()
	a, b := startTwoEngines(t, func(c *config.Config) { c.Mode = config.ModePush })
	author, other := a.user("author"), a.user("other")
	onA, onB, elsewhere := a.user("ona"), a.user("onb"), a.user("elsewhere")
	a.follow(onA, author)
	a.follow(onB, author)
	a.follow(elsewhere, other)
	a.settle()
	countsA, _ := a.unreadCounts(onA)
	countsB, _ := b.unreadCounts(onB)
	countsElsewhere, _ := b.unreadCounts(elsewhere)
	for name, counts := range map[string]<-chan int{"ona": countsA, "onb": countsB, "elsewhere": countsElsewhere} {
		if n := <-counts; n != 0 {
			t.Fatalf("%s: first count %d, want 0", name, n)
		}
	}
	a.post(author, "to both instances")
	for name, counts := range map[string]<-chan int{"ona": countsA, "onb": countsB} {
		select {
		case n := <-counts:
			if n != 1 {
				t.Fatalf("%s: count %d after the post, want 1", name, n)
			}
		case <-time.After(testenv.Scale(5 * time.Second)):
			t.Fatalf("%s: no count after the post", name)
		}
	}
	select {
	case n := <-countsElsewhere:
		t.Fatalf("a reader who does not follow the author got count %d", n)
	case <-time.After(300 * time.Millisecond):
	}
}

// loseAnswers makes the next pipeline of inbox writes to key fail after Redis
// ran it, as a timeout that loses the answers of commands that took effect
// would.
type loseAnswers struct {
	key   string
	armed atomic.Bool
}

func (h *loseAnswers) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *loseAnswers) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *loseAnswers) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		args := cmds[0].Args()
		ran := len(args) > 3 && args[0] == "evalsha" && args[3] == h.key || // a script's
			len(args) > 1 && args[0] == "zadd" && args[1] == h.key // a new post's plain commands (timeline.Deliver)
		if err == nil && ran && h.armed.CompareAndSwap(true, false) {
			for _, c := range cmds {
				c.SetErr(errors.New("i/o timeout"))
			}
			return errors.New("i/o timeout")
		}
		return err
	}
}

// A fan-out task whose answers were lost after its entries went in fails,
// and its re-delivery finds them recorded: it is announced (as a change)
// all the same, so the readers' counts still move. What is watched is the
// inboxes channel, where only the fan-out speaks: a listener may recount
// on its own at any time (one that could not build its inbox at once
// retries a second later), so its counts cannot tell a silent round.
func TestFanoutRedeliveryAfterLostAnswersAnnounces(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) {
		c.Mode = config.ModePush
		c.FanoutWorkers = 0
		c.Dispatch = false
	})
	ctx := context.Background()
	author, reader := te.user("author"), te.user("reader")
	te.follow(reader, author)
	counts, _ := te.unreadCounts(reader)
	if n := <-counts; n != 0 {
		t.Fatalf("first count %d, want 0", n)
	}
	announced := te.redis.Subscribe(ctx, te.keys.InboxesChannel())
	defer announced.Close()
	if _, err := announced.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	names := func(payload string) bool {
		return slices.Contains(strings.Fields(payload), strconv.FormatInt(reader, 10))
	}
	post := te.post(author, "its answers get lost") // not dispatched: the test fans it out
	task := fanout.Task{Op: fanout.OpAdd, Post: post, Author: author, User: author, Event: post, Readers: []int64{reader}}
	lose := &loseAnswers{key: te.keys.Inbox(reader)}
	te.redis.AddHook(lose)
	lose.armed.Store(true)
	if err := te.stream.RunTask(ctx, task); err == nil {
		t.Fatal("the task whose answers were lost succeeded")
	}
	select {
	case m := <-announced.Channel():
		if names(m.Payload) {
			t.Fatalf("announced %q for a round whose answers were lost", m.Payload)
		}
	case <-time.After(300 * time.Millisecond):
	}
	if err := te.stream.RunTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(testenv.Scale(5 * time.Second))
	for heard := false; !heard; {
		select {
		case m := <-announced.Channel():
			heard = names(m.Payload)
		case <-deadline:
			t.Fatal("the re-delivery was not announced")
		}
	}
	for n := -1; n != 1; {
		select {
		case n = <-counts:
		case <-deadline:
			t.Fatalf("count %d after the re-delivery, want 1", n)
		}
	}
}
