package fastexec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

var testSchema = gqlparser.MustLoadSchema(&ast.Source{Input: `
type Query { users: [User!]! search: [Result!]! }
interface Named { name: String! }
interface Aged { name: String! }
type User implements Named & Aged { name: String! friends: [User!]! posts: [Post!]! }
type Post { title: String! author: User! }
union Result = User | Post
`})

// concurrent: Post.author is a resolver; Named.name is one on no member.
func testConcurrency(typ, field string) bool { return typ == "Post" && field == "author" }

func TestMayBlock(t *testing.T) {
	for _, c := range []struct {
		query string
		want  bool
	}{
		{`{ users { name friends { name } } }`, false},
		{`{ users { posts { title } } }`, false},
		{`{ users { posts { title author { name } } } }`, true},
		{`{ users { ...F } } fragment F on User { posts { ...G } } fragment G on Post { author { name } }`, true},
		{`{ users { ...F ...F } } fragment F on User { name }`, false},
		{`{ search { ... on User { name } } }`, false},
		{`{ search { ... on Post { author @skip(if: true) { name } } } }`, true}, // the variables are not read
		{`{ search { ... on Named { name } } }`, false},
	} {
		doc := gqlparser.MustLoadQuery(testSchema, c.query)
		sel := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
		if got := MayBlock(doc, sel, testConcurrency); got != c.want {
			t.Errorf("MayBlock(%s) = %t, want %t", c.query, got, c.want)
		}
	}
}

func TestSupported(t *testing.T) {
	for _, c := range []struct {
		query string
		want  bool
	}{
		{`{ users { name } }`, true},
		{`mutation { x }`, true},
		{`subscription { x }`, false},
		{`{ users { ... @defer { name } } }`, false},
		{`{ users { ... @ # a comment
		  defer { name } } }`, false},
		{`{ users { name } } # defer`, false}, // the word alone is enough
	} {
		doc, err := gqlparser.LoadQuery(gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { users: [User!]! } type Mutation { x: Int } type Subscription { x: Int } type User { name: String! }`}), c.query)
		if err != nil {
			doc = &ast.QueryDocument{Operations: ast.OperationList{{Operation: ast.Subscription}}}
			if c.want {
				t.Fatalf("%s: %v", c.query, err)
			}
		}
		oc := &graphql.OperationContext{RawQuery: c.query, Operation: doc.Operations[0]}
		if got := Supported(oc); got != c.want {
			t.Errorf("Supported(%s) = %t, want %t", c.query, got, c.want)
		}
	}
	if Supported(&graphql.OperationContext{RawQuery: "{ x }"}) {
		t.Error("Supported without an operation")
	}
}

// The cache answers what graphql.CollectFields answers, for each of the
// selection sets it was asked for, and then without asking again.
func TestFieldCache(t *testing.T) {
	doc := gqlparser.MustLoadQuery(testSchema, `{ users { name n: name posts { title } } search { ... on User { name } ... on Post { title } } }`)
	oc := &graphql.OperationContext{Doc: doc, Variables: map[string]any{}}
	users := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
	search := doc.Operations[0].SelectionSet[1].(*ast.Field).SelectionSet
	var c FieldCache
	for range 3 {
		for _, sel := range []ast.SelectionSet{users, search} {
			got, dups := c.Collect(oc, sel, []string{"User", "Named", "Result"})
			want := graphql.CollectFields(oc, sel, []string{"User", "Named", "Result"})
			if !slices.EqualFunc(got, want, func(a, b graphql.CollectedField) bool { return a.Field == b.Field && a.Alias == b.Alias }) {
				t.Fatalf("Collect = %v, CollectFields %v", got, want)
			}
			if dups != nil {
				t.Fatalf("Collect says %v have an earlier field's alias", dups)
			}
		}
	}
	first, _ := c.Collect(oc, users, []string{"User", "Named", "Result"})
	if again, _ := c.Collect(oc, users, []string{"User", "Named", "Result"}); &again[0] != &first[0] {
		t.Fatal("the second Collect of a selection set collected again")
	}
}

// Fragments on two interfaces of one type select the same field twice
// under one alias: CollectFields keeps both (gqlgen resolves both and
// writes the first), and Collect says the second is a repeat.
func TestFieldCacheTellsRepeatedAliases(t *testing.T) {
	doc := gqlparser.MustLoadQuery(testSchema, `{ search { ... on Named { x: name } ... on Aged { x: name } ... on User { y: name } } }`)
	oc := &graphql.OperationContext{Doc: doc, Variables: map[string]any{}}
	sel := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
	var c FieldCache
	fields, dups := c.Collect(oc, sel, []string{"User", "Named", "Aged", "Result"})
	if len(fields) != 3 || !slices.Equal(dups, []bool{false, true, false}) {
		t.Fatalf("Collect = %d fields, repeats %v; want 3, [false true false]", len(fields), dups)
	}
}

func TestDuplicate(t *testing.T) {
	fields := []graphql.CollectedField{{Field: &ast.Field{Alias: "a"}}, {Field: &ast.Field{Alias: "b"}}, {Field: &ast.Field{Alias: "a"}}}
	if Duplicate(fields, 0) || Duplicate(fields, 1) || !Duplicate(fields, 2) {
		t.Fatal("Duplicate")
	}
}

// Observe runs the field interceptors as graphql.ResolveField does: their
// answer, the context they gave the resolver, and a panic reported with
// that context.
func TestObserve(t *testing.T) {
	type key struct{}
	var reported []string
	ctx := graphql.WithResponseContext(context.Background(), func(ctx context.Context, err error) *gqlerror.Error {
		v, _ := ctx.Value(key{}).(string)
		reported = append(reported, err.Error()+" with "+v)
		return gqlerror.Wrap(err)
	}, func(ctx context.Context, p any) error { return errors.New("recovered") })
	oc := &graphql.OperationContext{
		ResolverMiddleware: func(ctx context.Context, next graphql.Resolver) (any, error) {
			return next(context.WithValue(ctx, key{}, "interceptor's"))
		},
		RecoverFunc: func(ctx context.Context, p any) error { return errors.New("recovered") },
	}
	res, rctx, err, panicked := Observe(ctx, oc, true, func(ctx context.Context) (any, error) { return 7, nil })
	if res != 7 || err != nil || panicked || rctx.Value(key{}) != "interceptor's" {
		t.Fatalf("Observe = %v, %v, %v, %v", res, rctx.Value(key{}), err, panicked)
	}
	_, _, _, panicked = Observe(ctx, oc, true, func(ctx context.Context) (any, error) { panic("boom") })
	if !panicked || len(reported) != 1 || !strings.HasSuffix(reported[0], "recovered with interceptor's") {
		t.Fatalf("a panic: panicked %t, reported %q", panicked, reported)
	}
	m := RecoverToNull(ctx, oc, true, func(context.Context) graphql.Marshaler { panic("boom") })
	if m != graphql.Null || len(reported) != 2 {
		t.Fatalf("RecoverToNull = %v, reported %q", m, reported)
	}
}

// Go gives each function a goroutine of its own at once: n functions that
// each wait for all n to have started finish (a data loader's batch waits
// for every element of a list the same way).
func TestGoRunsEachFunctionAtOnce(t *testing.T) {
	for range 3 { // the later rounds on the workers of the first
		const n = 50
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for range n {
			Go(func() {
				defer done.Done()
				started.Done()
				started.Wait()
			})
		}
		done.Wait()
	}
}
