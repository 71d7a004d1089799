package feed

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/livemsg"
	"feedservice/internal/testenv"
)

// A new post's fan-out writes the inboxes of the followers with a live
// subscription open before those of the others, whatever the order of
// the follows: with batches run one at a time, every connected follower's
// entry is announced before any other follower's. The followers who
// followed first come last from MySQL, and they are the connected ones
// here, so the order of before would announce them last.
func TestFanoutWritesConnectedReadersFirst(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) {
		c.Mode = config.ModePush
		c.FanoutBatchSize = 2
		c.FanoutWorkers = 1 // one batch at a time: the order of the batches is the order of the writes
	})
	author := te.user("author")
	var followers []int64
	for _, name := range []string{"fol0", "fol1", "fol2", "fol3", "fol4", "fol5", "fol6", "fol7"} {
		f := te.user(name)
		te.follow(f, author)
		followers = append(followers, f)
	}
	te.settle()
	connected := followers[:3] // the first to follow: the last batches of before
	for _, f := range followers[3:] {
		te.touchFeed(f) // an active reader's inbox, no subscription
	}
	for _, f := range connected {
		counts, _ := te.unreadCounts(f)
		if n := <-counts; n != 0 { // the subscription's inbox is there
			t.Fatalf("first count of %d: %d, want 0", f, n)
		}
	}

	ctx := context.Background()
	ps := te.redis.Subscribe(ctx, te.keys.InboxesChannel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}
	post := te.post(author, "to the connected first")
	var order []int64
	deadline := time.After(testenv.Scale(10 * time.Second))
	for len(order) < len(followers) {
		select {
		case m := <-ps.Channel():
			order = append(order, announcedAdds(t, m, post)...)
		case <-deadline:
			t.Fatalf("announced %v of followers %v", order, followers)
		}
	}
	lastConnected, firstOther := -1, len(order)
	for i, r := range order {
		if slices.Contains(connected, r) {
			lastConnected = max(lastConnected, i)
		} else {
			firstOther = min(firstOther, i)
		}
	}
	if lastConnected > firstOther {
		t.Errorf("entries announced in the order %v: the connected followers %v not all before the others", order, connected)
	}
}

// announcedAdds are the readers a message of the inboxes channel
// announces post's entry to.
func announcedAdds(t *testing.T, m *redis.Message, post int64) []int64 {
	t.Helper()
	b, err := livemsg.ParseBatch(m.Payload)
	if err != nil {
		t.Fatalf("inboxes channel: %q: %v", m.Payload, err)
	}
	if b.Message.Verb != livemsg.VerbAdd || b.Message.Add.Post != post {
		return nil
	}
	return b.Readers
}
