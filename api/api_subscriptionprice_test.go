package api

// Black-box tests that a subscription pays for what it runs: its price is
// capped lower than a query's, and each of its events spends that price
// again from the viewer's complexity budget.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
	"feedservice/resolvers"
)

// heavyAddedSub selects a page of followers under each new feed item.
const heavyAddedSub = `subscription { feedItemAdded { cursor node { post { id author { followers(first: 5) { edges { node { id username } } } } } } } }`

// TestSubscriptionPriceCap: a subscription may cost
// MAX_SUBSCRIPTION_COMPLEXITY and no more.
func TestSubscriptionPriceCap(t *testing.T) {
	t.Parallel()
	price := priceOf(t, heavyAddedSub, nil)
	for _, c := range []struct {
		max      int
		wantCode string
	}{{price, ""}, {price - 1, "BAD_USER_INPUT"}} {
		s := newTestServer(t, backendReal, func(cfg *settings.Settings) { cfg.MaxSubscriptionComplexity = c.max })
		reader := s.signUp(t, "reader")
		conn := liveConnect(t, s, liveTransportWS, reader.Token)
		id := conn.subscribe(heavyAddedSub)
		if c.wantCode == "" {
			liveWaitListening(t, s, reader, 5*time.Second)
			continue
		}
		res, end, err := conn.event(id, 5*time.Second)
		if err != nil || liveErrorCode(res, end) != c.wantCode {
			t.Errorf("a subscription of price %d under a cap of %d: %v %+v %v, want %s", price, c.max, err, res.Errors, end, c.wantCode)
		}
	}
}

// TestSubscriptionEventsSpendTheBudget: ten heavy subscriptions on one
// socket, under a burst of posts by a followee, run no more events than
// the viewer's complexity budget pays for, and each ends with RATE_LIMITED
// once it is spent. (Each event ran its selection for free: 30 posts were
// 300 executions.)
func TestSubscriptionEventsSpendTheBudget(t *testing.T) {
	t.Parallel()
	const subscriptions, posts, paidEvents = 10, 30, 15
	price := priceOf(t, heavyAddedSub, nil)
	// The budget pays for the subscriptions, paidEvents events and the
	// reader's sign-up and follow, and refills too slowly to matter here.
	budget := ratelimit.Rate{Count: (subscriptions + paidEvents) * price, Period: time.Hour}
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.ComplexityRate = budget })
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	var ids []string
	for range subscriptions {
		ids = append(ids, conn.subscribe(heavyAddedSub))
	}
	liveWaitListening(t, s, reader, 5*time.Second)
	for i := range posts {
		livePost(t, author, fmt.Sprintf("post %d", i))
	}
	events, ended := 0, map[string]string{}
	for _, id := range ids {
		for {
			res, end, err := conn.event(id, 10*time.Second)
			if err != nil {
				t.Fatalf("subscription %s: after %d events, no end within %s: %v", id, events, testenv.Scale(10*time.Second), err)
			}
			if end != nil {
				ended[id] = liveErrorCode(res, end)
				break
			}
			events++
		}
	}
	t.Logf("price %d, budget %s: %d events ran, of %d", price, budget, events, subscriptions*posts)
	if events > paidEvents {
		t.Errorf("%d events ran; the budget paid for %d", events, paidEvents)
	}
	for _, id := range ids {
		if ended[id] != "RATE_LIMITED" {
			t.Errorf("subscription %s ended with %q, want RATE_LIMITED", id, ended[id])
		}
	}
}

// TestUnreadCountEventsSpendTheCountsPrice: a budget of 200 buys about 10
// unreadCount events, each priced as the count in a query
// (UnreadCountCost), not 200 at gqlgen's default price of 1. The author
// posts one post at a time, each waited for as its count, until the
// subscription ends.
func TestUnreadCountEventsSpendTheCountsPrice(t *testing.T) {
	t.Parallel()
	const budget, maxPosts = 200, 60
	price := priceOf(t, liveUnreadSub, nil)
	if price != resolvers.UnreadCountCost {
		t.Fatalf("subscription { unreadCount } costs %d, want UnreadCountCost (%d)", price, resolvers.UnreadCountCost)
	}
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.ComplexityRate = ratelimit.Rate{Count: budget, Period: time.Hour}
	})
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	id := conn.subscribe(liveUnreadSub)
	events, code := 0, ""
	for posted := 0; code == "" && posted <= maxPosts; posted++ {
		if posted > 0 {
			livePost(t, author, fmt.Sprintf("post %d", posted))
		}
		for {
			res, end, err := conn.event(id, 10*time.Second)
			if err != nil {
				t.Fatalf("after %d posts and %d events, neither the count %d nor an end: %v", posted, events, posted, err)
			}
			if end != nil || len(res.Errors) > 0 {
				code = liveErrorCode(res, end)
				break
			}
			events++
			var data struct{ UnreadCount int }
			if err := json.Unmarshal(res.Data, &data); err != nil {
				t.Fatalf("unreadCount sent %s", res.Data)
			}
			if data.UnreadCount >= posted {
				break
			}
		}
	}
	t.Logf("budget %d, price %d: %d events, then %q", budget, price, events, code)
	// The start and each event spend the price; the reader's follow spent
	// a few units of the same budget.
	if events > budget/price || events < budget/price-2 {
		t.Errorf("a budget of %d bought %d unreadCount events, want about %d", budget, events, budget/price)
	}
	if code != "RATE_LIMITED" {
		t.Errorf("the subscription ended with %q, want RATE_LIMITED", code)
	}
}

