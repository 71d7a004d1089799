package extensions

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"feedservice/api/settings"
	"feedservice/graph"
	"feedservice/resolvers"
)

// nestedFragments is a document of n fragments, each spreading the one
// before it twice, and a query that spreads the last: 2^n fields expanded
// in about 40 bytes and 10 tokens a fragment (issue 15's attack at n = 60).
func nestedFragments(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query { viewer { ...F%d } }\nfragment F0 on User { id }\n", n-1)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "fragment F%d on User { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

func TestMeasureOperation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc           string
		depth, fields int
		introspects   bool
	}{
		{`{ viewer { id username } }`, 2, 3, false},
		{`{ viewer { ...F ...F } } fragment F on User { id username }`, 2, 5, false},
		{`{ viewer { ... on User { id followers { edges { node { id } } } } } }`, 5, 6, false},
		{`{ a: viewer { ...F } b: viewer { ...F } } fragment F on User { ...G ...G } fragment G on User { __typename }`, 2, 6, false},
		{`{ viewer { id } ...I } fragment I on Query { __type(name: "User") { name } }`, 2, 4, true},
		{nestedFragments(10), 2, 1 + 1<<9, false},
		{nestedFragments(60), 2, 1 + 1<<59, false},
		{nestedFragments(70), 2, int(^uint(0) >> 1), false}, // saturates
		{`{ viewer { ...Unknown id } }`, 2, 2, false},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: c.doc})
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		m, err := measureOperation(context.Background(), doc.Fragments, doc.Operations[0])
		if err != nil || m.depth != c.depth || m.fields != c.fields || m.introspects != c.introspects {
			t.Errorf("%.80q: depth %d, fields %d, introspects %v, err %v; want %d, %d, %v", c.doc, m.depth, m.fields, m.introspects, err, c.depth, c.fields, c.introspects)
		}
		if tokens := documentTokens(c.doc); m.visits > tokens {
			t.Errorf("%.80q: %d visits for %d tokens", c.doc, m.visits, tokens)
		}
	}
}

func TestMeasureOperationRefusesCycles(t *testing.T) {
	t.Parallel()
	// Validation refuses these before the limits see them; the walk must
	// end on them anyway.
	for _, q := range []string{
		`{ viewer { ...A } } fragment A on User { ...A }`,
		`{ viewer { ...A } } fragment A on User { id ...B } fragment B on User { followers { edges { node { ...A } } } }`,
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := measureOperation(context.Background(), doc.Fragments, doc.Operations[0]); err == nil || !strings.Contains(err.Error(), "spreads itself") {
			t.Errorf("%s: err %v, want a cycle", q, err)
		}
	}
}

func TestMeasureOperationStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	doc, err := parser.ParseQuery(&ast.Source{Input: `{ viewer { ` + strings.Repeat("id ", 3*ctxCheckEvery) + `} }`})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, err := measureOperation(ctx, doc.Fragments, doc.Operations[0])
	if !errors.Is(err, context.Canceled) || m.visits > ctxCheckEvery {
		t.Fatalf("a walk in an ended context: err %v after %d visits; want context.Canceled within %d", err, m.visits, ctxCheckEvery)
	}
}

// documentTokens counts the lexical tokens of doc, as the parser's token
// limit does; a document that does not lex counts the tokens before the
// fault.
func documentTokens(doc string) int {
	l := lexer.New(&ast.Source{Input: doc})
	n := 0
	for {
		tok, err := l.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return n
		}
		n++
	}
}

// testDocument is the GraphQL document of testdata/name: the web app's
// and GraphiQL's, which api's tests send too, and nestedFragments(60).
func testDocument(name string) string {
	doc, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(doc)
}

