package live

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/livemsg"
	"feedservice/internal/testenv"
)

// testHub is a running hub on its own key prefix, with what its handlers
// were handed.
type testHub struct {
	*Hub
	d             *deps.Deps
	pub           *livemsg.Publisher
	invalidations chan livemsg.Invalidation
	resubscribed  atomic.Int64 // the invalidate channel's (re)subscriptions
}

// startHub runs a hub on rdb under prefix until the test ends.
func startHub(t *testing.T, rdb redis.UniversalClient, prefix string) *testHub {
	t.Helper()
	d := &deps.Deps{Cfg: config.Config{}.WithDefaults(), Redis: rdb, Keys: keyspace.New(prefix), Metrics: metrics.New(),
		Log: slog.New(slog.DiscardHandler), WarnRedis: func(string, error) {}}
	th := &testHub{d: d, pub: livemsg.NewPublisher(rdb, d.Keys, d.Log), invalidations: make(chan livemsg.Invalidation, 16)}
	th.Hub = runHub(t, d, func(i livemsg.Invalidation) { th.invalidations <- i }, func() { th.resubscribed.Add(1) }, nil)
	return th
}

// runHub runs a hub with NewHub's arguments until the test ends, once it
// subscribed to the broadcast channels.
func runHub(t *testing.T, d *deps.Deps, onInvalidation func(livemsg.Invalidation), onResubscribed func(), onAuthorMessage func(int64)) *Hub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var subscribed atomic.Bool
	h := NewHub(ctx, d, onInvalidation, func() { onResubscribed(); subscribed.Store(true) }, onAuthorMessage)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	testenv.WaitFor(t, "the hub's broadcast subscription", subscribed.Load)
	return h
}

// count is the value of a counter.
func count(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// noAuthors is the AuthorsFunc of a reader who hears only their own
// channel (every reader in push mode).
func noAuthors(context.Context, int64) ([]int64, error) { return nil, nil }

// listen registers a listener of reader until the test ends, and takes
// the recount that its subscription's confirmation asks for.
func (th *testHub) listen(t *testing.T, reader int64) *Listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l, err := th.Listen(ctx, reader, noAuthors)
	if err != nil {
		t.Fatal(err)
	}
	th.waitRecount(t, l, "the subscription's confirmation")
	return l
}

// waitRecount waits until l was woken with a recount asked.
func (th *testHub) waitRecount(t *testing.T, l *Listener, after string) {
	t.Helper()
	deadline := time.After(testenv.Scale(5 * time.Second))
	for {
		select {
		case <-l.Wake():
			if recount, _ := l.TakeCount(); recount {
				return
			}
		case <-deadline:
			t.Fatalf("no recount after %s", after)
		}
	}
}

// One connection per instance, reference-counted channels: two listeners of
// one reader share one subscription, which ends with the last of them.
func TestHubChannelsAreReferenceCounted(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	th := startHub(t, rdb, prefix)
	const reader = 7
	channel := th.d.Keys.ReaderChannel(reader)
	numSub := func() int64 {
		t.Helper()
		n, err := testenv.NumSub(context.Background(), rdb, channel)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, stopFirst := context.WithCancel(context.Background())
	second, stopSecond := context.WithCancel(context.Background())
	defer stopFirst()
	defer stopSecond()
	if _, err := th.Listen(first, reader, noAuthors); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Listen(second, reader, noAuthors); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "one subscription to the reader's channel", func() bool { return numSub() == 1 })
	stopFirst()
	time.Sleep(100 * time.Millisecond)
	if n := numSub(); n != 1 {
		t.Fatalf("after the first listener left: %d subscriptions, want 1", n)
	}
	stopSecond()
	testenv.WaitFor(t, "the channel to be unsubscribed", func() bool { return numSub() == 0 })
	if n := th.channels(); n != 0 {
		t.Fatalf("hub still tracks %d channels", n)
	}
}

