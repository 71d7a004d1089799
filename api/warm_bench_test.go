package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchFirstPageQuery is the document the load test (bench/client.go,
// feedQuery) sends for a first page.
const benchFirstPageQuery = `query Feed($first: Int, $after: String) {
  feed(first: $first, after: $after) {
    edges {
      cursor
      node {
        addedAt
        post { id body createdAt repostCount author { id username displayName followerCount postCount } }
        reposters { id username }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// warmBenchReaders is how many readers BenchmarkWarmFirstPage spreads its
// requests over, as the load test spreads them over its active readers.
const warmBenchReaders = 8

// BenchmarkWarmFirstPage serves warm first pages of 20 through the whole
// HTTP handler of a server (every middleware, gqlgen, the resolvers and
// loaders, the engine on real MariaDB and Redis) in process, from 8
// concurrent clients (b.SetParallelism over GOMAXPROCS), each request
// for one of warmBenchReaders readers: doc=bench is the load test's
// first-page document, doc=rich adds counts, viewerIsFollowing and
// unreadCount (warmPageQuery). It reports pages/s; a warm page runs no SQL
// (TestWarmPageRunsNoSQL), so this is the cost above the Redis round trips.
//
//	go test -run '^$' -bench WarmFirstPage -benchmem ./api
func BenchmarkWarmFirstPage(b *testing.B) {
	s, tokens := warmBenchWorld(b)
	h := s.app.handler()
	for _, doc := range []struct{ name, query string }{{"bench", benchFirstPageQuery}, {"rich", warmPageQuery}} {
		body, err := json.Marshal(map[string]any{"query": doc.query, "operationName": nil, "variables": map[string]any{"first": 20}})
		if err != nil {
			b.Fatal(err)
		}
		for _, tok := range tokens { // warm every reader's caches
			warmBenchPage(b, h, tok, body)
		}
		b.Run("doc="+doc.name, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start, cpuStart := time.Now(), processCPU(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					warmBenchPage(b, h, tokens[int(next.Add(1))%len(tokens)], body)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pages/s")
			b.ReportMetric(float64((processCPU(b)-cpuStart).Microseconds())/float64(b.N), "cpu-µs/page")
		})
	}
}

// processCPU is the CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// warmBenchPage posts one feed page request and checks that it answered 20
// entries and no error.
func warmBenchPage(b *testing.B, h http.Handler, token string, body []byte) {
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) || bytes.Count(rec.Body.Bytes(), []byte(`"cursor"`)) != 20 {
		b.Errorf("status %d: %.300s", rec.Code, rec.Body.Bytes())
	}
}

// warmBenchWorld is warmBenchReaders readers, each following an author of
// 20 posts and three fans who reposted each; it returns the server and the
// readers' tokens.
func warmBenchWorld(b *testing.B) (*testServer, []string) {
	s := newTestServer(b, backendReal)
	b.Cleanup(s.app.cfg.tuneRuntime()) // the collector's target Serve sets
	h := s.app.handler()
	signUp := func(name string) (token, id string) {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		benchDo(b, h, "", `mutation($u: String!) { signUp(input: {username: $u, password: "password-1234"}) { token user { id } } }`, map[string]any{"u": name}, &out)
		return out.SignUp.Token, out.SignUp.User.ID
	}
	authorToken, authorID := signUp("author")
	var fanTokens, followed []string
	followed = append(followed, authorID)
	for i := range 3 {
		tok, id := signUp(fmt.Sprintf("fan%d", i))
		fanTokens = append(fanTokens, tok)
		followed = append(followed, id)
	}
	var readers []string
	for i := range warmBenchReaders {
		tok, _ := signUp(fmt.Sprintf("reader%d", i))
		for _, id := range followed {
			benchDo(b, h, tok, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": id}, nil)
		}
		readers = append(readers, tok)
	}
	for i := range 20 {
		var out struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		benchDo(b, h, authorToken, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": "post " + strconv.Itoa(i)}, &out)
		for _, tok := range fanTokens {
			benchDo(b, h, tok, `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": out.CreatePost.Post.ID}, nil)
		}
	}
	s.settle(b)
	return s, readers
}