// The file api's tests send as issue 15's document is nestedFragments(60).
func TestNestedFragmentsFile(t *testing.T) {
	t.Parallel()
	if *updateTestdata {
		if err := os.WriteFile(filepath.Join("testdata", "nested-fragments-60.graphql"), []byte(nestedFragments(60)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if testDocument("nested-fragments-60.graphql") != nestedFragments(60) {
		t.Error("testdata/nested-fragments-60.graphql is not nestedFragments(60); run go test -run TestNestedFragmentsFile -update-testdata")
	}
}

var updateTestdata = flag.Bool("update-testdata", false, "rewrite testdata/nested-fragments-60.graphql")

// Bounds of the walkers' work on a document, checked by walkerWork.
const (
	// walkVisitsPerToken bounds documentWalk: it visits each selection
	// written in the document at most once, and a selection takes at least
	// one token.
	walkVisitsPerToken = 1
	// complexityVisitsPerField bounds gqlgen's complexity walk on an
	// operation documentWalk let through: one visit per field expanded, and
	// a field of an interface visits each type implementing it (Node: User
	// and Post).
	complexityVisitsPerField = 2
)

// errOverBudget stops gqlgen's complexity walk once it did more work than
// the bound allows: an unbounded walk is found without waiting for it.
var errOverBudget = errors.New("over budget")

// countingSchema counts gqlgen's complexity walk's visits: it asks the
// schema for the price of every field it visits, and of each
// implementation of an interface field.
type countingSchema struct {
	graphql.ExecutableSchema
	visits, budget int
}

func (s *countingSchema) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if s.visits++; s.visits > s.budget {
		panic(errOverBudget)
	}
	return s.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
}

// walkerWork walks doc as the server does (parse under the token limit;
// per operation DocumentLimits' walk, which runs before validation; then,
// when the document is valid, gate is set and the operation is within
// settings.DefaultMaxQueryFields, gqlgen's complexity walk)
// and returns an error when a walker's work grows faster than the
// document: documentWalk visiting more than walkVisitsPerToken per token, or
// the complexity walk more than complexityVisitsPerField per token plus per
// field of the budget. Without gate the complexity walk runs on every valid
// operation, as it did before DocumentLimits counted fields.
func walkerWork(es graphql.ExecutableSchema, doc string, gate bool) error {
	tokens := documentTokens(doc)
	parsed, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: doc}, settings.DefaultMaxQueryTokens)
	if err != nil {
		return nil
	}
	// Validation sets each field's definition, which gqlgen's walk reads;
	// documentWalk needs none and must stay linear on any parsed document.
	valid := len(validator.ValidateWithRules(es.Schema(), parsed, rules.NewDefaultRules())) == 0
	for _, op := range parsed.Operations {
		m, err := measureOperation(context.Background(), parsed.Fragments, op)
		if m.visits > walkVisitsPerToken*tokens {
			return fmt.Errorf("documentWalk visited %d selections of a %d-token document", m.visits, tokens)
		}
		if !valid || err != nil || (gate && m.fields > settings.DefaultMaxQueryFields) {
			continue
		}
		budget := complexityVisitsPerField * (tokens + settings.DefaultMaxQueryFields)
		if err := complexityWalk(es, parsed, op, budget); err != nil {
			return fmt.Errorf("gqlgen's complexity walk of a %d-token document (%d fields expanded): %w", tokens, m.fields, err)
		}
	}
	return nil
}

// complexityWalk runs gqlgen's complexity walk over op, stopped once it
// visits more than budget fields.
func complexityWalk(es graphql.ExecutableSchema, doc *ast.QueryDocument, op *ast.OperationDefinition, budget int) (err error) {
	counting := &countingSchema{ExecutableSchema: es, budget: budget}
	defer func() {
		if p := recover(); p != nil {
			if p != errOverBudget {
				panic(p)
			}
			err = fmt.Errorf("visited more than %d fields", budget)
		}
	}()
	complexity.Calculate(context.Background(), counting, op, nil)
	return nil
}

