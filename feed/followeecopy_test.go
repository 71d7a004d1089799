package feed

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/timeline"
	"feedservice/internal/testenv"
)

// followingReplies records the size of the members part of every
// readerStateScript reply: what of the followee set crossed the wire. Its
// note sees every reply (testenv.AfterEachCommand).
type followingReplies struct{ recorder[int] }

func (h *followingReplies) note(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 || args[1] != timeline.Scripts.State.Hash() {
		return
	}
	vals, err := cmd.(*redis.Cmd).Slice()
	if err != nil || len(vals) < 3 {
		return
	}
	joined, _ := vals[2].(string)
	h.add(len(joined))
}

// A reader's followee set crosses the wire only when it changed since this
// instance last read it: an unchanged set answers with its version alone,
// and the instance uses its own copy. A follow or unfollow served by
// another instance, and a rebuild of the set after it was dropped, are
// seen by the next read.
func TestFolloweeSetSentOnlyWhenChanged(t *testing.T) {
	one, two := startTwoEngines(t, func(c *config.Config) { c.Mode = config.ModePush })
	rdb := one.redis
	replies := &followingReplies{}
	rdb.AddHook(testenv.AfterEachCommand(replies.note))
	reader, a, b := one.user("reader"), one.user("alice"), one.user("bob")
	one.follow(reader, a)
	one.settle()

	// read loads the reader on te and checks the followees it went by,
	// whether the set's members came back, and that the metric says so.
	read := func(te *testEngine, step string, sent bool, want ...int64) {
		t.Helper()
		sentBefore, sameBefore := lcCount(te.metrics.FollowingSent), lcCount(te.metrics.FollowingUnchanged)
		replies.take()
		followees, loaded, err := te.reads.Followees(context.Background(), reader)
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
		dSent, dSame := lcCount(te.metrics.FollowingSent)-sentBefore, lcCount(te.metrics.FollowingUnchanged)-sameBefore
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
	read(one, "after a follow on the other instance", true, a, b)
	read(one, "again", false, a, b)
	two.unfollow(reader, a)
	read(one, "after an unfollow on the other instance", true, b)
	read(two, "the other instance after its own unfollow", true, b)
	read(two, "the other instance again", false, b)

	// A follow that changes nothing leaves the version: the copies stay.
	one.settle()
	read(one, "after the stream events", false, b)

	// The inbox and the set expire (the version is left, the worst case);
	// a follow meanwhile finds no set; the rebuilt set is a new version.
	ctx := context.Background()
	if err := rdb.Del(ctx, one.keys.Inbox(reader), one.keys.InboxSources(reader), one.keys.Following(reader)).Err(); err != nil {
		t.Fatal(err)
	}
	one.follow(reader, a)
	read(one, "after the set was dropped and rebuilt", true, a, b)
	read(two, "the other instance after the rebuild", true, a, b)
	read(one, "after the rebuild, again", false, a, b)
}

// With the local tiers off (LocalCacheMaxEntries negative) an instance
// keeps no copy: every read has the set's members sent, and goes by them.
func TestFolloweeSetSentEveryReadWithLocalTiersOff(t *testing.T) {
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.Mode, c.LocalCacheMaxEntries = config.ModePush, -1 })
	reader, alice := te.user("reader"), te.user("alice")
	te.follow(reader, alice)
	te.settle()
	for i := range 3 {
		sent := lcCount(te.metrics.FollowingSent)
		followees, _, err := te.reads.Followees(context.Background(), reader)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(followees, []int64{alice}) {
			t.Errorf("read %d went by followees %v, want [%d]", i, followees, alice)
		}
		if lcCount(te.metrics.FollowingSent) != sent+1 || lcCount(te.metrics.FollowingUnchanged) != 0 {
			t.Errorf("read %d: the set was not sent whole", i)
		}
	}
}
