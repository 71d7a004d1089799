package api

import (
	"context"
	"io"
	"testing"
	"time"

	"feedservice/store"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"

	"feedservice/graph"
	"feedservice/resolvers"
)

// priceOf is what the complexity limit charges for query with vars.
func priceOf(tb testing.TB, query string, vars map[string]any) int {
	tb.Helper()
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	doc, errs := gqlparser.LoadQuery(es.Schema(), query)
	if len(errs) > 0 {
		tb.Fatalf("%s: %v", query, errs)
	}
	return complexity.Calculate(context.Background(), es, doc.Operations[0], vars)
}

// The shapes whose prices are measured against their cost: the app's feed
// page (the reference the default MAX_QUERY_COMPLEXITY was set by), a page
// of followers, and pages nested in the entries of another page.
const (
	pricingUser           = `fragment UserSummary on User { id username displayName }`
	pricingFollowers100   = `{ user(username: "celebrity") { followers(first: 100) { edges { cursor node { ...UserSummary } } } } } ` + pricingUser
	pricingNested100x1    = `{ user(username: "celebrity") { followers(first: 100) { edges { node { username followers(first: 1) { edges { node { ...UserSummary } } } } } } } } ` + pricingUser
	pricingNested100x30   = `{ user(username: "celebrity") { followers(first: 100) { edges { node { username followers(first: 30) { edges { node { ...UserSummary } } } } } } } } ` + pricingUser
	pricingTimelines100x4 = `{ user(username: "celebrity") { followers(first: 100) { edges { node { username timeline(first: 4) { edges { node { id body createdAt } } } } } } } }`
	pricingTimelines100x1 = `{ user(username: "celebrity") { followers(first: 100) { edges { node { username timeline(first: 1) { edges { node { id body createdAt } } } } } } } }`
	pricingFeed100        = `{ feed(first: 100) { edges { ...FeedEdgeFields } pageInfo { hasNextPage endCursor } } } ` + pricingUser + `
fragment PostFields on Post { id body createdAt repostCount author { ...UserSummary } repostOf { id body createdAt repostCount author { ...UserSummary } } }
fragment FeedEdgeFields on FeedEdge { cursor node { addedAt post { ...PostFields } reposters { ...UserSummary } } }`
)

// BenchmarkPricing runs each priced shape on MariaDB and Redis, warm,
// through the handler in process, and reports its price and its time per
// unit of price: a price near the cost keeps ns/unit near the feed page's.
// The graph is the demo loader's at 100 users following 30 each (about 30
// followers each, the celebrity 101) with 4 posts each.
//
//	go test -run '^$' -bench Pricing -count 6 ./api | tee out; benchstat -col /shape out
func BenchmarkPricing(b *testing.B) {
	s := newTestServer(b, backendReal, func(c *config) { c.MaxQueryComplexity = 1 << 30 })
	b.Cleanup(s.app.cfg.tuneRuntime())
	size := seedSize{Users: 100, FollowsEach: 30, PostsEach: 4, CelebPosts: 4}
	if err := seed(context.Background(), s.app.engine, s.app.store, store.EventsPending, size, io.Discard); err != nil {
		b.Fatal(err)
	}
	s.settle(b)
	h := s.app.handler()
	var login struct{ LogIn struct{ Token string } }
	benchDo(b, h, "", `mutation { logIn(input: {username: "alice", password: "`+SeedPassword+`"}) { token } }`, nil, &login)
	for _, shape := range []struct{ name, query string }{
		{"feed100", pricingFeed100},
		{"followers100", pricingFollowers100},
		{"nested100x1", pricingNested100x1},
		{"nested100x30", pricingNested100x30},
		{"timelines100x1", pricingTimelines100x1},
		{"timelines100x4", pricingTimelines100x4},
	} {
		price := priceOf(b, shape.query, nil)
		b.Run("shape="+shape.name, func(b *testing.B) {
			benchDo(b, h, login.LogIn.Token, shape.query, nil, nil) // warm
			start := time.Now()
			for b.Loop() {
				benchDo(b, h, login.LogIn.Token, shape.query, nil, nil)
			}
			b.ReportMetric(float64(price), "price")
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(price), "ns/unit")
		})
	}
}
