package difftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/graph"
	"feedservice/internal/fastexec"
)

// randomDocumentsDefault is how many random documents the test runs;
// DIFFTEST_DOCS sets another number (DIFFTEST_SEED another seed).
const randomDocumentsDefault = 3000

// TestFastExecutorMatchesGqlgen runs every document of the project (its
// tests', its fuzz corpus's, the web app's and GraphiQL's) and random
// documents on gqlgen's executor (graph.NewExecutableSchema, as gqlgen
// v0.17.98 generates it) and on the fast one (graph.NewFastExecutableSchema)
// against the same in-memory resolvers, and requires the same response:
// the same bytes of data, the same errors (each with a description of the
// FieldContext it was reported under, so that a FieldContext the fast path
// builds late must be the one gqlgen builds), and the same calls of the
// field interceptors. Errors must come in the same order too, except where
// gqlgen's own order depends on its goroutines: between elements of a list
// of objects, and between two fields it resolves concurrently.
//
// Each document runs with one set of field interceptors: none (the fast
// path observes no field), the server's kind (resolvers and mutations
// observed; some refused, some raised to non-null), or one observing every
// field (some raised to non-null, some answered by the interceptor with a
// marshaler or a value of the wrong type, each giving its children a
// context of its own); the project's documents run with all three.
func TestFastExecutorMatchesGqlgen(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	docs, found := corpus(t, schema)
	n, seed := randomDocumentsDefault, uint64(1)
	if s := os.Getenv("DIFFTEST_DOCS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DIFFTEST_DOCS=%q: %v", s, err)
		}
		n = v
	}
	if s := os.Getenv("DIFFTEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DIFFTEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if len(docs) < 50 {
		t.Fatalf("only %d documents found in the project's sources (%v): the corpus walk is broken", len(docs), found)
	}
	random, invalid := randomDocuments(schema, seed, n)
	t.Logf("documents: %d distinct from the project (operations found by place: %v), %d random (seed %d; %d invalid ones generated and dropped)",
		len(docs), found, len(random), seed, invalid)

	var runs, failures int
	for i, doc := range append(docs, random...) {
		variants := allVariants
		if i >= len(docs) {
			variants = allVariants[i%len(allVariants) : i%len(allVariants)+1]
		}
		for _, v := range variants {
			w := worlds.get(seed+uint64(i%worldCount), []uint64{0, 4}[i%2])
			runs++
			if msg := compare(t, schema, doc, v, w); msg != "" {
				failures++
				t.Errorf("%s, interceptors %s, world %d/%d: %s\nquery: %s\nvariables: %s",
					doc.source, v.name, w.seed, w.faultEvery, msg, doc.query, mustJSON(doc.variables))
				if failures >= 5 {
					t.Fatal("stopping after 5 differences")
				}
			}
		}
	}
	t.Logf("%d runs on each executor", runs)
}

// worldCount is how many worlds the documents take turns with (each with
// and without resolver faults).
const worldCount = 16

// worlds are the worlds made so far: a world is only read.
var worlds = worldCache{made: map[[2]uint64]*world{}}

type worldCache struct{ made map[[2]uint64]*world }

func (c worldCache) get(seed, faultEvery uint64) *world {
	w, ok := c.made[[2]uint64{seed, faultEvery}]
	if !ok {
		w = newWorld(seed, faultEvery)
		c.made[[2]uint64{seed, faultEvery}] = w
	}
	return w
}

// A variant is a set of field interceptors, with what the fast path is
// told they observe.
type variant struct {
	name     string
	observed func(fastexec.FieldInfo) bool
	use      func(h *handler.Server, rec *recorder)
}

var allVariants = []variant{
	{name: "none", observed: func(fastexec.FieldInfo) bool { return false }, use: func(*handler.Server, *recorder) {}},
	{name: "server's", observed: serverObserves, use: func(h *handler.Server, rec *recorder) { h.Use(serverHooks{rec}) }},
	{name: "every field", observed: nil, use: func(h *handler.Server, rec *recorder) { h.Use(everyField{rec}) }},
}

// serverObserves is what the server's field interceptor acts on (api's
// fieldHooks): the resolvers, and the mutations.
func serverObserves(f fastexec.FieldInfo) bool { return f.IsResolver || f.Object == "Mutation" }

