package api

import (
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkFeedPageRich reads a warm rich feed page of 20 entries (authors
// with counts, three reposters each, viewerIsFollowing and followsViewer)
// through the server's handler in process: what the loaders' waits and
// the local tier change.
//
//	go test -run '^$' -bench FeedPageRich -benchmem ./api
func BenchmarkFeedPageRich(b *testing.B) {
	s := newTestServer(b, backendReal)
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
		benchDo(b, h, "", `mutation($u: String!) { signUp(input: {username: $u, password: "password-1234"}) { token user { id } } }`, map[string]any{"u": name}, &out)
		tokens[name], ids[name] = out.SignUp.Token, out.SignUp.User.ID
	}
	for _, name := range names[1:] {
		benchDo(b, h, tokens["reader"], `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": ids[name]}, nil)
	}
	for i := range 20 {
		var out struct{ CreatePost struct{ Post struct{ ID string } } }
		benchDo(b, h, tokens["author"], `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": "post " + strconv.Itoa(i)}, &out)
		for _, fan := range names[2:] {
			benchDo(b, h, tokens[fan], `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": out.CreatePost.Post.ID}, nil)
		}
	}
	s.settle(b)
	vars := map[string]any{"first": 20}
	var out struct {
		Feed struct{ Edges []json.RawMessage }
	}
	benchDo(b, h, tokens["reader"], feedRichQuery, vars, &out)
	if len(out.Feed.Edges) != 20 {
		b.Fatalf("the page holds %d entries, want 20", len(out.Feed.Edges))
	}
	b.ResetTimer()
	for b.Loop() {
		benchDo(b, h, tokens["reader"], feedRichQuery, vars, nil)
	}
}
