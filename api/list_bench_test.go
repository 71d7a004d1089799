package api

import (
	"encoding/json"
	"testing"
)

// benchListPageQuery is the load test's first-page document, asked of a
// list's feed instead of the home feed.
const benchListPageQuery = `query ListFeed($list: ID!, $first: Int, $after: String) {
  node(id: $list) {
    ... on List {
      feed(first: $first, after: $after) ` + benchFeedSelection + `
    }
  }
}`

// BenchmarkWarmListPage serves, side by side, warm first pages of 20 of
// the home feed (page=home, the load test's document) and of a list
// holding every followee of the reader (page=list: the same entries),
// through the server's whole handler on the fast executor, one request
// after another over warmBenchReaders readers, and reports pages/s and the
// SQL statements the requests ran per page (the engine's background work
// left out). Both pages read the cache tiers alone: the list's copy, its
// members' outboxes and the posts (see feed/timeline's ListFeed), so both
// run no SQL.
//
//	go test -run '^$' -bench WarmListPage -benchmem ./api
func BenchmarkWarmListPage(b *testing.B) {
	s, tokens := warmBenchWorld(b)
	h := markRequests(serverExecutors(s)[1].h)
	lists := make([]string, len(tokens))
	for i, tok := range tokens {
		var made struct {
			CreateList struct{ List struct{ ID string } }
		}
		benchDo(b, h, tok, `mutation { createList(name: "everyone") { list { id } } }`, nil, &made)
		lists[i] = made.CreateList.List.ID
		var following struct {
			Viewer struct {
				Following struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
		}
		benchDo(b, h, tok, `{ viewer { following(first: 10) { edges { node { id } } } } }`, nil, &following)
		for _, e := range following.Viewer.Following.Edges {
			benchDo(b, h, tok, `mutation($l: ID!, $u: ID!) { addToList(listId: $l, userId: $u) { list { id } } }`, map[string]any{"l": lists[i], "u": e.Node.ID}, nil)
		}
	}
	home, err := json.Marshal(map[string]any{"query": benchFirstPageQuery, "variables": map[string]any{"first": 20}})
	if err != nil {
		b.Fatal(err)
	}
	for _, page := range []string{"home", "list"} {
		b.Run("page="+page, func(b *testing.B) {
			bodies := make([][]byte, len(tokens))
			for i := range tokens {
				bodies[i] = home
				if page == "list" {
					if bodies[i], err = json.Marshal(map[string]any{"query": benchListPageQuery, "variables": map[string]any{"first": 20, "list": lists[i]}}); err != nil {
						b.Fatal(err)
					}
				}
				warmBenchPage(b, h, tokens[i], bodies[i]) // warm the reader's caches
			}
			s.requestQueries.Store(0)
			b.ResetTimer()
			for i := range b.N {
				warmBenchPage(b, h, tokens[i%len(tokens)], bodies[i%len(tokens)])
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(float64(s.requestQueries.Load())/float64(b.N), "sql/page")
		})
	}
}