// compare runs doc on both executors and describes how the answers
// differ ("" if they do not).
func compare(t *testing.T, schema *ast.Schema, doc document, v variant, w *world) string {
	variables := doc.variables
	if variables == nil {
		variables = (&generator{schema: schema}).variablesFor(doc, w.seed)
		// Values drawn for a @defer's if could make the operation defer,
		// which the server refuses before either executor (the corpus
		// kept the document because its own values do not): keep its own.
		parsed := validDocument(schema, doc.query)
		if op := operationOf(parsed, doc.operation); op != nil && defers(parsed, op, op.SelectionSet, variables) {
			variables = doc.variables
		}
	}
	body, err := json.Marshal(map[string]any{"query": doc.query, "operationName": doc.operation, "variables": variables})
	if err != nil {
		t.Fatal(err)
	}
	cfg := graph.Config{Resolvers: resolvers{w}}
	parsed := lru.New[*ast.QueryDocument](1) // the document, parsed and validated once for both
	stock, stockCalls := run(t, graph.NewExecutableSchema(cfg), v, w.seed, parsed, body)
	fast, fastCalls := run(t, graph.NewFastExecutableSchema(cfg, fastexec.Options{ObservedFields: v.observed}), v, w.seed, parsed, body)
	if msg := compareAnswers(stock, fast); msg != "" {
		return msg
	}
	if !slices.Equal(stockCalls, fastCalls) {
		return fmt.Sprintf("the field interceptors saw different calls:\ngqlgen: %q\nfast:   %q", stockCalls, fastCalls)
	}
	return ""
}

// run posts body to a handler on es with v's interceptors, and returns
// the answer and the interceptor calls it recorded (sorted: gqlgen makes
// them from several goroutines).
func run(t *testing.T, es graphql.ExecutableSchema, v variant, seed uint64, parsed graphql.Cache[*ast.QueryDocument], body []byte) ([]byte, []string) {
	h := handler.New(es)
	h.AddTransport(transport.POST{})
	h.SetQueryCache(parsed)
	h.SetErrorPresenter(presentWithFieldContext)
	h.SetRecoverFunc(func(_ context.Context, p any) error { return fmt.Errorf("panic: %v", p) })
	rec := &recorder{seed: seed}
	v.use(h, rec)
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp := httptest.NewRecorder()
	h.ServeHTTP(resp, req)
	if resp.Code != http.StatusOK && resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %s", resp.Code, resp.Body.Bytes())
	}
	sort.Strings(rec.calls)
	return resp.Body.Bytes(), rec.calls
}

// presentWithFieldContext is gqlgen's error presenter, adding to each
// error the FieldContext it was reported under, as extensions.fc.
func presentWithFieldContext(ctx context.Context, err error) *gqlerror.Error {
	e := graphql.DefaultErrorPresenter(ctx, err)
	ext := map[string]any{}
	for k, v := range e.Extensions {
		ext[k] = v
	}
	ext["fc"] = describe(ctx, graphql.GetFieldContext(ctx))
	e.Extensions = ext
	return e
}

// describe writes a FieldContext and its ancestors: what a field
// interceptor or an error presenter can see of them.
func describe(ctx context.Context, fc *graphql.FieldContext) string {
	var parts []string
	for ; fc != nil; fc = fc.Parent {
		var b strings.Builder
		if fc.Index != nil {
			fmt.Fprintf(&b, "[%d]", *fc.Index)
		}
		if fc.Field.Field != nil {
			fmt.Fprintf(&b, "%s.%s as %s", fc.Object, fc.Field.Name, fc.Field.Alias)
		} else if fc.Object != "" {
			b.WriteString(fc.Object)
		}
		fmt.Fprintf(&b, " method=%t resolver=%t nonNull=%t result=%T", fc.IsMethod, fc.IsResolver, fc.NonNull, fc.Result)
		if len(fc.Args) > 0 {
			fmt.Fprintf(&b, " args=%s", mustJSON(fc.Args))
		}
		parts = append(parts, b.String())
	}
	if mark, ok := ctx.Value(markKey{}).(string); ok {
		parts = append(parts, "marked by "+mark)
	}
	return strings.Join(parts, " < ")
}

// compareAnswers describes how two answers differ: their data byte for
// byte, their errors as sets, and the order of their errors where gqlgen
// fixes it.
func compareAnswers(stock, fast []byte) string {
	if bytes.Equal(stock, fast) {
		return ""
	}
	var s, f answer
	if err := json.Unmarshal(stock, &s); err != nil {
		return fmt.Sprintf("gqlgen's answer is no JSON (%v): %s", err, stock)
	}
	if err := json.Unmarshal(fast, &f); err != nil {
		return fmt.Sprintf("the fast answer is no JSON (%v): %s", err, fast)
	}
	if !bytes.Equal(s.Data, f.Data) || !bytes.Equal(s.Extensions, f.Extensions) {
		return fmt.Sprintf("the data differ:\ngqlgen: %s\nfast:   %s", stock, fast)
	}
	sortedS, sortedF := sortedRaw(s.Errors), sortedRaw(f.Errors)
	if !slices.Equal(sortedS, sortedF) {
		return fmt.Sprintf("the errors differ:\ngqlgen: %s\nfast:   %s", stock, fast)
	}
	pos := map[string][]int{} // an error's places in the fast answer
	for i, e := range f.Errors {
		pos[string(e)] = append(pos[string(e)], i)
	}
	at := make([]int, len(s.Errors)) // each gqlgen error's place in the fast answer
	for i, e := range s.Errors {
		at[i], pos[string(e)] = pos[string(e)][0], pos[string(e)][1:]
	}
	for i := range s.Errors {
		for j := i + 1; j < len(s.Errors); j++ {
			if at[i] > at[j] && !unordered(s.Errors[i], s.Errors[j]) {
				return fmt.Sprintf("the errors come in another order where gqlgen's is fixed:\ngqlgen: %s\nfast:   %s", stock, fast)
			}
		}
	}
	return ""
}

