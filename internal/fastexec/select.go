package fastexec

import (
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Supported says whether the fast path may run the operation: a query or
// a mutation whose document never mentions defer. Subscriptions, and any
// document that might use @defer (the word anywhere in its text, comments
// and strings included, since a directive's name may stand apart from its
// @), run on gqlgen's own executor.
func Supported(oc *graphql.OperationContext) bool {
	if oc.Operation == nil || strings.Contains(oc.RawQuery, "defer") {
		return false
	}
	return oc.Operation.Operation == ast.Query || oc.Operation.Operation == ast.Mutation
}

// Concurrency says whether a field of a type is one gqlgen resolves
// concurrently (a resolver, or a method taking a context): for an
// interface or a union, whether it is for any of its implementations.
type Concurrency func(typ, field string) bool

// MayBlock says whether resolving sel can reach a field gqlgen resolves
// concurrently, a resolver that may wait for others (a data loader's
// batch): gqlgen marshals the elements of a list of objects each in a
// goroutine of its own so that they wait together, and the fast path does
// the same for such a list only. It reads the document alone (fragments
// included, @skip and @include ignored), so it may say yes where the
// variables would skip the field, never no where one is reached.
func MayBlock(doc *ast.QueryDocument, sel ast.SelectionSet, concurrent Concurrency) bool {
	var seen [8]string // fragments already walked: a fragment spread twice says the same
	return mayBlock(doc, sel, concurrent, seen[:0])
}

func mayBlock(doc *ast.QueryDocument, sel ast.SelectionSet, concurrent Concurrency, seen []string) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil && concurrent(s.ObjectDefinition.Name, s.Name) {
				return true
			}
			if mayBlock(doc, s.SelectionSet, concurrent, seen) {
				return true
			}
		case *ast.InlineFragment:
			if mayBlock(doc, s.SelectionSet, concurrent, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if contains(seen, s.Name) {
				continue
			}
			seen = append(seen, s.Name)
			def := s.Definition
			if def == nil && doc != nil {
				def = doc.Fragments.ForName(s.Name)
			}
			if def != nil && mayBlock(doc, def.SelectionSet, concurrent, seen) {
				return true
			}
		}
	}
	return false
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
