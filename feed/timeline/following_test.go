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
	"feedservice/feed/internal/depstest"
	"feedservice/internal/testenv"
)

// followingReplies records the size of the members part of every
// readerStateScript reply: what of the followee set crossed the wire. Its
// note sees every reply (testenv.AfterEachCommand).
type followingReplies struct {
	mu    sync.Mutex
	sizes []int
}

func (h *followingReplies) note(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 || args[1] != readerStateScript.Hash() {
		return
	}
	vals, err := cmd.(*redis.Cmd).Slice()
	if err != nil || len(vals) < 3 {
		return
	}
	joined, _ := vals[2].(string)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sizes = append(h.sizes, len(joined))
}

// take returns the sizes recorded since the last take.
func (h *followingReplies) take() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.sizes
	h.sizes = nil
	return out
}

// A reader's followee set crosses the wire only when it changed since this
// instance last read it: an unchanged set answers with its version alone,
// and the instance uses its own copy. A follow or unfollow written by
// another instance, and a rebuild of the set after it was dropped, are
// seen by the next read.
func TestFolloweeSetSentOnlyWhenChanged(t *testing.T) {
	one := newTestParts(t, func(c *config.Config) { c.Mode = config.ModePush })
	two := one.another()
	ctx := context.Background()
	replies := &followingReplies{}
	one.d.Redis.AddHook(testenv.AfterEachCommand(replies.note))
	reader, a, b := one.user("reader"), one.user("alice"), one.user("bob")
	one.follow(reader, a)

	// read loads the reader on p and checks the followees it went by,
	// whether the set's members came back, and that the metric says so.
	read := func(p *testParts, step string, sent bool, want ...int64) {
		t.Helper()
		m := p.d.Metrics
		sentBefore, sameBefore := counterValue(t, m.FollowingSent), counterValue(t, m.FollowingUnchanged)
		replies.take()
		followees, loaded, err := p.reads.loadedFollowees(ctx, reader)
		if err != nil {
			t.Fatalf("%s: load reader: %v", step, err)
		}
		if got := slices.Sorted(slices.Values(followees)); !loaded || !slices.Equal(got, want) {
			t.Errorf("%s: the read went by followees %v (loaded %v), want %v", step, got, loaded, want)
		}
		sizes := replies.take()
		if len(sizes) == 0 {
			t.Fatalf("%s: no reader-state reply seen", step)
		}
		last := sizes[len(sizes)-1]
		if sent && last == 0 || !sent && last != 0 {
			t.Errorf("%s: the set's members took %d bytes of the reply; want them sent: %v", step, last, sent)
		}
		dSent, dSame := counterValue(t, m.FollowingSent)-sentBefore, counterValue(t, m.FollowingUnchanged)-sameBefore
		if sent && (dSent != 1 || dSame != 0) || !sent && (dSent != 0 || dSame != 1) {
			t.Errorf("%s: feed_following_reads_total rose by sent %v, unchanged %v; want sent: %v", step, dSent, dSame, sent)
		}
	}

	read(one, "first read (cold)", true, a)
	read(one, "second read", false, a)
	read(one, "third read", false, a)
	read(two, "the other instance's first read", true, a)
	read(two, "the other instance's second read", false, a)

	two.follow(reader, b)
	two.settleFollowing(reader, b, true)
	read(one, "after a follow on the other instance", true, a, b)
	read(one, "again", false, a, b)
	if _, err := two.d.Store.Unfollow(ctx, reader, a, 0, two.d.Now()); err != nil {
		t.Fatal(err)
	}
	two.settleFollowing(reader, a, false)
	read(one, "after an unfollow on the other instance", true, b)
	read(two, "the other instance after its own unfollow", true, b)
	read(two, "the other instance again", false, b)

	// A change that changes nothing (the stream event's settle, after
	// the mutation's) leaves the version: the copies stay.
	one.settleFollowing(reader, a, false)
	one.settleFollowing(reader, b, true)
	read(one, "after the stream events", false, b)

	// The inbox and the set expire (the version is left, the worst case);
	// a follow meanwhile finds no set; the rebuilt set is a new version.
	k := one.d.Keys
	if err := one.d.Redis.Del(ctx, k.Inbox(reader), k.InboxSources(reader), k.Following(reader)).Err(); err != nil {
		t.Fatal(err)
	}
	one.follow(reader, a)
	one.settleFollowing(reader, a, true)
	read(one, "after the set was dropped and rebuilt", true, a, b)
	read(two, "the other instance after the rebuild", true, a, b)
	read(one, "after the rebuild, again", false, a, b)
}

