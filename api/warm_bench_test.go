package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/graph"
	"feedservice/internal/fastexec"
	"feedservice/models"
	"feedservice/resolvers"
)

// benchFeedSelection is what the load test (bench/client.go, feedQuery)
// asks of a feed connection.
const benchFeedSelection = `{
    edges {
      cursor
      node {
        addedAt
        post { id body createdAt repostCount author { id username displayName followerCount postCount } }
        reposters { id username }
      }
    }
    pageInfo { hasNextPage endCursor }
  }`

// benchFirstPageQuery is the document the load test sends for a first
// page.
const benchFirstPageQuery = `query Feed($first: Int, $after: String) {
  feed(first: $first, after: $after) ` + benchFeedSelection + `
}`

// warmBenchReaders is how many readers BenchmarkWarmFirstPage spreads its
// requests over, as the load test spreads them over its active readers.
const warmBenchReaders = 8

// BenchmarkWarmFirstPage serves warm first pages of 20 through the whole
// HTTP handler of a server (every middleware, the executor, the resolvers
// and loaders, the engine on real MariaDB and Redis) in process, from 8
// concurrent clients (b.SetParallelism over GOMAXPROCS), each request
// for one of warmBenchReaders readers: doc=bench is the load test's
// first-page document, doc=rich adds counts, viewerIsFollowing and
// unreadCount (warmPageQuery). Each runs on both executors, exec=stock
// (gqlgen's) and exec=fast (graph.NewFastExecutableSchema), which must
// answer the same bytes. It reports pages/s; a warm page runs no SQL
// (TestWarmPageRunsNoSQL), so this is the cost above the Redis round trips.
//
//	go test -run '^$' -bench WarmFirstPage -benchmem ./api
func BenchmarkWarmFirstPage(b *testing.B) {
	s, tokens := warmBenchWorld(b)
	executors := serverExecutors(s)
	for _, doc := range []struct{ name, query string }{{"bench", benchFirstPageQuery}, {"rich", warmPageQuery}} {
		body, err := json.Marshal(map[string]any{"query": doc.query, "operationName": nil, "variables": map[string]any{"first": 20}})
		if err != nil {
			b.Fatal(err)
		}
		for _, tok := range tokens { // warm every reader's caches
			warmBenchPage(b, executors[0].h, tok, body)
		}
		sameAnswers(b, executors, tokens[0], body)
		b.Run("doc="+doc.name, func(b *testing.B) { benchExecutors(b, executors, tokens, body) })
	}
}

// An executor is a handler of one executor, named for the sub-benchmark.
type executor struct {
	name string
	h    http.Handler
}

// serverExecutors are the server's whole handler on gqlgen's executor and
// on the fast one.
func serverExecutors(s *testServer) []executor {
	s.app.gqlgenExecutor = true
	stock := s.app.handler()
	s.app.gqlgenExecutor = false
	return []executor{{"stock", stock}, {"fast", s.app.handler()}}
}

// sameAnswers fails b unless every executor answers body with the same bytes.
func sameAnswers(b *testing.B, executors []executor, token string, body []byte) {
	var first []byte
	for _, e := range executors {
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if first == nil {
			first = rec.Body.Bytes()
		} else if !bytes.Equal(rec.Body.Bytes(), first) {
			b.Fatalf("exec=%s answers otherwise than exec=%s:\n%s\n%s", e.name, executors[0].name, rec.Body.Bytes(), first)
		}
	}
}

// benchExecutors runs benchPages on each executor, as exec=name.
func benchExecutors(b *testing.B, executors []executor, tokens []string, body []byte) {
	for _, e := range executors {
		b.Run("exec="+e.name, func(b *testing.B) { benchPages(b, e.h, tokens, body) })
	}
}

