package api

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// refuseDefer refuses an operation that would defer a fragment, before
// anything runs or is sent, on every transport and either executor.
// gqlgen's executor, which runs every document that may use @defer, writes
// each deferred field into the first answer as null (null in a non-null
// field, without an error), and the transports the server offers send
// that first answer only: the fields never come. The refusal is a
// validation error (BAD_USER_INPUT; HTTP 422, or 400 to a client that
// accepts application/graphql-response+json) whose message names @defer,
// so that a client can send the document again without it. A @defer that
// would not defer (if: false, or under a fragment @skip or @include leaves
// out) is let through: gqlgen runs its fragment inline. @stream is not a
// directive of the schema, so validation refuses it already.
type refuseDefer struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = refuseDefer{}

// errDeferNotSupported is the message of the refusal.
const errDeferNotSupported = "@defer is not supported: the server sends every answer in one part; " +
	"ask for the fragment without @defer (or with @defer(if: false))"

func (refuseDefer) ExtensionName() string                   { return "RefuseDefer" }
func (refuseDefer) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseDefer) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil || op.Doc == nil {
		return nil
	}
	seen := map[string]bool{}
	if d := activeDefer(op.Operation.SelectionSet, op.Doc.Fragments, op.Variables, seen); d != nil {
		err := gqlerror.Errorf("%s", errDeferNotSupported)
		if d.Position != nil {
			err = gqlerror.ErrorPosf(d.Position, "%s", errDeferNotSupported)
		}
		errcode.Set(err, errcode.ValidationFailed)
		return err
	}
	return nil
}

// activeDefer returns the first @defer in set, or in a fragment it spreads,
// that gqlgen's executor would act on, or nil. Its rules are gqlgen's own
// (graphql.CollectFields): a fragment left out by @skip or @include is not
// looked into, and @defer defers unless its if argument is other than
// true. seen holds the named fragments looked into already: a fragment's
// directives and contents are the same wherever it is spread.
func activeDefer(set ast.SelectionSet, fragments ast.FragmentDefinitionList, vars map[string]any, seen map[string]bool) *ast.Directive {
	for _, sel := range set {
		var inner ast.SelectionSet
		switch sel := sel.(type) {
		case *ast.Field:
			if !included(sel.Directives, vars) {
				continue
			}
			inner = sel.SelectionSet
		case *ast.InlineFragment:
			if !included(sel.Directives, vars) {
				continue
			}
			if d := deferring(sel.Directives, vars); d != nil {
				return d
			}
			inner = sel.SelectionSet
		case *ast.FragmentSpread:
			if !included(sel.Directives, vars) {
				continue
			}
			if d := deferring(sel.Directives, vars); d != nil {
				return d
			}
			if seen[sel.Name] {
				continue
			}
			seen[sel.Name] = true
			if f := fragments.ForName(sel.Name); f != nil {
				inner = f.SelectionSet
			}
		}
		if d := activeDefer(inner, fragments, vars, seen); d != nil {
			return d
		}
	}
	return nil
}

// deferring returns the @defer of directives when it defers.
func deferring(directives ast.DirectiveList, vars map[string]any) *ast.Directive {
	d := directives.ForName("defer")
	if d == nil {
		return nil
	}
	if arg := d.Arguments.ForName("if"); arg != nil {
		if v, err := arg.Value.Value(vars); err == nil {
			if on, _ := v.(bool); !on {
				return nil
			}
		}
	}
	return d
}

// included says whether @skip and @include keep a selection.
func included(directives ast.DirectiveList, vars map[string]any) bool {
	return !isTrue(directives.ForName("skip"), vars) && (directives.ForName("include") == nil || isTrue(directives.ForName("include"), vars))
}

// isTrue says whether directive d is there with an if argument that is true.
func isTrue(d *ast.Directive, vars map[string]any) bool {
	if d == nil {
		return false
	}
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return false
	}
	v, err := arg.Value.Value(vars)
	on, _ := v.(bool)
	return err == nil && on
}
