package extensions

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the gqlgen extension that gives each query and
// mutation a span, named by its type and name ("mutation createPost"); the
// resolvers' spans (api's traceField) are its children. Subscriptions get none:
// they last as long as the client listens.
type Tracing struct{ Tracer trace.Tracer }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = Tracing{}

func (Tracing) ExtensionName() string                   { return "Tracing" }
func (Tracing) Validate(graphql.ExecutableSchema) error { return nil }

func (g Tracing) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	ctx, span := g.Tracer.Start(ctx, operationSpanName(oc.Operation), trace.WithAttributes(
		attribute.String("graphql.operation.type", string(oc.Operation.Operation)),
		attribute.String("graphql.operation.name", oc.OperationName)))
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if res != nil && len(res.Errors) > 0 {
			span.SetStatus(codes.Error, res.Errors[0].Message)
		}
		span.End()
		return res
	}
}

// operationSpanName is "query" or "mutation" and the operation's name, or
// its first field when it has none.
func operationSpanName(op *ast.OperationDefinition) string {
	name := op.Name
	if name == "" && len(op.SelectionSet) > 0 {
		if f, ok := op.SelectionSet[0].(*ast.Field); ok {
			name = f.Name
		}
	}
	if name == "" {
		return string(op.Operation)
	}
	return string(op.Operation) + " " + name
}