// Each message a publisher encodes reaches a reader's listener as what it
// says: an add as a new key (no recount) and an entry, a follow change or
// a hide as a refresh of the authors heard and a recount, a change as a
// recount alone; and a
// batch of the inboxes channel as its message, for the readers it names
// only.
func TestHubDeliversTypedMessages(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	th := startHub(t, rdb, prefix)
	ctx := context.Background()
	const reader, other = 7, 8
	l, elsewhere := th.listen(t, reader), th.listen(t, other)
	channel := th.d.Keys.ReaderChannel(reader)

	add := livemsg.Add{Post: 375522246430720, Key: 375522246430721}
	th.pub.Publish(ctx, channel, livemsg.Added(add))
	wantAdded(t, l, add)

	for _, m := range []livemsg.Message{livemsg.Followed(other, true), livemsg.Followed(other, false), livemsg.Hid(other), livemsg.Hid(0)} {
		th.pub.Publish(ctx, channel, m)
		testenv.WaitFor(t, m.Encode()+" to ask for a refresh", l.TakeRefresh)
		th.waitRecount(t, l, m.Encode())
	}
	th.pub.Publish(ctx, channel, livemsg.Change())
	th.waitRecount(t, l, "a change")
	if l.TakeRefresh() {
		t.Error("a change asked for a refresh of the authors heard")
	}

	batch := livemsg.Add{Post: 375522246430730, Key: 375522246430731}
	th.pub.AnnounceAdded(ctx, batch, []int64{reader, 99})
	wantAdded(t, l, batch)
	th.pub.AnnounceChanged(ctx, []int64{reader})
	th.waitRecount(t, l, "a batch's change")
	select {
	case a := <-elsewhere.Added():
		t.Fatalf("a reader no batch named heard %+v", a)
	default:
	}
	for _, kind := range []string{"reader", "inboxes"} {
		if n := count(th.d.Metrics.LiveUnreadable.WithLabelValues(kind)); n != 0 {
			t.Fatalf("%v unreadable messages counted on the %s channel, want 0", n, kind)
		}
	}
}

// wantAdded waits for l to hear that add entered its feed, as a new key
// to count without a recount.
func wantAdded(t *testing.T, l *Listener, add livemsg.Add) {
	t.Helper()
	select {
	case got := <-l.Added():
		if got != add {
			t.Fatalf("heard %+v, want %+v", got, add)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatalf("%+v not heard", add)
	}
	recount, keys := l.TakeCount()
	if recount || len(keys) != 1 || keys[0] != add.Key {
		t.Fatalf("count took recount %v, keys %v; want key %d alone", recount, keys, add.Key)
	}
}

// A payload no parser reads is logged, counted by channel, and taken for a
// lost message: on a reader's channel and on the inboxes channel the
// listeners recount, on the invalidate channel every local copy is
// dropped (as after a resubscription). Nothing panics.
func TestHubTakesUnreadableForLost(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	th := startHub(t, rdb, prefix)
	ctx := context.Background()
	const reader = 7
	l := th.listen(t, reader)
	k := th.d.Keys
	unreadable := func(kind string) float64 {
		return count(th.d.Metrics.LiveUnreadable.WithLabelValues(kind))
	}

	for i, payload := range []string{"add 5", "add x y", "chnage", ""} {
		if err := rdb.Publish(ctx, k.ReaderChannel(reader), payload).Err(); err != nil {
			t.Fatal(err)
		}
		th.waitRecount(t, l, "the unreadable "+payload)
		testenv.WaitFor(t, "the reader channel's count", func() bool { return unreadable("reader") == float64(i+1) })
	}

	for i, payload := range []string{"add 5 7", "change", "add 5 7 x", "hide 7"} {
		if err := rdb.Publish(ctx, k.InboxesChannel(), payload).Err(); err != nil {
			t.Fatal(err)
		}
		th.waitRecount(t, l, "the unreadable batch "+payload)
		testenv.WaitFor(t, "the inboxes channel's count", func() bool { return unreadable("inboxes") == float64(i+1) })
	}

	before := th.resubscribed.Load()
	for i, payload := range []string{"user", "post 1 x", "sync"} {
		if err := rdb.Publish(ctx, k.CacheInvalidateChannel(), payload).Err(); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, "local copies dropped for "+payload, func() bool { return th.resubscribed.Load() == before+int64(i+1) })
		if n := unreadable("invalidate"); n != float64(i+1) {
			t.Fatalf("after %q: %v unreadable invalidations counted, want %d", payload, n, i+1)
		}
	}
	select {
	case inv := <-th.invalidations:
		t.Fatalf("an unreadable invalidation was handed on as %+v", inv)
	default:
	}

	// The hub still reads what follows.
	if err := th.pub.Invalidate(ctx, livemsg.Invalidation{Kind: "user", IDs: []int64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	select {
	case inv := <-th.invalidations:
		if inv.Kind != "user" || len(inv.IDs) != 2 {
			t.Fatalf("handed on %+v", inv)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatal("a readable invalidation after unreadable ones was not handed on")
	}
}