// walkerSeeds are documents at the edges of the walkers: fragments spread
// many times, nested, in cycles or unknown; inline fragments; interfaces;
// introspection; the app's and GraphiQL's real documents.
var walkerSeeds = []string{
	`{ viewer { id username } }`,
	`{ viewer { ...F ...F } } fragment F on User { id username }`,
	`{ node(id: "x") { id ... on User { followers { edges { node { id } } } } ... on Post { author { id } } } }`,
	`{ nodes(ids: ["a", "b"]) { ...N } } fragment N on Node { id ... on User { username } }`,
	`{ viewer { ...A } } fragment A on User { ...A }`,
	`{ viewer { ...A } } fragment A on User { id ...B } fragment B on User { ...A }`,
	`{ viewer { ...Unknown } }`,
	`query A { viewer { id } } query B { feed(first: 0) { unreadCount } }`,
	`{ __schema { types { name fields { name type { ofType { name } } } } } }`,
	nestedFragments(3),
	nestedFragments(9),
	nestedFragments(60),
	testDocument("app-feed.graphql"),
	testDocument("graphiql-introspection.graphql"),
}

// FuzzDocumentWalkers feeds GraphQL documents to the walkers every request
// meets before it runs and fails when their work grows faster than the
// document (walkerWork): a walker that re-walks a fragment at each spread,
// as gqlgen's complexity walk does unguarded, fails on the seed of sixty
// nested fragments (TestWalkerWorkCatchesGqlgensWalk).
func FuzzDocumentWalkers(f *testing.F) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	for _, doc := range walkerSeeds {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if err := walkerWork(es, doc, true); err != nil {
			t.Fatalf("%v\ndocument: %.500q", err, doc)
		}
	})
}

// TestWalkerWorkCatchesGqlgensWalk: the fuzz target's measure flags
// gqlgen's complexity walk when DocumentLimits does not run before it, on
// the nested fragments of the seeds, and passes the same documents when it
// does.
func TestWalkerWorkCatchesGqlgensWalk(t *testing.T) {
	t.Parallel()
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	for _, n := range []int{14, 60} {
		doc := nestedFragments(n)
		if err := walkerWork(es, doc, false); err == nil {
			t.Errorf("%d nested fragments, gqlgen's walk alone: not flagged", n)
		} else {
			t.Logf("%d nested fragments, gqlgen's walk alone: %v", n, err)
		}
		if err := walkerWork(es, doc, true); err != nil {
			t.Errorf("%d nested fragments, DocumentLimits first: %v", n, err)
		}
	}
}

// BenchmarkValidation validates documents of the shapes whose validation
// grows with the square of their selections, at the selection limit
// (settings.DefaultMaxQuerySelections) and, for the widest, at the 1,996 fields
// a document within the token limit can hold, which DocumentLimits now
// refuses before validation.
//
//	go test -run '^$' -bench Validation -count 6 ./api | tee out; benchstat out
func BenchmarkValidation(b *testing.B) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	n := settings.DefaultMaxQuerySelections
	var spreads, fragments strings.Builder
	for i := range n / 2 {
		fmt.Fprintf(&spreads, " ...F%d", i)
		fmt.Fprintf(&fragments, " fragment F%d on Query { __typename }", i)
	}
	for _, shape := range []struct{ name, doc string }{
		{"wide/selections=1996", "{" + strings.Repeat(" __typename", 1996) + " }"},
		{fmt.Sprintf("wide/selections=%d", n), "{" + strings.Repeat(" __typename", n) + " }"},
		{fmt.Sprintf("nested/selections=%d", n), "{" + strings.Repeat(" viewer { id }", n/2) + " }"},
		{fmt.Sprintf("fragments/selections=%d", n), "{" + spreads.String() + " }" + fragments.String()},
		{"graphiql", testDocument("graphiql-introspection.graphql")},
		{"app-feed", testDocument("app-feed.graphql")},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: shape.doc})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("shape="+shape.name, func(b *testing.B) {
			for b.Loop() {
				if errs := validator.ValidateWithRules(es.Schema(), doc, rules.NewDefaultRules()); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
