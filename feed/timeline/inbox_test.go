package timeline

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
)

// An inbox grows past its cap by TrimSlack entries untrimmed, and the
// added source that would take it past that trims it back to the cap,
// moving the floor; the feed read is every post, newest first, before and
// after (MySQL serves what the trim took out).
func TestInboxTrimSlack(t *testing.T) {
	const capEntries = 32
	slack := TrimSlack(capEntries)
	if slack != 2 {
		t.Fatalf("TrimSlack(%d) = %d, want 2", capEntries, slack)
	}
	p := newTestParts(t, func(c *config.Config) { c.Mode = config.ModePush; c.InboxCap = capEntries })
	ctx := context.Background()
	reader, author := p.user("reader"), p.user("author")
	p.follow(reader, author)
	if got := p.feed(reader, 5); len(got) != 0 {
		t.Fatalf("first page %v, want none: the reader is active now, with an empty inbox", got)
	}
	inbox := p.d.Keys.Inbox(reader)
	card := func() int { return int(p.d.Redis.ZCard(ctx, inbox).Val()) - 1 } // less the floor marker
	var posts []int64
	add := func(n int) {
		t.Helper()
		var changes []Change
		for range n {
			post := p.post(author)
			posts = append(posts, post)
			changes = append(changes, AddSource(reader, post, author, Source{User: author, Event: post}, capEntries))
		}
		if applied, err := p.inboxes.Apply(ctx, changes); err != nil || applied != n {
			t.Fatalf("Apply: %d of %d applied, %v", applied, n, err)
		}
	}
	check := func(when string) {
		t.Helper()
		if got, want := p.feed(reader, len(posts)+1), newestFirst(posts); !slices.Equal(got, want) {
			t.Fatalf("%s: the feed is %v, want every post, newest first: %v", when, got, want)
		}
	}
	add(capEntries + slack)
	if n := card(); n != capEntries+slack {
		t.Fatalf("after %d posts the inbox holds %d entries, want all %d (cap %d + slack %d, not trimmed yet)", capEntries+slack, n, capEntries+slack, capEntries, slack)
	}
	check("at cap + slack")
	add(1)
	if n := card(); n != capEntries {
		t.Fatalf("after %d posts the inbox holds %d entries, want it trimmed to the cap, %d", capEntries+slack+1, n, capEntries)
	}
	marker := p.d.Redis.ZRangeByScore(ctx, inbox, &redis.ZRangeBy{Min: "-1", Max: "-1"}).Val()
	if want := fmt.Sprintf("~%d", posts[slack+1]); len(marker) != 1 || marker[0] != want {
		t.Fatalf("inbox marker %v after the trim, want %s: the oldest entry kept", marker, want)
	}
	check("trimmed")
}
