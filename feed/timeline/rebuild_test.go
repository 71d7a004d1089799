package timeline

import (
	"context"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
)

// Returning readers' pages answer from MySQL at once, and their inboxes
// are rebuilt after, RebuildsRunning at a time: with the one slot taken by
// a rebuild whose write is held, a second returning reader gets their page
// while their rebuild waits its turn, and a third, with the waiting line
// full, gets theirs and no rebuild (their next page asks again). Once the
// write goes, the first two inboxes are whole; the third reader's next
// page rebuilds theirs.
func TestRebuildsWaitTheirTurn(t *testing.T) {
	p := newTestParts(t, func(c *config.Config) { c.Mode = config.ModePush; c.RebuildsRunning = 1 })
	ctx := context.Background()
	author := p.user("author")
	readers := []int64{p.user("first"), p.user("second"), p.user("third")}
	for _, r := range readers {
		p.follow(r, author)
	}
	var want []int64
	for range 3 {
		want = append(want, p.post(author))
	}
	want = newestFirst(want)
	hold := testenv.HoldCommands(testenv.IsCommand("zadd", p.d.Keys.InboxTemp(readers[0])))
	p.d.Redis.AddHook(hold)
	defer hold.Release()

	page := func(reader int64) {
		t.Helper()
		size := 5
		conn, err := p.reads.Feed(ctx, reader, paging.PageArgs{First: &size})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, e := range conn.Edges {
			got = append(got, e.Node.PostID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("reader %d's page %v, want %v", reader, got, want)
		}
	}
	whole := func(reader int64) bool {
		t.Helper()
		ok, err := p.inboxes.whole(ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	waiting := func() float64 {
		t.Helper()
		var m dto.Metric
		if err := p.d.Metrics.RebuildsWaiting.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetGauge().GetValue()
	}

	page(readers[0])
	select {
	case <-hold.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("the first reader's rebuild never wrote their inbox")
	}
	page(readers[1])
	if whole(readers[1]) || waiting() != 1 {
		t.Fatalf("with the one slot taken, the second reader's inbox is whole (%v) and %v rebuilds wait; want it missing and 1 waiting", whole(readers[1]), waiting())
	}
	p.inboxes.rebuilds.mu.Lock()
	p.inboxes.rebuilds.max = 1 // the waiting line is full
	p.inboxes.rebuilds.mu.Unlock()
	dropped := counterValue(t, p.d.Metrics.RebuildsDropped)
	page(readers[2])
	if got := counterValue(t, p.d.Metrics.RebuildsDropped) - dropped; got != 1 || waiting() != 1 {
		t.Fatalf("with the line full, %v rebuilds were dropped and %v wait; want 1 and 1", got, waiting())
	}

	hold.Release()
	p.inboxes.Wait()
	if !whole(readers[0]) || !whole(readers[1]) || whole(readers[2]) || waiting() != 0 {
		t.Fatalf("after the write went: inboxes whole %v, %v, %v and %v waiting; want true, true, false and 0",
			whole(readers[0]), whole(readers[1]), whole(readers[2]), waiting())
	}
	page(readers[2])
	p.inboxes.Wait()
	if !whole(readers[2]) {
		t.Fatal("the third reader's next page did not rebuild their inbox")
	}
}
