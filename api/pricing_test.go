package api

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"

	"feedservice/api/settings"
	"feedservice/graph"
	"feedservice/resolvers"
	"feedservice/store"
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
	s := newTestServer(b, backendReal, func(c *settings.Settings) { c.MaxQueryComplexity = 1 << 30 })
	b.Cleanup(s.app.cfg.TuneRuntime())
	size := seedSize{users: 100, followsEach: 30, postsEach: 4, celebPosts: 4}
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

// A text field is priced by the most bytes it can hold: a post body (500
// code points, up to 2,000 bytes) costs 6 and a bio (300, up to 1,200) 4,
// so that a document of bodies repeated under many nodes is refused
// before it runs. Priced at 1 each, 98 aliases of body under 100 ids cost
// 9,801, within the default limit, and answered 19.7 MB.
func TestPricingTextBySize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		price int
	}{
		{`{ node(id: "x") { ... on Post { body } } }`, 1 + 6},
		{`{ node(id: "x") { ... on Post { a: body b: body } } }`, 1 + 2*6},
		{`{ node(id: "x") { ... on User { bio } } }`, 1 + 4},
		{`{ node(id: "x") { ... on User { username displayName } } }`, 1 + 1 + 1},
		{`{ nodes(ids: ["a", "b"]) { ... on Post { body } } }`, 1 + 2*6},
	} {
		if got := priceOf(t, c.query, nil); got != c.price {
			t.Errorf("%s: priced %d, want %d", c.query, got, c.price)
		}
	}

	var aliases strings.Builder
	for i := range 98 {
		fmt.Fprintf(&aliases, " b%d: body", i)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("%q", fmt.Sprintf("id%d", i))
	}
	finding := `{ nodes(ids: [` + strings.Join(ids, ",") + `]) { ... on Post {` + aliases.String() + ` } } }`
	if got := priceOf(t, finding, nil); got <= settings.DefaultMaxQueryComplexity {
		t.Errorf("98 bodies under 100 ids priced %d, within the default limit of %d", got, settings.DefaultMaxQueryComplexity)
	}
}

// nodes refuses an id it was given already (any spelling of the same node):
// the answer repeats each id given, so a repeated id would be answered
// again at no cost to its client beyond its bytes in the document.
func TestNodesRefusesRepeatedIDs(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	ann := s.signUp(t, "ann")
	bob := s.signUp(t, "bob")
	const q = `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`
	ann.mustDo(t, q, map[string]any{"ids": []string{ann.ID, bob.ID}}, nil)
	r := ann.mustFail(t, "BAD_USER_INPUT", q, map[string]any{"ids": []string{ann.ID, bob.ID, ann.ID}})
	if !strings.Contains(r.Errors[0].Message, "more than once") {
		t.Errorf("message %q does not say the id is repeated", r.Errors[0].Message)
	}
}
