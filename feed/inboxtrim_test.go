package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"feedservice/feed/config"
	"feedservice/feed/timeline"

	"github.com/redis/go-redis/v9"
)

// TestInboxTrimSlack: an inbox grows past InboxCap by inboxTrimSlack
// entries untrimmed, and the add that would take it past that trims it back
// to InboxCap, moving the floor; the feed read through the engine is the
// one MySQL computes before and after.
func TestInboxTrimSlack(t *testing.T) {
	const capEntries = 32
	slack := timeline.TrimSlack(capEntries)
	if slack != 2 {
		t.Fatalf("timeline.TrimSlack(%d) = %d, want 2", capEntries, slack)
	}
	te := newTestEngine(t, func(c *config.Config) { c.Mode = config.ModePush; c.InboxCap = capEntries })
	ctx := context.Background()
	reader, author := te.user("reader"), te.user("author")
	te.follow(reader, author)
	te.settle()
	te.readFeed(reader, 5)                                                                  // the reader is active: an inbox, empty
	card := func() int { return int(te.redis.ZCard(ctx, te.keys.Inbox(reader)).Val()) - 1 } // less the floor marker
	check := func(when string) {
		t.Helper()
		got, want := te.readFeed(reader, 7), te.pulledFeed(reader)
		if !slices.EqualFunc(got, want, func(a, b feedItem) bool { return a.Post == b.Post && a.Key == b.Key }) {
			t.Fatalf("%s: the feed read has %d entries, MySQL's %d: %v, want %v", when, len(got), len(want), got, want)
		}
	}
	for i := range capEntries + slack {
		te.post(author, fmt.Sprintf("post %d", i))
	}
	te.settle()
	if n := card(); n != capEntries+slack {
		t.Fatalf("after %d posts the inbox holds %d entries, want all %d (cap %d + slack %d, not trimmed yet)", capEntries+slack, n, capEntries+slack, capEntries, slack)
	}
	check("at cap + slack")
	te.post(author, "one past the slack")
	te.settle()
	if n := card(); n != capEntries {
		t.Fatalf("after %d posts the inbox holds %d entries, want it trimmed to the cap, %d", capEntries+slack+1, n, capEntries)
	}
	marker := te.redis.ZRangeByScore(ctx, te.keys.Inbox(reader), &redis.ZRangeBy{Min: "-1", Max: "-1"}).Val()
	if len(marker) != 1 || marker[0] == "~0" {
		t.Fatalf("inbox marker %v: want a floor above 0 after the trim", marker)
	}
	check("trimmed")
}