type answer struct {
	Errors     []json.RawMessage `json:"errors"`
	Data       json.RawMessage   `json:"data"`
	Extensions json.RawMessage   `json:"extensions"`
}

func sortedRaw(list []json.RawMessage) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = string(e)
	}
	sort.Strings(out)
	return out
}

// unordered says whether gqlgen may report two errors in either order:
// when their paths part at two elements of a list of objects (each in a
// goroutine of its own), or at two fields that may both be resolved
// concurrently (resolvers and methods: FieldSet.Dispatch runs them after
// the others, all but one in goroutines).
func unordered(a, b json.RawMessage) bool {
	pa, pb := chain(a), chain(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		if strings.HasPrefix(pa[i], "[") && strings.HasPrefix(pb[i], "[") {
			return true
		}
		return mayBeConcurrent(pa[i]) && mayBeConcurrent(pb[i])
	}
	return false
}

// chain is an error's FieldContext description (extensions.fc), root first.
func chain(e json.RawMessage) []string {
	var v struct {
		Extensions struct {
			FC string `json:"fc"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(e, &v); err != nil {
		return nil
	}
	parts := strings.Split(v.Extensions.FC, " < ")
	parts = slices.DeleteFunc(parts, func(p string) bool { return strings.HasPrefix(p, "marked by ") })
	slices.Reverse(parts)
	return parts
}

func mayBeConcurrent(level string) bool {
	return strings.Contains(level, " method=true") || strings.Contains(level, " resolver=true")
}

// A recorder keeps what the field interceptors saw.
type recorder struct {
	seed  uint64 // the world's: the interceptors' choices change with it
	mu    sync.Mutex
	calls []string
}

// choice is a number the interceptors decide by, for a position.
func (r *recorder) choice(path string) uint64 { return hashOf(strconv.FormatUint(r.seed, 10) + path) }

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

// serverHooks is a field interceptor like the server's: it acts on the
// fields serverObserves, refuses some of them (as the rate limits do) and
// raises some nullable ones to non-null.
type serverHooks struct{ rec *recorder }

func (serverHooks) ExtensionName() string                   { return "serverHooks" }
func (serverHooks) Validate(graphql.ExecutableSchema) error { return nil }

func (h serverHooks) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if !serverObserves(fastexec.FieldInfo{Object: fc.Object, Field: fc.Field.Name, IsMethod: fc.IsMethod, IsResolver: fc.IsResolver}) {
		return next(ctx)
	}
	path := fc.Path().String()
	h.rec.add(describe(ctx, fc))
	switch h.rec.choice(path) % 7 {
	case 0:
		return nil, errors.New("refused: " + path)
	case 1, 2:
		graphql.MarkNonNull(ctx)
	}
	return next(ctx)
}

// everyField is a field and root field interceptor on every field.
type everyField struct{ rec *recorder }

type markKey struct{}

func (everyField) ExtensionName() string                   { return "everyField" }
func (everyField) Validate(graphql.ExecutableSchema) error { return nil }

func (e everyField) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rfc := graphql.GetRootFieldContext(ctx)
	e.rec.add("root " + rfc.Object + " as " + rfc.Field.Alias)
	return next(ctx)
}

func (e everyField) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	path := fc.Path().String()
	e.rec.add(describe(ctx, fc))
	switch e.rec.choice(path) % 31 {
	case 0, 6, 7:
		graphql.MarkNonNull(ctx)
	case 1:
		return graphql.Null, nil
	case 2:
		return 42, nil // an int: of the wrong type for all but the Int fields
	case 3:
		return nil, nil
	case 4, 5:
		ctx = context.WithValue(ctx, markKey{}, path)
	}
	res, err := next(ctx)
	e.rec.add(fmt.Sprintf("%s -> %T %v", path, res, err))
	return res, err
}

func hashOf(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// operationOf is the operation of doc named name, or its first if name
// names none (as for an operation sent without a name).
func operationOf(doc *ast.QueryDocument, name string) *ast.OperationDefinition {
	if op := doc.Operations.ForName(name); op != nil {
		return op
	}
	if len(doc.Operations) > 0 {
		return doc.Operations[0]
	}
	return nil
}

// variablesFor makes up values for the variables doc's operation defines.
func (g *generator) variablesFor(doc document, seed uint64) map[string]any {
	parsed := validDocument(g.schema, doc.query)
	op := operationOf(parsed, doc.operation)
	g.rnd = newRand(seed)
	g.values = map[string]any{}
	for _, def := range op.VariableDefinitions {
		if def.DefaultValue != nil && g.chance(50) {
			continue
		}
		g.values[def.Variable] = g.make(def.Type)
	}
	return g.values
}
