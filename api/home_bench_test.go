package api

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
	"feedservice/models"
)

// BenchmarkHomePage reads a page of 20 of the home connection, with its
// insertions (promoted posts and suggested users every HOME_INSERT_EVERY
// entries, here 5), against the same page of the plain feed, through the
// GraphQL handler in process, in the mode FEED_MODE names. It also
// reports the Redis bytes per insertion of the viewer's set (MEMORY USAGE
// of home:{u} over its members) beside the bytes the same entries would
// take as "kind:id" strings, the layout seed 000 packs away.
//
//	go test -run '^$' -bench HomePage -count 6 ./api | tee out; benchstat -col /read out
func BenchmarkHomePage(b *testing.B) {
	s := newTestServer(b, backendReal, func(c *settings.Settings) { c.HomeInsertEvery = 5 })
	b.Cleanup(s.app.cfg.TuneRuntime()) // the collector's target Serve sets
	h := s.app.handler()
	ctx := context.Background()
	signUp := func(name string) (string, string) {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		benchDo(b, h, "", `mutation($u: String!) { signUp(input: {username: $u, password: "password-1234"}) { token user { id } } }`, map[string]any{"u": name}, &out)
		return out.SignUp.Token, out.SignUp.User.ID
	}
	follow := func(token, id string) {
		benchDo(b, h, token, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": id}, nil)
	}
	post := func(token, body string) int64 {
		var out struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		benchDo(b, h, token, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": body}, &out)
		_, id, _ := models.ParseNodeID(out.CreatePost.Post.ID)
		return id
	}
	reader, readerID := signUp("reader")
	var suggested []string
	for i := range 10 {
		_, id := signUp(fmt.Sprint("suggested", i))
		suggested = append(suggested, id)
	}
	for i := range 10 {
		token, id := signUp(fmt.Sprint("followee", i))
		follow(reader, id)
		for _, sid := range suggested {
			follow(token, sid)
		}
		for j := range 6 {
			post(token, fmt.Sprintf("post %d of followee %d", j, i))
		}
	}
	promoter, _ := signUp("promoter")
	for i := range 3 {
		if err := s.app.engine.SetPromoted(ctx, post(promoter, fmt.Sprint("promoted ", i)), true); err != nil {
			b.Fatal(err)
		}
	}
	s.settle(b)
	const item = `addedAt post { id body createdAt author { id username displayName followerCount } } reposters { id }`
	pages := map[string]string{
		"feed": `{ feed(first: 20) { edges { cursor node { ` + item + ` } } pageInfo { hasNextPage endCursor } unreadCount } }`,
		"home": `{ home(first: 20) { edges { cursor node { __typename ... on FeedItem { ` + item + ` }
			... on PromotedPost { post { id body author { id username } } }
			... on SuggestedUser { followedByCount user { id username displayName followerCount viewerIsFollowing } } } }
			pageInfo { hasNextPage endCursor } unreadCount } }`,
	}
	for _, read := range []string{"feed", "home"} {
		b.Run("read="+read, func(b *testing.B) {
			var out map[string]struct{ Edges []json.RawMessage }
			benchDo(b, h, reader, pages[read], nil, &out)
			if len(out[read].Edges) != 20 {
				b.Fatalf("the page holds %d entries, want 20", len(out[read].Edges))
			}
			b.ResetTimer()
			for b.Loop() {
				benchDo(b, h, reader, pages[read], nil, nil)
			}
			if read == "home" {
				b.StopTimer()
				packed, strs := homeMemory(b, s, readerID)
				b.ReportMetric(packed, "packed-B/entry")
				b.ReportMetric(strs, "string-B/entry")
			}
		})
	}
}

// homeMemory is MEMORY USAGE per member of the viewer's insertion set,
// and of a copy whose members are spelled "kind:id" instead.
func homeMemory(b *testing.B, s *testServer, viewerGlobalID string) (packed, strs float64) {
	ctx := context.Background()
	key := s.app.engine.HomeCandidatesKey(viewerGlobalID)
	zs, err := s.app.redis.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil || len(zs) < 2 {
		b.Fatalf("the viewer's insertions: %v, %v", zs, err)
	}
	n, err := s.app.redis.MemoryUsage(ctx, key, 0).Result()
	if err != nil {
		b.Fatal(err)
	}
	copyKey := key + ":strings"
	for _, z := range zs {
		var m int64
		fmt.Sscan(fmt.Sprint(z.Member), &m)
		s.app.redis.ZAdd(ctx, copyKey, redis.Z{Member: fmt.Sprintf("suggested:%d", m&(1<<53-1)), Score: z.Score})
	}
	defer s.app.redis.Del(ctx, copyKey)
	m, err := s.app.redis.MemoryUsage(ctx, copyKey, 0).Result()
	if err != nil {
		b.Fatal(err)
	}
	return float64(n) / float64(len(zs)), float64(m) / float64(len(zs))
}
