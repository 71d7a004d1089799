package api

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"feedservice/api/extensions"
	"feedservice/api/settings"
	"feedservice/graph"
	"feedservice/internal/gqlclient"
	"feedservice/internal/serverproc"
	"feedservice/internal/testenv"
	"feedservice/resolvers"
	"feedservice/store/storetest"
)

// TestParsedDocumentsBytes: many distinct valid documents, each long with
// a comment the token limit does not count, leave the cache of parsed
// documents within QUERY_CACHE_MAX_BYTES (gqlgen's lru kept a thousand of
// them, whatever their length).
func TestParsedDocumentsBytes(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 10
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.QueryCacheMaxBytes = maxBytes })
	comment := "# " + strings.Repeat("x", 16<<10) + "\n"
	for i := range 40 {
		s.anon().mustDo(t, fmt.Sprintf("%squery Q%d { __typename }", comment, i), nil, nil)
	}
	if n, b := s.app.parsedDocuments.Len(); b > maxBytes || n == 0 {
		t.Errorf("the parsed documents hold %d bytes in %d entries; the cap is %d", b, n, maxBytes)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestParsedDocumentBytesEstimate: extensions.ParsedDocumentBytes is within a factor
// of parsedBytesSlack of what a parsed and validated document holds, for
// documents of every shape: wide, nested, with arguments, long lists,
// fragments, and the app's and GraphiQL's own. Not parallel: it reads the
// process's heap.
func TestParsedDocumentBytesEstimate(t *testing.T) {
	const parsedBytesSlack = 1.5
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	for name, q := range map[string]string{
		"graphiql":  limitsGraphiQLIntrospection,
		"app feed":  limitsAppFeedQuery,
		"followers": limitsAppFollowersQuery,
		"wide":      "{" + aliased(300, "__typename") + " }",
		"nested":    "{" + aliased(60, "viewer { followers(first: 1) { edges { node { id } } } }") + " }",
		"arguments": "{" + aliased(150, `user(username: "abcdefgh") { id }`) + " }",
		"list":      `query($ids: [ID!]! = [` + strings.Repeat(`"x", `, 500) + `]) { nodes(ids: $ids) { id } }`,
		"fragments": "fragment F on User {" + aliased(280, "username") + " } { viewer { ...F ...F } }",
	} {
		// Enough copies to hold some 4 MB, so that what the runtime and
		// other goroutines allocate or free meanwhile stays in the noise.
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		copies := max(20, (4<<20)/extensions.ParsedDocumentBytes(q, doc))
		docs := make([]*ast.QueryDocument, copies)
		estimate := 0
		for i := range docs {
			text := fmt.Sprintf("%s # %d", q, i)
			doc, err := parser.ParseQuery(&ast.Source{Input: text})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if errs := validator.Validate(es.Schema(), doc); len(errs) > 0 {
				t.Fatalf("%s: %v", name, errs)
			}
			docs[i], estimate = doc, estimate+extensions.ParsedDocumentBytes(text, doc)
		}
		// What they hold is what the heap loses when they are dropped: two
		// collections back to back, nothing else between them.
		with := liveHeap()
		runtime.KeepAlive(docs)
		docs = nil
		held := float64(with-liveHeap()) / float64(copies)
		ratio := float64(estimate) / float64(copies) / held
		t.Logf("%-9s text %5d B, held %7.0f B, estimated %7d B (%.2fx), %d copies", name, len(q), held, estimate/copies, ratio, copies)
		if ratio > parsedBytesSlack || ratio < 1/parsedBytesSlack {
			t.Errorf("%s: estimated %.2fx what it holds", name, ratio)
		}
	}
}

// aliased is n copies of field, each under an alias of its own (so that
// validation, which compares fields of one name pairwise, stays linear).
func aliased(n int, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	return b.String()
}

// TestRefusedDocumentsLeaveNoHeap: a thousand signed-out documents of 5.9
// KB, each refused (a fragment of 650 fields spread twice: over the
// selection and field limits), leave a server process's live heap within
// refusedHeapMax of where it was, and so do distinct valid ones of the same
// length, twice what the cache of parsed documents keeps within
// QUERY_CACHE_MAX_BYTES. Before, the refused ones were kept (validation ran
// and cached them before the field limit refused them) and the cache
// counted their text: 415 MB of live heap in the measure. The live
// heap is the server's own runtime.MemStats after a collection, read from
// its heap profile (METRICS_PPROF), so that other tests do not count.
func TestRefusedDocumentsLeaveNoHeap(t *testing.T) {
	t.Parallel()
	const refusedHeapMax = 50 << 20
	bin := buildServer(t)
	metricsAddr, err := serverproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dsn := storetest.MySQL(t)
	_, prefix := testenv.Redis(t)
	p := startServerProcess(t, bin, "MYSQL_DSN="+dsn, "REDIS_ADDR="+testenv.RedisAddr(), "KEY_PREFIX="+prefix,
		"TOKEN_SECRET=test-secret-test-secret-test-secret!", "METRICS_ADDR="+metricsAddr, "METRICS_PPROF=true",
		"MAX_OPERATIONS_PER_ADDRESS=128") // its 8 senders speak from one address
	liveHeap := func() uint64 {
		t.Helper()
		res, err := http.Get("http://" + metricsAddr + "/debug/pprof/heap?gc=1&debug=1")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no HeapAlloc in the server's heap profile (%v)", sc.Err())
		return 0
	}
	refused := func(i int) string {
		return fmt.Sprintf("fragment F on User {%s } { viewer { ...F ...F } } # %d", strings.Repeat(" username", 650), i)
	}
	valid := func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "query Q%d { viewer {%s } } #", i, aliased(280, "username"))
		return b.String() + strings.Repeat(" ", 5900-b.Len())
	}
	// validDocuments are twice what the cache keeps of them (about 90 KB
	// each as extensions.ParsedDocumentBytes counts them).
	const validDocuments = 2 * settings.DefaultQueryCacheMaxBytes / (90 << 10)
	send := func(doc func(int) string, n int, wantCode string) {
		t.Helper()
		var wg sync.WaitGroup
		work := make(chan int)
		for range 8 {
			wg.Go(func() {
				for i := range work {
					r, err := gqlclient.New(p.URL, nil).Post(context.Background(), "", doc(i), nil)
					if err != nil || r.Code() != wantCode {
						t.Errorf("document %d (%d bytes): %v %+v", i, len(doc(i)), err, r.Errors)
					}
				}
			})
		}
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
	}
	before := liveHeap()
	send(refused, 1000, "BAD_USER_INPUT")
	afterRefused := liveHeap()
	send(valid, validDocuments, "")
	afterValid := liveHeap()
	t.Logf("the server's live heap: %d MB, then %d MB after 1,000 refused documents of %d bytes, %d MB after %d valid ones of %d bytes",
		before>>20, afterRefused>>20, len(refused(999)), afterValid>>20, validDocuments, len(valid(999)))
	for what, heap := range map[string]uint64{"refused": afterRefused, "valid": afterValid} {
		if heap > before+refusedHeapMax {
			t.Errorf("after the %s documents the live heap grew %d MB, over %d MB", what, (heap-before)>>20, refusedHeapMax>>20)
		}
	}
}