// budgetCalls counts the calls to Redis that spend one key's budget: the
// rate limiter's scripts on it. A NOSCRIPT answer, which the client follows
// with the script itself, is not counted apart.
type budgetCalls struct {
	key string
	n   atomic.Int64
}

func (h *budgetCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *budgetCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		noScript := err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
		if len(args) > 3 && (args[0] == "evalsha" || args[0] == "eval") && fmt.Sprint(args[3]) == h.key && !noScript {
			h.n.Add(1)
		}
		return err
	}
}

func (h *budgetCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// complexityBudgetKey is the Redis key of reader's complexity budget on s
// (see ratelimit.Limiter's key).
func complexityBudgetKey(t *testing.T, s *testServer, reader *client) string {
	return "rate:" + s.app.cfg.KeyPrefix + "ratelimit:" + limitComplexity + ":user:" + liveUserID(t, reader.Token)
}

// readCounts reads the unreadCount events of subscription id until one
// says at least want, or the subscription ends: the events read, and the
// end's error (nil while it goes on).
func readCounts(t *testing.T, conn *liveConn, id string, want int) (events int, end *gqlError) {
	t.Helper()
	for {
		res, msg, err := conn.event(id, 10*time.Second)
		if err != nil {
			t.Fatalf("subscription %s: after %d events, neither the count %d nor an end: %v", id, events, want, err)
		}
		if msg != nil || len(res.Errors) > 0 {
			errs := res.Errors
			if msg != nil && msg.Type == "error" {
				json.Unmarshal(msg.Payload, &errs)
			}
			if len(errs) == 0 {
				t.Fatalf("subscription %s ended with %s and no error", id, msg.Type)
			}
			return events, &errs[0]
		}
		events++
		var data struct{ UnreadCount int }
		if err := json.Unmarshal(res.Data, &data); err != nil {
			t.Fatalf("unreadCount sent %s", res.Data)
		}
		if data.UnreadCount >= want {
			return events, nil
		}
	}
}

// TestSubscriptionEventsLeaseTheBudget: the events of a viewer's
// subscriptions on an instance spend their price from a lease of their
// budget, taken from Redis SUBSCRIPTION_EVENT_LEASE events at a time and
// shared by the viewer's subscriptions of that price: K events make one
// call for the first lease (of F events, firstLease) and at most
// ceil((K-F)/lease) after it, besides one for each subscription's start. (Each event made a call of its own: a post by an
// author with 10,000 connected followers made 10,000.)
func TestSubscriptionEventsLeaseTheBudget(t *testing.T) {
	t.Parallel()
	const lease, posts = 4, 6
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		// A budget, as in production (the test servers have none), that
		// none of this comes near.
		c.ComplexityRate = ratelimit.Rate{Count: 1_000_000, Period: time.Hour}
		c.SubscriptionEventLease = lease
	})
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	calls := &budgetCalls{key: complexityBudgetKey(t, s, reader)}
	s.app.redis.AddHook(calls)
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	ids := []string{conn.subscribe(liveUnreadSub), conn.subscribe(liveUnreadSub)}
	events := 0
	for posted := 0; posted <= posts; posted++ {
		if posted > 0 {
			livePost(t, author, fmt.Sprintf("post %d", posted))
		}
		for _, id := range ids {
			n, end := readCounts(t, conn, id, posted)
			if end != nil {
				t.Fatalf("subscription %s ended after %d posts: %s", id, posted, end.Message)
			}
			events += n
		}
	}
	// The two subscriptions share one lease: its first, of firstLease's
	// size, then full ones.
	first := firstLease("user:"+liveUserID(t, reader.Token), lease)
	got, most := calls.n.Load(), int64(1+(max(events-first, 0)+lease-1)/lease+len(ids))
	t.Logf("%d events of %d subscriptions, lease %d: %d calls to Redis for the budget", events, len(ids), lease, got)
	if got > most {
		t.Errorf("%d events of %d subscriptions made %d calls to Redis for the viewer's budget, want at most %d (a first lease of %d, then ceil(%d/%d), and one for each start)",
			events, len(ids), got, most, first, events-first, lease)
	}
}

