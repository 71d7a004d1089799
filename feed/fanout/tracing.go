package fanout

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"feedservice/models"
	"feedservice/store"
)

// Tracing of the write path across instances. A mutation's trace context
// is committed with its outbox event (store.appendEvent), the dispatcher
// continues it and writes its own into the stream entry (the field
// TraceField), and the worker that takes the entry continues that one, as
// does every fan-out Task it queues. So one trace holds the mutation, the
// dispatch, each worker batch and the inbox writes, which publish the
// readers' new unread counts, whichever instances ran them. Events and
// entries written without a trace context (by an older version, or with
// tracing off) are handled as before, in a trace of their own or none.
const (
	// tracerName names the engine's spans' instrumentation scope.
	tracerName = "feedservice/feed"
	// TraceField is the stream entry's field holding the W3C traceparent
	// of the span that wrote the entry.
	TraceField = "traceparent"
)

// Span names of the write path, as a trace viewer lists them.
const (
	SpanDispatch   = "outbox dispatch"
	SpanFanout     = "fanout "      // + the stream entry's kind
	SpanBatch      = "fanout batch" // one task: up to FanoutBatchSize readers
	SpanInboxWrite = "inbox write"  // pipelined inbox changes, each publishing its reader's unread count
)

// traceContext is the propagation format of the trace context in the
// outbox and the stream: W3C trace context, as OTLP tools expect.
var traceContext propagation.TraceContext

func (st *Stream) tracer() trace.Tracer {
	return st.d.Cfg.TracerProvider.Tracer(tracerName)
}

// withTraceParent is ctx continuing the remote trace of traceparent; ctx
// itself when traceparent is empty or malformed.
func withTraceParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// dispatchSpans are the spans of one dispatched batch: one per event that
// carries a trace context, each a child of its mutation.
type dispatchSpans []trace.Span

// startDispatchSpans starts the dispatch spans of events; nil when none of
// them carries a trace context (tracing off, or older events).
func (st *Stream) startDispatchSpans(ctx context.Context, events []models.OutboxEvent) dispatchSpans {
	var spans dispatchSpans
	for i, ev := range events {
		if ev.TraceParent == "" {
			continue
		}
		if spans == nil {
			spans = make(dispatchSpans, len(events))
		}
		_, spans[i] = st.tracer().Start(withTraceParent(ctx, ev.TraceParent), SpanDispatch,
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(attribute.Int64("feed.event.id", ev.ID), attribute.String("feed.event.kind", ev.Kind),
				attribute.Int("feed.dispatch.batch", len(events))))
	}
	return spans
}

// streamValues are the stream entry's fields of event i: values, and the
// traceparent of its dispatch span when it has one.
func (s dispatchSpans) streamValues(i int, values []any) []any {
	if s == nil || s[i] == nil {
		return values
	}
	if tp := store.TraceParent(trace.ContextWithSpan(context.Background(), s[i])); tp != "" {
		values = append(values, TraceField, tp)
	}
	return values
}

// end ends every span, marking them failed with err.
func (s dispatchSpans) end(err error) {
	for _, span := range s {
		if span != nil {
			endSpan(span, err)
		}
	}
}

// startMessageSpan starts the span of a worker handling stream message m,
// continuing the trace of whoever wrote it.
func (st *Stream) startMessageSpan(ctx context.Context, m redis.XMessage, kind string) (context.Context, trace.Span) {
	tp, _ := m.Values[TraceField].(string)
	if tp == "" {
		// No trace to continue: a span of its own would make a root trace
		// per message (trimming, follow-ups of untraced writes).
		return ctx, noSpan
	}
	attrs := []attribute.KeyValue{attribute.String("messaging.message.id", m.ID), attribute.String("feed.event.kind", kind)}
	if id, err := strconv.ParseInt(stringValue(m.Values["event"]), 10, 64); err == nil {
		attrs = append(attrs, attribute.Int64("feed.event.id", id))
	}
	return st.tracer().Start(withTraceParent(ctx, tp), SpanFanout+kind,
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
}

// taskValues are the stream fields of a fan-out Task queued under ctx.
func taskValues(ctx context.Context, payload []byte) []any {
	values := []any{"kind", TaskKind, "payload", string(payload)}
	if tp := store.TraceParent(ctx); tp != "" {
		values = append(values, TraceField, tp)
	}
	return values
}

// startBatchSpan starts the span of one fan-out task.
func (st *Stream) startBatchSpan(ctx context.Context, t Task) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsSampled() {
		return ctx, noSpan
	}
	return st.tracer().Start(ctx, SpanBatch, trace.WithAttributes(
		attribute.String("feed.task.op", t.Op), attribute.Int64("feed.task.user", t.User),
		attribute.Int64("feed.task.post", t.Post), attribute.Int("feed.task.readers", len(t.Readers))))
}

// startInboxWriteSpan starts the span of a batch's inbox changes.
func (st *Stream) startInboxWriteSpan(ctx context.Context, changes int) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsSampled() {
		return ctx, noSpan
	}
	return st.tracer().Start(ctx, SpanInboxWrite, trace.WithAttributes(attribute.Int("feed.inbox.changes", changes)))
}

// noSpan is the span of what is not traced: ending it does nothing.
var noSpan = trace.SpanFromContext(context.Background())

// endSpan ends span, marking it failed with err.
func endSpan(span trace.Span, err error) {
	failSpan(span, err)
	span.End()
}

// failSpan marks span failed with err, when err is not nil.
func failSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

func stringValue(v any) string {
	s, _ := v.(string)
	return s
}
