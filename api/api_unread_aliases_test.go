package api

// A black-box test of the unread count's price and its memo: aliases of the
// feed cannot multiply the count's work.

import (
	"fmt"
	"strings"
	"testing"

	"feedservice/api/settings"
	"feedservice/resolvers"
)

// TestUnreadCountAliases: aliases of feed(first: 0) { unreadCount } each
// cost a page of one entry plus the count's price, and however many a
// response holds, the count is computed once. unreadCountCapped is priced
// and counted as the count it reads.
func TestUnreadCountAliases(t *testing.T) {
	t.Parallel()
	const one = `feed(first: 0) { unreadCount }`
	// Up to the token limit in aliases: the selection limit, which refuses
	// as many at its default, must not refuse them first.
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQuerySelections = settings.DefaultMaxQueryTokens })
	reader, author := s.signUp(t, "reader"), s.signUp(t, "author")
	reader.mustDo(t, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": author.ID}, nil)
	const unread = 5
	for i := range unread {
		author.mustDo(t, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": fmt.Sprint("post ", i)}, nil)
	}

	t.Run("priced", func(t *testing.T) {
		// A second instance whose limit is one alias: 1 + 1 entry x the count.
		shared := s.app.cfg
		priced := newTestServer(t, backendReal, func(c *settings.Settings) {
			*c = shared
			c.MaxQueryComplexity = 1 + resolvers.UnreadCountCost
		})
		reader := &client{s: priced, Token: reader.Token}
		reader.mustDo(t, `{ `+one+` }`, nil, nil)
		reader.mustDo(t, `{ feed(first: 0) { unreadCountCapped } }`, nil, nil)
		for _, q := range []string{
			`{ a: ` + one + ` b: ` + one + ` }`,
			`{ feed(first: 0) { unreadCountCapped pageInfo { hasNextPage } } }`,
			`{ feed(first: 0) { unreadCount pageInfo { hasNextPage } } }`,
			`{ feed(first: -1) { unreadCount pageInfo { hasNextPage } } }`,
		} {
			r := reader.mustFail(t, "BAD_USER_INPUT", q, nil)
			if !strings.Contains(r.Errors[0].Message, "complexity") {
				t.Errorf("%s: message %q does not name the complexity limit", q, r.Errors[0].Message)
			}
		}
	})

	t.Run("counted once per response", func(t *testing.T) {
		// Issue 15's 180 aliases: 1,800 tokens, near the token limit.
		const aliases = 180
		var q strings.Builder
		q.WriteString("{ ")
		for i := range aliases {
			fmt.Fprintf(&q, "a%d: %s ", i, one)
		}
		q.WriteString("}")
		before := unreadCounts(t, s)
		var out map[string]struct{ UnreadCount int }
		reader.mustDo(t, q.String(), nil, &out)
		if len(out) != aliases {
			t.Fatalf("%d answers for %d aliases", len(out), aliases)
		}
		for alias, feed := range out {
			if feed.UnreadCount != unread {
				t.Fatalf("%s: unreadCount %d, want %d", alias, feed.UnreadCount, unread)
			}
		}
		if counted := unreadCounts(t, s) - before; counted != 1 {
			t.Fatalf("%d aliases of unreadCount computed the count %v times, want once", aliases, counted)
		}
	})

	t.Run("capped from the same count", func(t *testing.T) {
		before := unreadCounts(t, s)
		reader.mustDo(t, `{ feed(first: 0) { unreadCount unreadCountCapped } home(first: 0) { unreadCount unreadCountCapped } }`, nil, nil)
		if counted := unreadCounts(t, s) - before; counted != 1 {
			t.Fatalf("unreadCount and unreadCountCapped of feed and home computed the count %v times, want once", counted)
		}
	})
}

// unreadCounts reads the server's count of unread counts computed.
func unreadCounts(t *testing.T, s *testServer) float64 {
	t.Helper()
	families, err := s.app.engine.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "feed_unread_counts_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no feed_unread_counts_total metric")
	return 0
}
