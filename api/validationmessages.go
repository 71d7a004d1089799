package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// withoutSchemaNames rewrites, for a server with introspection switched
// off, the validation errors whose text names what the document did not
// write: a required argument or input field and its type, the type a field
// belongs to, the type a position or a fragment expects. What the client
// wrote (a field, argument, variable or fragment name) is kept, the error's
// location and code too, so the message still says what is wrong and
// where. Errors of the other rules name only the document's own words and
// pass as they are. The same goes for the errors of a variable's value.
func withoutSchemaNames(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		switch {
		case e.Rule != "":
			e.Message = schemaFreeMessage(e.Rule, e.Message)
		case len(e.Path) > 2 && e.Path[0] == ast.PathName("variable"):
			schemaFreeVariableError(e)
		}
		return e
	}
}

// schemaFreeVariableError rewrites an error of gqlparser's variable
// coercion inside a variable's value (its path goes below the variable):
// a missing required input field is named by the path's last element, and
// a wrong type by the message. The rest of the path is what the client
// sent.
func schemaFreeVariableError(e *gqlerror.Error) {
	switch {
	case e.Message == "must be defined":
		e.Path = e.Path[:len(e.Path)-1]
		e.Message = "a required input field is missing here"
	case strings.HasPrefix(e.Message, "cannot use ") || strings.HasPrefix(e.Message, "must be a ") || strings.Contains(e.Message, " is not a valid "):
		e.Message = "this value is not of the type expected here"
	}
}

// schemaFreeMessage is the message of a validation error of rule without
// the schema's names; msg when it has none of them.
func schemaFreeMessage(rule, msg string) string {
	written := firstQuoted(msg) // the first name in gqlparser's messages is the document's
	// gqlgen swaps some rules for variants without "Did you mean".
	switch strings.TrimSuffix(rule, "WithoutSuggestions") {
	case "FieldsOnCorrectType":
		return fmt.Sprintf("Cannot query field %q here.", written)
	case "KnownArgumentNames":
		if strings.Contains(msg, " on directive ") {
			return msg
		}
		return fmt.Sprintf("Unknown argument %q on this field.", written)
	case "ProvidedRequiredArguments":
		return "A required argument is missing here."
	case "ValuesOfCorrectType":
		switch {
		case strings.Contains(msg, "was not provided"):
			return "A required input field is missing here."
		case strings.HasPrefix(msg, `Field "`) && strings.Contains(msg, " is not defined by type "):
			return fmt.Sprintf("Input field %q is not defined here.", written)
		}
		return "This value is not of the type expected here."
	case "VariablesInAllowedPosition":
		return fmt.Sprintf("Variable %q is not of the type expected here.", written)
	case "ScalarLeafs":
		if strings.Contains(msg, "must not have a selection") {
			return fmt.Sprintf("Field %q must not have a selection of subfields.", written)
		}
		return fmt.Sprintf("Field %q must have a selection of subfields.", written)
	case "PossibleFragmentSpreads":
		if strings.HasPrefix(msg, `Fragment "`) {
			return fmt.Sprintf("Fragment %q cannot be spread here: its type can never match.", written)
		}
		return "This fragment cannot be spread here: its type can never match."
	case "FragmentsOnCompositeTypes":
		return "A fragment's type condition must be an object, interface or union type."
	case "VariablesAreInputTypes":
		return fmt.Sprintf("Variable %q must be of an input type.", written)
	case "OverlappingFieldsCanBeMerged":
		return fmt.Sprintf("Fields %q conflict: one response name selects different fields, arguments or types; give them different aliases.", written)
	}
	return msg
}

// firstQuoted is the text between the first two double quotes of msg, or
// "". GraphQL names hold no quotes.
func firstQuoted(msg string) string {
	_, rest, ok := strings.Cut(msg, `"`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}