// benchPages posts b.N page requests (body) to h from 8 concurrent clients
// (b.SetParallelism over GOMAXPROCS), each for the next of tokens' readers,
// and reports pages/s and the process's CPU time per page.
func benchPages(b *testing.B, h http.Handler, tokens []string, body []byte) {
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
	b.Cleanup(s.app.cfg.TuneRuntime()) // the collector's target Serve sets
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

// BenchmarkGraphQLCeiling serves the load test's first page (doc=bench)
// from 8 clients with resolvers that answer from memory: the page's
// connection and its posts' authors, recorded from the real resolvers on
// the first request, are handed back on every request after it. No Redis,
// no engine, no loader. handler=server is the server's whole handler, as
// in BenchmarkWarmFirstPage (its middleware, gqlgen's parse cache,
// validation, complexity and execution, the JSON); handler=bare is gqlgen's
// handler with the POST transport and a parse cache alone. Each runs on
// both executors, exec=stock (gqlgen's) and exec=fast, which must answer
// the same bytes. Run beside BenchmarkWarmFirstPage, its pages/s bound
// what any work below the resolvers could give this document on this box.
//
//	go test -run '^$' -bench 'WarmFirstPage/doc=bench|GraphQLCeiling' -benchmem ./api
func BenchmarkGraphQLCeiling(b *testing.B) {
	s, tokens := warmBenchWorld(b)
	replay := &replayResolvers{ResolverRoot: s.app.resolvers}
	s.app.resolvers = replay
	body, err := json.Marshal(map[string]any{"query": benchFirstPageQuery, "operationName": nil, "variables": map[string]any{"first": 20}})
	if err != nil {
		b.Fatal(err)
	}
	server := serverExecutors(s)
	warmBenchPage(b, server[0].h, tokens[0], body) // records
	cfg := graph.Config{Resolvers: replay, Complexity: resolvers.Complexity()}
	bare := func(es graphql.ExecutableSchema) http.Handler {
		h := handler.New(es)
		h.AddTransport(transport.POST{})
		h.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
		return h
	}
	observeNothing := func(fastexec.FieldInfo) bool { return false } // the bare handler has no field interceptor
	for _, stack := range []struct {
		name      string
		executors []executor
	}{
		{"server", server},
		{"bare", []executor{{"stock", bare(graph.NewExecutableSchema(cfg))}, {"fast", bare(graph.NewFastExecutableSchema(cfg, fastexec.Options{ObservedFields: observeNothing}))}}},
	} {
		sameAnswers(b, stack.executors, tokens[0], body)
		b.Run("handler="+stack.name, func(b *testing.B) { benchExecutors(b, stack.executors, tokens, body) })
	}
}

// replayResolvers answer Query.feed and Post.author from what the real
// resolvers answered the first time (one feed page for every viewer, each
// post's author), and every other field as the real ones do.
type replayResolvers struct {
	graph.ResolverRoot
	page    atomic.Pointer[models.FeedConnection]
	authors sync.Map // post id -> *models.User
}

func (r *replayResolvers) Query() graph.QueryResolver { return replayQuery{r.ResolverRoot.Query(), r} }
func (r *replayResolvers) Post() graph.PostResolver   { return replayPost{r.ResolverRoot.Post(), r} }

type replayQuery struct {
	graph.QueryResolver
	r *replayResolvers
}

func (q replayQuery) Feed(ctx context.Context, first *int, after *string, last *int, before *string) (*models.FeedConnection, error) {
	if page := q.r.page.Load(); page != nil {
		return page, nil
	}
	page, err := q.QueryResolver.Feed(ctx, first, after, last, before)
	if err == nil {
		q.r.page.Store(page)
	}
	return page, err
}

type replayPost struct {
	graph.PostResolver
	r *replayResolvers
}

func (p replayPost) Author(ctx context.Context, obj *models.Post) (*models.User, error) {
	if u, ok := p.r.authors.Load(obj.ID); ok {
		return u.(*models.User), nil
	}
	u, err := p.PostResolver.Author(ctx, obj)
	if err == nil {
		p.r.authors.Store(obj.ID, u)
	}
	return u, err
}
