package api

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/trace"

	"feedservice/api/sockets"
	"feedservice/feed"
	"feedservice/internal/apperr"
	"feedservice/internal/fastexec"
	"feedservice/internal/viewer"
)

// maxRequestIDBytes caps a client's X-Request-ID; a longer one, or one with
// characters other than letters, digits and "-_.:", is replaced by a new id.
const maxRequestIDBytes = 64

// serverMetrics are the metrics of the server around the engine: GraphQL
// operations and resolvers, websockets, the Redis and SQL pools, and the Go
// runtime. They live in a registry of their own, like the engine's, so that
// several servers (tests) can live in one process.
type serverMetrics struct {
	registry *prometheus.Registry

	resolverDuration  *prometheus.HistogramVec
	resolverSeries    sync.Map // schemaField -> prometheus.Observer of resolverDuration
	resolverErrors    *prometheus.CounterVec
	operations        *prometheus.CounterVec
	operationDuration *prometheus.HistogramVec
	errors            *prometheus.CounterVec
	subscriptionsOpen prometheus.Gauge
	websockets        *sockets.Metrics
	// operationsInFlight and operationsRefused are operationGate's.
	operationsInFlight prometheus.Gauge
	operationsRefused  *prometheus.CounterVec
	// answersRefused is answerLimit's.
	answersRefused *prometheus.CounterVec
}

func newServerMetrics(db *sql.DB, rdb redis.UniversalClient) *serverMetrics {
	m := &serverMetrics{
		registry: prometheus.NewRegistry(),
		resolverDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "graphql_resolver_duration_seconds", Help: "Time spent in resolver functions (not in plain fields), by schema field.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"object", "field"}),
		resolverErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_resolver_errors_total", Help: "Errors returned by resolver functions, by schema field and error code.",
		}, []string{"object", "field", "code"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_operations_total", Help: "Valid GraphQL operations started, by type.",
		}, []string{"type"}),
		operationDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "graphql_operation_duration_seconds", Help: "Time from the start of a query or mutation to its response (parsing included).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"type"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_errors_total", Help: "Errors sent in GraphQL responses (document errors included), by extensions.code.",
		}, []string{"code"}),
		subscriptionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "graphql_subscriptions_open", Help: "Subscriptions running on this instance.",
		}),
		websockets: sockets.NewMetrics(),
		operationsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "graphql_operations_in_flight", Help: "HTTP requests to /query and websocket queries and mutations running on this instance (MaxOperationsInFlight).",
		}),
		operationsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_operations_refused_total", Help: "Requests and operations refused for operations in flight, by the bound that refused them: instance, address or socket.",
		}, []string{"limit"}),
		answersRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_answers_refused_total", Help: "Answers refused before they were sent, by the bound that refused them: size (MaxResponseBytes), address_bytes or instance_bytes (MaxResponseBytesInFlight).",
		}, []string{"limit"}),
	}
	m.registry.MustRegister(m.answersRefused, m.resolverDuration, m.resolverErrors, m.operations, m.operationDuration,
		m.errors, m.subscriptionsOpen, m.websockets,
		m.operationsInFlight, m.operationsRefused,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db, "feed"),
		redisPoolCollector{rdb})
	return m
}

// gatherer serves the server's metrics and the engine's together.
func (m *serverMetrics) gatherer(engine *feed.Engine) prometheus.Gatherer {
	return prometheus.Gatherers{m.registry, engine.Registry()}
}

// graphqlMetrics is the gqlgen extension that measures operations and the
// errors sent; its timeField, run by fieldHooks, times resolver functions.
// Plain fields (struct fields and cheap getters) are not timed: they are
// most of a page's fields and would cost more to measure than to run.
type graphqlMetrics struct{ m *serverMetrics }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = graphqlMetrics{}

func (graphqlMetrics) ExtensionName() string                   { return "Metrics" }
func (graphqlMetrics) Validate(graphql.ExecutableSchema) error { return nil }