// TestUnreadCountEventAfterTheBudgetIsRefused: a budget that pays for a
// subscription's start and nine events, under leases of four, runs nine
// events, the last from a lease the budget cut to one, and refuses the
// tenth with the refusal of an event paid alone: RATE_LIMITED, its
// message and a retryAfter.
func TestUnreadCountEventAfterTheBudgetIsRefused(t *testing.T) {
	t.Parallel()
	const lease, paidEvents = 4, 2*4 + 1
	price := priceOf(t, liveUnreadSub, nil)
	// The period is long enough that nothing refills during the test.
	budget := ratelimit.Rate{Count: (1 + paidEvents) * price, Period: time.Hour}
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.ComplexityRate, c.SubscriptionEventLease = budget, lease
	})
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	// The follow spent some of the reader's budget: it starts whole.
	if err := s.app.redis.Del(context.Background(), complexityBudgetKey(t, s, reader)).Err(); err != nil {
		t.Fatal(err)
	}
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	id := conn.subscribe(liveUnreadSub)
	events := 0
	var end *gqlError
	for posted := 0; end == nil && posted <= 2*paidEvents; posted++ {
		if posted > 0 {
			livePost(t, author, fmt.Sprintf("post %d", posted))
		}
		var n int
		n, end = readCounts(t, conn, id, posted)
		events += n
	}
	if events != paidEvents {
		t.Errorf("a budget of %s paid for the start and %d events at %d; %d events ran", budget, paidEvents, price, events)
	}
	if end == nil {
		t.Fatalf("the subscription was not refused after %d events", events)
	}
	want := fmt.Sprintf("the subscription has spent its viewer's complexity budget (COMPLEXITY_RATE, %d per %s): each event costs its price, %d; subscribe again later",
		budget.Count, budget.Period, price)
	if code, _ := end.Extensions["code"].(string); code != "RATE_LIMITED" || end.Message != want {
		t.Errorf("the refusal: %s %q, want RATE_LIMITED %q", code, end.Message, want)
	}
	if after, _ := end.Extensions["retryAfter"].(float64); after <= 0 {
		t.Errorf("the refusal's retryAfter %v, want some seconds", end.Extensions["retryAfter"])
	}
}

// TestEventLeaseRefusalComesAtMostOneLeaseLate: a viewer whose budget is
// spent by something else while a lease of their subscription still holds
// events runs those events, lease-1 after the one that took it, and no
// more: the next is refused as an event paid alone would be. The
// viewer's first lease is the shorter one firstLease gives them; the
// budget is spent after the event that took the second, a full one.
func TestEventLeaseRefusalComesAtMostOneLeaseLate(t *testing.T) {
	t.Parallel()
	const lease = 4
	// A budget that refills slowly (an event's price in about an hour):
	// spent below, it must not have paid for another event by the time a
	// loaded box has run the lease's.
	budget := ratelimit.Rate{Count: 10_000, Period: 24 * time.Hour}
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.ComplexityRate, c.SubscriptionEventLease = budget, lease
	})
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	subject := "user:" + liveUserID(t, reader.Token)
	first := firstLease(subject, lease)
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	id := conn.subscribe(liveUnreadSub)
	events, end := readCounts(t, conn, id, 0) // the first count takes the first lease
	posted := 0
	post := func() {
		posted++
		livePost(t, author, fmt.Sprintf("post %d", posted))
		var n int
		n, end = readCounts(t, conn, id, posted)
		events += n
	}
	for end == nil && events <= first { // the first lease's events, then one from the second
		post()
	}
	if end != nil || events != first+1 {
		t.Fatalf("the first lease of %d and one event: %d events, end %v", first, events, end)
	}
	// Spend the rest of the reader's budget, as other operations would.
	if _, err := s.app.limiter.AllowAtMost(context.Background(), limitComplexity, budget, subject, budget.Count); err != nil {
		t.Fatal(err)
	}
	for end == nil && events <= first+2*lease {
		post()
	}
	if events != first+lease {
		t.Errorf("%d events ran, want the first lease's %d and the second's %d", events, first, lease)
	}
	if end == nil {
		t.Fatalf("the subscription was not refused after %d events", events)
	}
	if code, _ := end.Extensions["code"].(string); code != "RATE_LIMITED" {
		t.Errorf("after the lease: %s %q, want RATE_LIMITED", code, end.Message)
	}
}

