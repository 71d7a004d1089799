package feed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"feedservice/feed/config"
)

// TestBlockResetBounded: a block toggled again and again on one user resets
// their inbox once per BlockResetInterval, not once per toggle, and their
// feed still honours every block at once: while the reset is held back a
// block patches their followee set (the blocker's posts, and a friend's
// reposts of them, stay out, old and new), an unblock leaves them hiding
// the blocker until the deferred reset, and that reset brings back
// exactly what the feed holds without the block. With the setting turned
// off (negative), each toggle resets, as before.
func TestBlockResetBounded(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePush, config.ModeHybrid} {
		for _, interval := range []time.Duration{time.Minute, -1} {
			t.Run(fmt.Sprintf("%s/%v", mode, interval), func(t *testing.T) {
				t.Parallel()
				w := newTestEngine(t, func(c *config.Config) { c.Mode, c.BlockResetInterval = mode, interval })
				ctx := context.Background()
				a, v, f := w.user("actor"), w.user("victim"), w.user("friend")
				w.follow(v, a)
				w.follow(v, f)
				w.touchFeed(v)
				pa := w.post(a, "actor's")
				fr := w.repost(f, pa)
				pf := w.post(f, "friend's")
				w.settle()
				bmWantFeed(t, w, "before", v, []feedItem{
					{Post: pf, Key: pf, Reposters: []int64{}},
					{Post: pa, Key: pa, Reposters: []int64{f}},
				})
				inboxKept := func() bool {
					n, err := w.redis.Exists(ctx, w.keys.Inbox(v)).Result()
					if err != nil {
						t.Fatal(err)
					}
					return n == 1
				}
				hidden := []feedItem{{Post: pf, Key: pf, Reposters: []int64{}}}
				var newer []int64 // the actor's posts written during the toggles, each reposted by the friend
				for i := range 4 {
					w.block(a, v)
					if bounded := interval > 0 && i > 0; inboxKept() != bounded {
						t.Fatalf("block #%d: victim's inbox kept %v, want %v (reset only when not bounded)", i+1, inboxKept(), bounded)
					}
					p := w.post(a, fmt.Sprintf("actor's #%d", i))
					newer = append(newer, p, w.repost(f, p))
					w.settle()
					bmWantFeed(t, w, fmt.Sprintf("block #%d", i+1), v, hidden)
					w.touchFeed(v) // a warm inbox for the next toggle

					w.unblock(a, v)
					if bounded := interval > 0; inboxKept() != bounded {
						t.Fatalf("unblock #%d: victim's inbox kept %v, want %v", i+1, inboxKept(), bounded)
					}
					w.settle()
					if interval > 0 {
						// Until the deferred reset the victim still hides the
						// actor: less than the feed holds, never more.
						bmWantFeed(t, w, fmt.Sprintf("unblock #%d, reset deferred", i+1), v, hidden)
					}
				}
				n, err := w.ResetDueBlocks(ctx, w.now().Add(2*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 1, false: 0}[interval > 0]; n != want {
					t.Fatalf("deferred resets made after the interval: %d, want %d", n, want)
				}
				// No follow came back; the friend's reposts bring the actor's
				// posts, new ones included, in their places.
				want := []feedItem{}
				for i := len(newer) - 2; i >= 0; i -= 2 {
					want = append(want, feedItem{Post: newer[i], Key: newer[i+1], Reposters: []int64{f}})
				}
				want = append(want, feedItem{Post: pf, Key: pf, Reposters: []int64{}}, feedItem{Post: pa, Key: fr, Reposters: []int64{f}})
				bmWantFeed(t, w, "after the interval", v, want)
			})
		}
	}
}