func (g graphqlMetrics) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	typ := string(oc.Operation.Operation)
	g.m.operations.WithLabelValues(typ).Inc()
	mark := &responseMark{}
	ctx = context.WithValue(ctx, responseMarkKey{}, mark)
	start := oc.Stats.OperationStart
	if start.IsZero() {
		start = time.Now()
	}
	if oc.Operation.Operation == ast.Subscription {
		// The operation's context ends with the subscription, however it ends.
		g.m.subscriptionsOpen.Inc()
		context.AfterFunc(ctx, g.m.subscriptionsOpen.Dec)
	}
	responses := next(ctx)
	var once sync.Once
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if oc.Operation.Operation != ast.Subscription {
			once.Do(func() { g.m.operationDuration.WithLabelValues(typ).Observe(time.Since(start).Seconds()) })
		}
		// A subscription that fails as it starts answers past the response
		// interceptors: count its errors here.
		if !mark.counted.Swap(false) && res != nil {
			g.countErrors(res)
		}
		return res
	}
}

// responseMark tells InterceptOperation that InterceptResponse has counted
// the errors of the response on its way.
type responseMark struct{ counted atomic.Bool }

type responseMarkKey struct{}

func (g graphqlMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	res := next(ctx)
	if res != nil {
		g.countErrors(res)
	}
	if mark, ok := ctx.Value(responseMarkKey{}).(*responseMark); ok {
		mark.counted.Store(true)
	}
	return res
}

func (g graphqlMetrics) countErrors(res *graphql.Response) {
	for _, e := range res.Errors {
		code, _ := e.Extensions["code"].(string)
		g.m.errors.WithLabelValues(boundedCode(code)).Inc()
	}
}

// timeField runs a field, timing it if it is a resolver's.
func (g graphqlMetrics) timeField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver {
		return next(ctx)
	}
	start := time.Now()
	res, err := next(ctx)
	g.m.resolverObserver(fc.Object, fc.Field.Name).Observe(time.Since(start).Seconds())
	if err != nil {
		g.m.resolverErrors.WithLabelValues(fc.Object, fc.Field.Name, resolverErrorCode(err)).Inc()
	}
	return res, err
}

// fieldHooks is the one gqlgen field interceptor of the server: it runs
// the metrics' timeField around the rate limits' limitField. gqlgen wraps
// every field of a response, plain ones too, in a closure per field
// interceptor registered, and a feed page has some 500 fields; here a
// plain field passes straight through. (metrics and limits may be nil.)
type fieldHooks struct {
	metrics *graphqlMetrics
	limits  *rateLimits
	tracer  trace.Tracer // nil when tracing is off
}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = fieldHooks{}

func (fieldHooks) ExtensionName() string                   { return "FieldHooks" }
func (fieldHooks) Validate(graphql.ExecutableSchema) error { return nil }

func (h fieldHooks) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil ||
		!fieldHooksObserve(fastexec.FieldInfo{Object: fc.Object, Field: fc.Field.Name, IsMethod: fc.IsMethod, IsResolver: fc.IsResolver}) {
		return next(ctx)
	}
	if fc.Object == "Mutation" {
		// A logOut earlier in the mutation revoked the request's token.
		if err := viewer.TokenError(ctx); err != nil {
			return nil, err
		}
	}
	limited := next
	if h.limits != nil {
		limited = func(ctx context.Context) (any, error) { return h.limits.limitField(ctx, next) }
	}
	timed := limited
	if h.metrics != nil {
		timed = func(ctx context.Context) (any, error) { return h.metrics.timeField(ctx, limited) }
	}
	if h.tracer == nil {
		return timed(ctx)
	}
	return traceField(ctx, h.tracer, timed)
}

// fieldHooksObserve says which fields fieldHooks acts on: the resolvers'
// (timed) and the mutations' (timed and rate limited). The fast executor
// runs the field interceptors on these fields only.
func fieldHooksObserve(f fastexec.FieldInfo) bool { return f.IsResolver || f.Object == "Mutation" }

// resolverObserver is the duration series of one schema field, kept once
// found: a page resolves the same few fields many times, and the lookup by
// label values costs an allocation each time.
func (m *serverMetrics) resolverObserver(object, field string) prometheus.Observer {
	key := schemaField{object, field}
	if o, ok := m.resolverSeries.Load(key); ok {
		return o.(prometheus.Observer)
	}
	o, _ := m.resolverSeries.LoadOrStore(key, m.resolverDuration.WithLabelValues(object, field))
	return o.(prometheus.Observer)
}