// TestFirstLeasesAreStaggered: the first leases of many viewers spread
// over 1 to the lease's size, about evenly, so that their next calls to
// Redis fall on different events; a viewer's is the same every time.
func TestFirstLeasesAreStaggered(t *testing.T) {
	t.Parallel()
	const lease, viewers = 16, 16_000
	sizes := make([]int, lease+1)
	for v := range viewers {
		subject := fmt.Sprintf("user:%d", v+1)
		n := firstLease(subject, lease)
		if n < 1 || n > lease {
			t.Fatalf("%s's first lease is %d, want 1 to %d", subject, n, lease)
		}
		if again := firstLease(subject, lease); again != n {
			t.Fatalf("%s's first lease is %d, then %d", subject, n, again)
		}
		sizes[n]++
	}
	for n, got := range sizes[1:] {
		if want := viewers / lease; got < want/2 || got > want*2 {
			t.Errorf("%d of %d viewers have a first lease of %d, want about %d: %v", got, viewers, n+1, want, sizes[1:])
		}
	}
	if got := firstLease("user:1", 1); got != 1 {
		t.Errorf("a lease of one event: the first is %d", got)
	}
}

// A viewer's lease is held while any of their subscriptions of its price
// is open on the instance, and dropped with the last.
func TestEventLeaseDroppedWithTheLastSubscription(t *testing.T) {
	t.Parallel()
	leases := &eventLeases{events: 4}
	key := eventLeaseKey{subject: "user:1", price: 20}
	first, endFirst := context.WithCancel(context.Background())
	second, endSecond := context.WithCancel(context.Background())
	lease := leases.join(first, key)
	if leases.join(second, key) != lease {
		t.Fatal("two subscriptions of a viewer at one price hold two leases")
	}
	// held waits until the lease has subscriptions open, and says whether
	// it is held.
	held := func(subscriptions int) bool {
		for deadline := time.Now().Add(testenv.Scale(5 * time.Second)); ; time.Sleep(time.Millisecond) {
			leases.mu.Lock()
			open, held := lease.subscriptions, leases.held[key] == lease
			leases.mu.Unlock()
			if open == subscriptions {
				return held
			}
			if time.Now().After(deadline) {
				t.Fatalf("the lease has %d subscriptions, want %d", open, subscriptions)
			}
		}
	}
	endFirst()
	if !held(1) {
		t.Error("the lease was dropped while a subscription of it is open")
	}
	endSecond()
	if held(0) {
		t.Error("the lease is held after its last subscription ended")
	}
}

// TestUnreadCountEventsMakeNoLoaders: each event of a subscription gets
// loaders of its own, made when a field first loads: an unreadCount
// event, which loads nothing, makes none (with 10,000 sockets, making a
// set for each event and socket was a tenth of the server's CPU), and a
// feedItemAdded event, whose post and author load, makes its set.
func TestUnreadCountEventsMakeNoLoaders(t *testing.T) {
	t.Parallel()
	const posts = 3
	s := newTestServer(t, backendReal)
	reader := s.signUp(t, "reader")
	author := s.signUp(t, "author")
	liveFollow(t, reader, author)
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	id := conn.subscribe(liveUnreadSub)
	events, _ := readCounts(t, conn, id, 0)
	for posted := 1; posted <= posts; posted++ {
		livePost(t, author, fmt.Sprintf("post %d", posted))
		n, end := readCounts(t, conn, id, posted)
		if end != nil {
			t.Fatalf("the count ended after %d posts: %s", posted, end.Message)
		}
		events += n
	}
	if n := s.app.subscriptionLoaderSets.Load(); n != 0 {
		t.Errorf("%d unreadCount events made %d loader sets, want none", events, n)
	}

	added := conn.subscribe(liveAddedSub)
	livePost(t, author, "one more")
	if _, end, err := conn.event(added, testenv.Scale(10*time.Second)); err != nil || end != nil {
		t.Fatalf("feedItemAdded: %v, %v", end, err)
	}
	if n := s.app.subscriptionLoaderSets.Load(); n == 0 {
		t.Error("a feedItemAdded event, whose post loads, made no loader set: the count above proves nothing")
	}
}
