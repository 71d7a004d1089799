package api

// Black-box tests that a subscription pays for what it runs: its price is
// capped lower than a query's, and each of its events spends that price
// again from the viewer's complexity budget.

import (
	"fmt"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
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