type schemaField struct{ object, field string }

// resolverErrorCode is the code the error presenter will give a resolver's
// error: an engine error's own, a coded gqlerror's, or internal.
func resolverErrorCode(err error) string {
	var engineErr *apperr.Error
	if errors.As(err, &engineErr) {
		return string(engineErr.Code)
	}
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) {
		if code, ok := gqlErr.Extensions["code"].(string); ok {
			return boundedCode(code)
		}
	}
	return string(apperr.CodeInternal)
}

// boundedCode keeps an error code usable as a label value: the presenter
// sets every code from a short list, and anything else (none, or a long or
// odd string) is counted as "OTHER" rather than as a series of its own.
func boundedCode(code string) string {
	if code == "" || len(code) > 40 {
		return "OTHER"
	}
	for _, c := range code {
		if (c < 'A' || c > 'Z') && c != '_' {
			return "OTHER"
		}
	}
	return code
}

// redisPoolCollector reads the Redis client's pool statistics at scrape time.
type redisPoolCollector struct{ rdb redis.UniversalClient }

var (
	redisPoolHits    = prometheus.NewDesc("redis_pool_hits_total", "Times a free connection was found in the Redis pool.", nil, nil)
	redisPoolMisses  = prometheus.NewDesc("redis_pool_misses_total", "Times no free connection was found in the Redis pool (a new one was dialled).", nil, nil)
	redisPoolTimeout = prometheus.NewDesc("redis_pool_timeouts_total", "Times a wait for a Redis pool connection timed out.", nil, nil)
	redisPoolWaits   = prometheus.NewDesc("redis_pool_waits_total", "Times a caller waited for a Redis pool connection.", nil, nil)
	redisPoolStale   = prometheus.NewDesc("redis_pool_stale_connections_total", "Stale connections removed from the Redis pool.", nil, nil)
	redisPoolTotal   = prometheus.NewDesc("redis_pool_connections", "Connections in the Redis pool.", nil, nil)
	redisPoolIdle    = prometheus.NewDesc("redis_pool_idle_connections", "Idle connections in the Redis pool.", nil, nil)
)

func (redisPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{redisPoolHits, redisPoolMisses, redisPoolTimeout, redisPoolWaits, redisPoolStale, redisPoolTotal, redisPoolIdle} {
		ch <- d
	}
}

func (c redisPoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.rdb.PoolStats()
	ch <- prometheus.MustNewConstMetric(redisPoolHits, prometheus.CounterValue, float64(s.Hits))
	ch <- prometheus.MustNewConstMetric(redisPoolMisses, prometheus.CounterValue, float64(s.Misses))
	ch <- prometheus.MustNewConstMetric(redisPoolTimeout, prometheus.CounterValue, float64(s.Timeouts))
	ch <- prometheus.MustNewConstMetric(redisPoolWaits, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(redisPoolStale, prometheus.CounterValue, float64(s.StaleConns))
	ch <- prometheus.MustNewConstMetric(redisPoolTotal, prometheus.GaugeValue, float64(s.TotalConns))
	ch <- prometheus.MustNewConstMetric(redisPoolIdle, prometheus.GaugeValue, float64(s.IdleConns))
}

// requestIDLogs adds the request id of the context, when there is one, and
// its trace and span ids when it is traced, to every record logged with it (log.InfoContext and the like), so that each
// line written while serving a request or a websocket operation names it.
type requestIDLogs struct{ slog.Handler }

func withRequestIDLogs(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(requestIDLogs); ok {
		return log
	}
	return slog.New(requestIDLogs{log.Handler()})
}

func (h requestIDLogs) Handle(ctx context.Context, r slog.Record) error {
	if id := requestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDLogs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDLogs{h.Handler.WithAttrs(attrs)}
}

func (h requestIDLogs) WithGroup(name string) slog.Handler {
	return requestIDLogs{h.Handler.WithGroup(name)}
}

// validRequestID tells whether a client's X-Request-ID may be used as the
// request's id: at most maxRequestIDBytes of letters, digits and "-_.:",
// so that it cannot forge log fields or fill the logs.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDBytes {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}
