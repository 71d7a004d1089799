package feed

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/keyspace"
)

// dropInboxAfterCheck is a Redis hook that, once armed, deletes an inbox
// right after the fan-out's next check of the index of active inboxes
// (its ZMSCORE) answered: the inbox is gone between the check and the
// write, as one that expires or is reset then.
type dropInboxAfterCheck struct {
	rdb   redis.UniversalClient
	inbox string
	armed atomic.Bool
	fired atomic.Bool
}

func (h *dropInboxAfterCheck) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *dropInboxAfterCheck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *dropInboxAfterCheck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) > 0 && cmds[0].Name() == "zmscore" && h.armed.CompareAndSwap(true, false) {
			if derr := h.rdb.Del(ctx, h.inbox).Err(); derr != nil {
				return derr
			}
			h.fired.Store(true)
		}
		return err
	}
}

// An inbox that went between the fan-out's check that its reader is active
// and the write (expired, or reset) takes the write as a key without the
// floor marker, which expires; the reader's next read takes it for absent
// and rebuilds the inbox, so the feed is whole, and never only the
// entries written after the inbox went.
func TestInboxGoneBetweenCheckAndWriteIsRebuilt(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Mode = config.ModePush })
	ctx := context.Background()
	reader, author := te.user("reader"), te.user("author")
	te.follow(reader, author)
	var older []int64
	for i := range 5 {
		older = append(older, te.post(author, "before "+strconv.Itoa(i)))
	}
	te.settle()
	if got := te.readFeed(reader, 3); len(got) != len(older) {
		t.Fatalf("first read: %d entries, want %d", len(got), len(older))
	}
	inbox := te.keys.Inbox(reader)
	hook := &dropInboxAfterCheck{rdb: te.redis, inbox: inbox}
	te.redis.AddHook(hook)
	hook.armed.Store(true)
	late := te.post(author, "after the inbox went")
	te.settle()
	if !hook.fired.Load() {
		t.Fatal("the fan-out made no check of the index of active inboxes")
	}

	members, err := te.redis.ZRangeWithScores(ctx, inbox, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The fan-out's trim flag (at score -2) may be there too: one delivery
	// in timeline.InboxTrimEvery, picked by the reader's and the post's ids,
	// leaves it. It is no floor marker.
	members = slices.DeleteFunc(members, func(z redis.Z) bool { return z.Score == -2 })
	want := []redis.Z{{Score: float64(late), Member: strconv.FormatInt(late, 10)}}
	if !slices.Equal(members, want) {
		t.Fatalf("the key the write made holds %v, want only the late entry %v, without a floor marker", members, want)
	}
	if ttl := te.redis.PTTL(ctx, inbox).Val(); ttl <= 0 || ttl > te.cfg.InboxTTL {
		t.Fatalf("the key the write made has PTTL %v, want at most InboxTTL (%v): it must expire", ttl, te.cfg.InboxTTL)
	}

	rebuilds := lcCount(te.metrics.Rebuilds)
	got := te.readFeed(reader, 2)
	if n := lcCount(te.metrics.Rebuilds) - rebuilds; n != 1 {
		t.Fatalf("the read after the write rebuilt %v times, want once", n)
	}
	var posts []int64
	for _, it := range got {
		posts = append(posts, it.Post)
	}
	wantPosts := append([]int64{late}, older...)
	slices.Reverse(wantPosts[1:])
	if !slices.Equal(posts, wantPosts) {
		t.Fatalf("the feed read after the inbox went is %v, want every post, newest first: %v", posts, wantPosts)
	}
	lcCheckFeeds(t, te, "rebuilt", reader)
	if marker := te.redis.ZRangeByScore(ctx, inbox, &redis.ZRangeBy{Min: "-1", Max: "-1"}).Val(); len(marker) != 1 {
		t.Fatalf("the rebuilt inbox's floor marker: %v, want one", marker)
	}
}

// An inbox whose reader Redis dropped from the index of active inboxes
// (the index's key lost on one node of a cluster while the inbox's node
// kept it) is skipped by the fan-out from then on: a read takes it for
// missing, answers from MySQL with the post the fan-out skipped, and
// rebuilds it, entering the reader in the index again; the next post
// reaches it. (The local tiers are off: a fan-out's copy of the index would
// hide the loss from this one instance for a while.)
func TestInboxWhoseReaderTheIndexLostIsRebuilt(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode; c.LocalCacheMaxEntries = -1 })
			ctx := context.Background()
			reader, author := te.user("reader"), te.user("author")
			te.follow(reader, author)
			first := te.post(author, "before")
			te.settle()
			if got := te.readFeed(reader, 3); len(got) != 1 || got[0].Post != first {
				t.Fatalf("first read: %v, want post %d", got, first)
			}
			te.inboxes.Wait()
			index := te.keys.ActiveInboxes(keyspace.ActiveInboxShard(reader))
			if err := te.redis.ZRem(ctx, index, strconv.FormatInt(reader, 10)).Err(); err != nil {
				t.Fatal(err)
			}
			skipped := te.post(author, "while the index lost the reader")
			te.settle()
			if n, _ := te.redis.ZScore(ctx, te.keys.Inbox(reader), strconv.FormatInt(skipped, 10)).Result(); n != 0 {
				t.Fatal("the fan-out wrote to the inbox of a reader the index no longer names: the test holds nothing")
			}
			if got := te.readFeed(reader, 3); len(got) != 2 || got[0].Post != skipped || got[1].Post != first {
				t.Fatalf("read after the index lost the reader: %v, want posts %d and %d", got, skipped, first)
			}
			te.inboxes.Wait()
			after := te.post(author, "after the rebuild")
			te.settle()
			if err := te.redis.ZScore(ctx, te.keys.Inbox(reader), strconv.FormatInt(after, 10)).Err(); err != nil {
				t.Fatalf("the next post is not in the rebuilt inbox: %v", err)
			}
			if got := te.readFeed(reader, 3); len(got) != 3 || got[0].Post != after {
				t.Fatalf("read after the rebuild: %v, want post %d first of 3", got, after)
			}
		})
	}
}
