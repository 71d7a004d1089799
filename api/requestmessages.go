package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// The refusals below say what is wrong with a request where gqlgen's own
// words would mislead: an Int variable that is a fraction ("cannot use value
// 0 as Int") or past 32 bits (taken as a 64-bit Int, then refused by the
// argument's own bound), and an operation name missing from a document of
// several operations ("operation  not found"). The body's members of the
// wrong JSON type are refusedRequestMembers' (requestformat.go).

// intVariables refuses, before gqlgen coerces them, the variables declared
// as Int (alone, in a list or in an input object) whose JSON number is not
// a GraphQL Int: a whole number from -2^31 to 2^31-1. It reads the document
// only when a variable holds a number that is not one (a rare request):
// from the cache of parsed documents, else parsed under the token limit.
// Its refusal is a validation error, as gqlgen's coercion errors are.
type intVariables struct {
	maxTokens int
	kept      interface {
		Get(ctx context.Context, key string) (*ast.QueryDocument, bool)
	}
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = &intVariables{}

func (*intVariables) ExtensionName() string { return "IntVariables" }
func (v *intVariables) Validate(es graphql.ExecutableSchema) error {
	v.schema = es.Schema()
	return nil
}

func (v *intVariables) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if !holdsNonInt(p.Variables) {
		return nil
	}
	doc, ok := v.kept.Get(ctx, p.Query)
	if !ok {
		var err error
		if doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, v.maxTokens); err != nil {
			return nil // gqlgen's parse answers it
		}
	}
	op := doc.Operations.ForName(p.OperationName)
	if op == nil {
		return nil // gqlgen answers it (withOperationNames)
	}
	for _, def := range op.VariableDefinitions {
		value, ok := p.Variables[def.Variable]
		if !ok {
			continue
		}
		if msg := v.notInt(def.Type, value); msg != "" {
			err := gqlerror.ErrorPathf(ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}, "variable $%s: %s", def.Variable, msg)
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	return nil
}

// notInt says why value, of a variable of type typ, holds a number where
// typ has an Int that is not one; "" when it does not.
func (v *intVariables) notInt(typ *ast.Type, value any) string {
	switch {
	case value == nil:
		return ""
	case typ.Elem != nil:
		list, ok := value.([]any)
		if !ok {
			return v.notInt(typ.Elem, value) // a single value stands for a list of one
		}
		for _, e := range list {
			if msg := v.notInt(typ.Elem, e); msg != "" {
				return msg
			}
		}
		return ""
	case typ.NamedType == "Int":
		return intProblem(value)
	}
	def := v.schema.Types[typ.NamedType]
	object, ok := value.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return ""
	}
	for _, f := range def.Fields {
		if msg := v.notInt(f.Type, object[f.Name]); msg != "" {
			return msg
		}
	}
	return ""
}

// intProblem says why a JSON value is not a GraphQL Int, or "" when it is
// one or is not a number (gqlgen's coercion refuses those in its words).
// The transports decode numbers as json.Number; float64 is there for a
// decoder that does not.
func intProblem(value any) string {
	var text string
	switch n := value.(type) {
	case json.Number:
		text = n.String()
	case float64:
		text = strconv.FormatFloat(n, 'f', -1, 64)
	default:
		return ""
	}
	i, err := strconv.ParseInt(text, 10, 64)
	switch {
	case err == nil && i >= math.MinInt32 && i <= math.MaxInt32:
		return ""
	case err == nil || isIntegerText(text):
		return fmt.Sprintf("%s is out of the range of Int, a 32-bit integer (%d to %d)", shortNumber(text), math.MinInt32, math.MaxInt32)
	}
	return fmt.Sprintf("%s is not an Int: an Int is a whole number, written without a fraction or an exponent", shortNumber(text))
}

// shortNumber is text, or its start and length when it is too long to echo
// back (a number may be most of a 1 MiB body).
func shortNumber(text string) string {
	const maxShown = 40
	if len(text) <= maxShown {
		return text
	}
	return fmt.Sprintf("%s… (a number of %d characters)", text[:maxShown], len(text))
}

// isIntegerText reports whether s is an optional minus sign and digits.
func isIntegerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// holdsNonInt reports whether variables hold, at any depth, a number that
// is not a GraphQL Int: only then can a variable of type Int be one.
func holdsNonInt(value any) bool {
	switch v := value.(type) {
	case map[string]any:
		for _, e := range v {
			if holdsNonInt(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holdsNonInt(e) {
				return true
			}
		}
	default:
		return intProblem(v) != ""
	}
	return false
}

// withOperationNames replaces gqlgen's "operation X not found" (with an
// empty X when the request named none) by what is wrong: which operation
// to name, and the document's operations to name it from.
func withOperationNames(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if !graphql.HasOperationContext(ctx) {
			return e
		}
		oc := graphql.GetOperationContext(ctx)
		if oc.Doc == nil || oc.Operation != nil || e.Message != "operation "+oc.OperationName+" not found" {
			return e
		}
		e.Message = operationNotFound(oc.OperationName, oc.Doc.Operations)
		return e
	}
}

// operationNotFound is the message for a request naming name (or none)
// where the document holds ops and none of them is the one.
func operationNotFound(name string, ops ast.OperationList) string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
		if op.Name == "" {
			names[i] = "(anonymous)"
		}
	}
	switch {
	case len(ops) == 0:
		return "the document holds no operation: send a query, mutation or subscription"
	case name == "":
		return fmt.Sprintf("the document holds %d operations (%s): say which one to run with operationName", len(ops), strings.Join(names, ", "))
	}
	return fmt.Sprintf("the document holds no operation named %q; its operations are %s", name, strings.Join(names, ", "))
}
