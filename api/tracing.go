package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is OpenTelemetry's, off by default and configured by its standard
// environment variables only: OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) turns it on and says where to send the
// spans; OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
// picks OTLP over HTTP/protobuf (http/protobuf, the default) or gRPC (grpc);
// OTEL_SERVICE_NAME names the instance's
// service (feedservice when unset); OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG choose the sampler (parentbased_always_on when
// unset); OTEL_SDK_DISABLED=true keeps it off. The SDK reads them itself.
//
// Spans: the HTTP request (otelhttp), the GraphQL operation and the
// resolvers' fields (extensions.Tracing and fieldHooks), each Redis command and
// pipeline (redisotel), each SQL statement (gorm's plugin), and the fan-out
// of a change across instances (feed/fanout/tracing.go).

// tracingShutdownTimeout bounds the flush of the spans still buffered when
// the server stops.
const tracingShutdownTimeout = 5 * time.Second

// defaultServiceName is the service name of the spans when OTEL_SERVICE_NAME
// is not set.
const defaultServiceName = "feedservice"

// tracingEnabled tells whether the environment turns tracing on.
func tracingEnabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTracing makes the tracer provider the environment asks for, or nil
// when it asks for none. The caller shuts it down (flushing its spans).
func startTracing(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if !tracingEnabled(os.Getenv) {
		return nil, nil
	}
	exporter, err := newTraceExporter(ctx, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// Later sources win: the environment's service name over the default.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(defaultServiceName)),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(dropLoneClientSpans{sdktrace.NewBatchSpanProcessor(exporter)})), nil
}

// traceExporter names the OTLP transport the environment asks for: the
// traces' own protocol variable over the general one, http/protobuf when
// neither is set. http/json, which Go's SDK does not speak, is refused
// rather than quietly sent as protobuf.
func traceExporter(getenv func(string) string) (string, error) {
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch protocol {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: this server exports OTLP as http/protobuf or grpc", protocol)
}

// newTraceExporter makes the exporter of traceExporter's protocol; the
// exporter reads its endpoint, headers, timeout and TLS settings from the
// standard variables itself.
func newTraceExporter(ctx context.Context, getenv func(string) string) (*otlptrace.Exporter, error) {
	protocol, err := traceExporter(getenv)
	if err != nil {
		return nil, err
	}
	if protocol == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

// dropLoneClientSpans leaves out the Redis commands and SQL statements
// that no traced work made: the background loops' polls (the dispatcher's
// outbox query every 50 ms, each fan-out worker's blocking stream read, the
// lag gauges), which would otherwise each be a trace of one span, many
// times a second on an idle server.
type dropLoneClientSpans struct{ sdktrace.SpanProcessor }

func (p dropLoneClientSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanKind() == trace.SpanKindClient && !s.Parent().IsValid() {
		return
	}
	p.SpanProcessor.OnEnd(s)
}

// traceRedis gives each command and pipeline of rdb a span.
func traceRedis(rdb redis.UniversalClient, tp trace.TracerProvider) error {
	// The commands' arguments are left out: they hold posts' bodies and tokens.
	return redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp), redisotel.WithDBStatement(false),
		redisotel.WithCallerEnabled(false))
}

// traceHTTP gives each HTTP request a span. A request from one of
// trustedCallers (TRACE_TRUSTED_CALLERS: a gateway or a service of the
// operator's) with a traceparent header continues that trace, and follows
// its sampling decision. Anyone else's traceparent is only linked from a
// trace of our own, which the operator's sampler decides: a client can
// neither force tracing (flagged sampled under a low ratio) nor opt out of
// it (flagged unsampled), nor put its trace id on our spans and outbox
// events. Websocket upgrades are left out (their span would last as long
// as the socket), and so are the health checks.
func traceHTTP(next http.Handler, tp trace.TracerProvider, trustedCallers []netip.Prefix) http.Handler {
	return otelhttp.NewHandler(next, "http",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithPublicEndpointFn(func(r *http.Request) bool { return !isTrustedCaller(r, trustedCallers) }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return r.Header.Get("Upgrade") == "" && r.URL.Path != "/healthz" && r.URL.Path != "/readyz"
		}))
}

// isTrustedCaller reports whether r comes straight (its peer address, not
// X-Forwarded-For) from one of callers.
func isTrustedCaller(r *http.Request, callers []netip.Prefix) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range callers {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// traceField runs a resolver's field in a span of its own ("Query.feed",
// "Mutation.createPost"); fieldHooks calls it for the fields it observes.
// Plain fields get none: they do no I/O.
func traceField(ctx context.Context, tracer trace.Tracer, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver {
		return next(ctx)
	}
	ctx, span := tracer.Start(ctx, fc.Object+"."+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.path", fc.Path().String())))
	defer span.End()
	res, err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, resolverErrorCode(err))
	}
	return res, err
}
