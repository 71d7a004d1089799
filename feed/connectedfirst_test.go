package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// TestConnectedReadersAreToldBeforeTheOthersAreWritten: a new post's
// connected followers hear of it (their unread count moves) while every
// Redis call about its other followers is held: the index of connected
// readers asked about them, the index of active inboxes, their inbox
// writes. So a connected reader's red dot waits neither for the inbox
// writes of the readers who are not connected nor for the rest of the
// follower list to be read and looked up: only for the pages of followers
// up to their own. The connected followers here followed last, so MySQL
// lists them first. Once the calls go on, every follower has the entry.
func TestConnectedReadersAreToldBeforeTheOthersAreWritten(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) {
		c.Mode = config.ModePush
		c.FanoutBatchSize = 2
		c.FanoutWorkers = 2
	})
	author := te.user("author")
	var followers []int64
	for _, name := range []string{"fol0", "fol1", "fol2", "fol3", "fol4", "fol5"} {
		f := te.user(name)
		te.follow(f, author)
		followers = append(followers, f)
	}
	te.settle()
	others, connected := followers[:4], followers[4:]
	for _, f := range others {
		te.touchFeed(f) // an active reader's inbox, no subscription
	}
	counts := map[int64]<-chan int{}
	for _, f := range connected {
		counts[f], _ = te.unreadCounts(f)
		if n := <-counts[f]; n != 0 {
			t.Fatalf("first count of %d: %d, want 0", f, n)
		}
	}

	hold := testenv.HoldCommands(namesOneOf(others))
	te.redis.AddHook(hold)
	defer hold.Release()
	te.post(author, "to the connected first")
	deadline := time.After(testenv.Scale(10 * time.Second))
	for _, f := range connected {
		select {
		case n := <-counts[f]:
			if n != 1 {
				t.Errorf("count of connected follower %d: %d, want 1", f, n)
			}
		case <-deadline:
			t.Fatalf("connected follower %d was not told of the post while the calls about the others were held", f)
		}
	}
	select {
	case <-hold.Held():
	case <-deadline:
		t.Fatal("no call about the other followers was made: the test holds nothing")
	}

	hold.Release()
	te.settle()
	for _, f := range followers {
		if n := te.unreadCountOf(f); n != 1 {
			t.Errorf("unread count of follower %d after the fan-out: %d, want 1", f, n)
		}
	}
}

// namesOneOf is a testenv.HoldCommands match of the commands that name one
// of readers, as an argument or by the hash tag of their keys.
func namesOneOf(readers []int64) func(redis.Cmder) bool {
	var names []string
	for _, r := range readers {
		names = append(names, strconv.FormatInt(r, 10))
	}
	return func(cmd redis.Cmder) bool {
		for _, a := range cmd.Args() {
			s := fmt.Sprint(a)
			for _, n := range names {
				if s == n || strings.Contains(s, "{u"+n+"}") {
					return true
				}
			}
		}
		return false
	}
}
