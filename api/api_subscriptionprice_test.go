package api

// Black-box tests that a subscription pays for what it runs: its price is
// capped lower than a query's, and each of its events spends that price
// again from the viewer's complexity budget.

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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
