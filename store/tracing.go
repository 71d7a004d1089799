package store

import (
	"context"
	"regexp"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
	gormtracing "gorm.io/plugin/opentelemetry/tracing"
)

// useTracing gives every SQL statement run through db a span, a child of
// the span of the statement's context. The statement's text is kept
// without its values (they may be passwords' hashes or posts' bodies), and
// without the literal password of a CREATE SERVER (redactPasswords).
func useTracing(db *gorm.DB, tp trace.TracerProvider) error {
	return db.Use(gormtracing.NewPlugin(gormtracing.WithTracerProvider(tp), gormtracing.WithoutMetrics(),
		gormtracing.WithoutQueryVariables(), gormtracing.WithQueryFormatter(redactPasswords)))
}

// passwordLiteral is a PASSWORD option's quoted literal, as migrate
// writes it in the head's CREATE SERVER of a data node (MariaDB takes no
// placeholder there).
var passwordLiteral = regexp.MustCompile(`(?i)(PASSWORD\s+)'(?:[^'\\]|\\.|'')*'`)

// redactPasswords is query with its password literals replaced by '***'.
func redactPasswords(query string) string {
	return passwordLiteral.ReplaceAllString(query, "${1}'***'")
}

// TraceParent is the W3C traceparent of ctx's span, or "" when ctx carries
// no sampled trace: what an outbox event, and the fan-out stream entry made
// from it, keep of the trace of the change they describe.
func TraceParent(ctx context.Context) string {
	if ctx == nil || !trace.SpanContextFromContext(ctx).IsSampled() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"]
}
