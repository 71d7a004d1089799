package api

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"feedservice/dataloader"
	"feedservice/graph"
	"feedservice/internal/viewer"
	"feedservice/resolvers"
)

// BenchmarkFeedPageRich reads a warm rich feed page of 20 entries (authors
// with counts, three reposters each, viewerIsFollowing and followsViewer)
// through the server's handler in process: what the loaders' waits and
// the local tier change.
//
//	go test -run '^$' -bench FeedPageRich -benchmem ./api
func BenchmarkFeedPageRich(b *testing.B) {
	s, token := richFeedWorld(b)
	h := s.app.handler()
	vars := map[string]any{"first": 20}
	b.ResetTimer()
	for b.Loop() {
		benchDo(b, h, token, feedRichQuery, vars, nil)
	}
}

// A warm page whose users and posts are all in the local tier does not
// wait for a loader to batch: with loaders that would wait ten seconds
// for keys, it answers at once.
func TestWarmFeedPageDoesNotWaitForLoaders(t *testing.T) {
	t.Parallel()
	s, token := richFeedWorld(t)
	const wait = 10 * time.Second
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Engine: s.app.engine}}))
	srv.AddTransport(transport.POST{})
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		return next(dataloader.With(ctx, dataloader.New(s.app.engine, viewer.ID(ctx), wait)))
	})
	h := s.app.authenticate(srv)
	start := time.Now()
	var out struct {
		Feed struct {
			Edges []struct {
				Node struct {
					Post      struct{ Author struct{ PostCount int } }
					Reposters []struct{ ViewerIsFollowing bool }
				}
			}
		}
	}
	benchDo(t, h, token, feedRichQuery, map[string]any{"first": 20}, &out)
	if took := time.Since(start); took >= wait {
		t.Fatalf("a warm rich page took %s: it waited for a loader", took)
	}
	if n := len(out.Feed.Edges); n != 20 {
		t.Fatalf("the page holds %d entries, want 20", n)
	}
	for _, e := range out.Feed.Edges {
		if e.Node.Post.Author.PostCount != 20 || len(e.Node.Reposters) != 3 || !e.Node.Reposters[0].ViewerIsFollowing {
			t.Fatalf("an entry reads %+v", e.Node)
		}
	}
}

// richFeedWorld is a reader following an author of 20 posts and three fans
// who reposted each, with the reader's rich first page read once (warm);
// it returns the server and the reader's token.
func richFeedWorld(tb testing.TB) (*testServer, string) {
	s := newTestServer(tb, backendReal)
	h := s.app.handler()
	tokens := map[string]string{}
	ids := map[string]string{}
	names := []string{"reader", "author", "fan0", "fan1", "fan2"}
	for _, name := range names {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		benchDo(tb, h, "", `mutation($u: String!) { signUp(input: {username: $u, password: "password-1234"}) { token user { id } } }`, map[string]any{"u": name}, &out)
		tokens[name], ids[name] = out.SignUp.Token, out.SignUp.User.ID
	}
	for _, name := range names[1:] {
		benchDo(tb, h, tokens["reader"], `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": ids[name]}, nil)
	}
	for i := range 20 {
		var out struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		benchDo(tb, h, tokens["author"], `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": "post " + strconv.Itoa(i)}, &out)
		for _, fan := range names[2:] {
			benchDo(tb, h, tokens[fan], `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": out.CreatePost.Post.ID}, nil)
		}
	}
	s.settle(tb)
	var out struct {
		Feed struct{ Edges []json.RawMessage }
	}
	benchDo(tb, h, tokens["reader"], feedRichQuery, map[string]any{"first": 20}, &out)
	if len(out.Feed.Edges) != 20 {
		tb.Fatalf("the page holds %d entries, want 20", len(out.Feed.Edges))
	}
	return s, tokens["reader"]
}