// With the local tiers off (LocalCacheMaxEntries negative) an instance
// keeps no copy: every read has the set's members sent, and goes by them.
func TestFolloweeSetSentEveryReadWithLocalTiersOff(t *testing.T) {
	p := newTestParts(t, func(c *config.Config) { c.Mode, c.LocalCacheMaxEntries = config.ModePush, -1 })
	reader, alice := p.user("reader"), p.user("alice")
	p.follow(reader, alice)
	m := p.d.Metrics
	for i := range 3 {
		sent := counterValue(t, m.FollowingSent)
		followees, _, err := p.reads.loadedFollowees(context.Background(), reader)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(followees, []int64{alice}) {
			t.Errorf("read %d went by followees %v, want [%d]", i, followees, alice)
		}
		if counterValue(t, m.FollowingSent) != sent+1 || counterValue(t, m.FollowingUnchanged) != 0 {
			t.Errorf("read %d: the set was not sent whole", i)
		}
	}
}

// raceFollow is a hook that, when the rebuild of reader's inbox writes its
// temporary keys (MySQL was read), runs a follow and lets the rebuild go on
// only once the follow committed and its change of the set found the
// rebuild running.
type raceFollow struct {
	tempKey string
	armed   atomic.Bool
	follow  func()
	waiting chan struct{}
	once    sync.Once
}

func (h *raceFollow) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *raceFollow) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if len(args) > 1 && args[0] == "evalsha" && args[1] == changeFollowingScript.Hash() {
			if n, _ := cmd.(*redis.Cmd).Int(); n == rebuilding {
				h.once.Do(func() { close(h.waiting) })
			}
		}
		return err
	}
}

func (h *raceFollow) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if args := cmd.Args(); h.armed.Load() && len(args) > 1 && args[0] == "sadd" && args[1] == h.tempKey {
				h.armed.Store(false)
				go h.follow()
				select {
				case <-h.waiting:
				case <-time.After(testenv.Scale(5 * time.Second)):
				}
				break
			}
		}
		return next(ctx, cmds)
	}
}

// A follow that commits while the inbox is rebuilt (after the rebuild read
// MySQL, before its swap) lands on the set swapped in: its change waits for
// the rebuild, whether the reader had no set or an old one that outlived
// the inbox.
func TestFollowDuringRebuildIsKept(t *testing.T) {
	for _, oldSet := range []bool{false, true} {
		name := "no set"
		if oldSet {
			name = "old set"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			p := newTestParts(t, func(c *config.Config) { c.Mode = config.ModePush })
			rdb, k := p.d.Redis, p.d.Keys
			reader, author, late := p.user("reader"), p.user("author"), p.user("late")
			p.follow(reader, author)
			p.post(author)
			p.feed(reader, 5)
			dropped := []string{k.Inbox(reader), k.InboxSources(reader)}
			if !oldSet {
				dropped = append(dropped, k.Following(reader))
			}
			rdb.Del(ctx, dropped...)
			if err := changeFollowingScript.Load(ctx, rdb).Err(); err != nil {
				t.Fatal(err)
			}
			followed := make(chan error, 1)
			hook := &raceFollow{tempKey: k.FollowingTemp(reader), waiting: make(chan struct{}), follow: func() {
				if _, err := p.d.Store.Follow(ctx, reader, late, p.d.IDs.Next(), p.d.Now()); err != nil {
					followed <- err
					return
				}
				followed <- p.inboxes.SettleFollowing(ctx, reader, late, true)
			}}
			hook.armed.Store(true)
			rdb.AddHook(hook)
			p.feed(reader, 5)
			if err := <-followed; err != nil {
				t.Fatal(err)
			}
			members, err := rdb.SMembers(ctx, k.Following(reader)).Result()
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{author, late}
			slices.Sort(want)
			if got := depstest.IDs(members); !slices.Contains(members, "~") || !slices.Equal(got, want) {
				t.Fatalf("followee set %v, want the marker and %v: the follow was lost", members, want)
			}
			select {
			case <-hook.waiting:
			default:
				t.Fatal("the follow's change of the set did not meet the rebuild: the test did not make the race")
			}
		})
	}
}
