package feed

import (
	"context"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/models"
)

// TestTraceContextTravelsWithTheEvent: a post made under a traced context
// is dispatched, handled and fanned out in spans of the same trace, each
// the child of the step before (outbox dispatch, fanout post_created, one
// fanout task and fanout batch per reader with FanoutBatchSize 1, inbox
// write), through the outbox row and the stream entries. A post made
// without a trace context (as with tracing off, or written by an earlier
// version) leaves stream entries without the traceparent field, makes no
// span, and reaches the same inboxes.
func TestTraceContextTravelsWithTheEvent(t *testing.T) {
	t.Parallel()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	te := newTestEngine(t, func(c *config.Config) {
		c.TracerProvider = tp
		c.Mode = config.ModePush
		c.FanoutBatchSize = 1
		c.StreamTrimInterval = time.Hour // the entries stay for the test to read
	})
	author, r1, r2 := te.user("author"), te.user("reader1"), te.user("reader2")
	te.follow(r1, author)
	te.follow(r2, author)
	te.settle()
	te.readFeed(r1, 5) // inboxes, so that the fan-out writes them
	te.readFeed(r2, 5)

	ctx, client := tp.Tracer("test").Start(context.Background(), "client")
	traced, err := te.CreatePost(ctx, author, "traced")
	if err != nil {
		t.Fatal(err)
	}
	client.End()
	te.settle()
	untraced := te.post(author, "untraced")
	te.settle()

	for _, r := range []int64{r1, r2} {
		var got []int64
		for _, it := range te.readFeed(r, 5) {
			got = append(got, it.Post)
		}
		if !slices.Contains(got, traced.ID) || !slices.Contains(got, untraced) {
			t.Errorf("reader %d's feed %v lacks the traced post %d or the untraced one %d", r, got, traced.ID, untraced)
		}
	}

	spans := recorder.Ended()
	named := func(name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range spans {
			if s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}
	children := func(parent sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range named(name) {
			if s.Parent().SpanID() == parent.SpanContext().SpanID() && s.SpanContext().TraceID() == parent.SpanContext().TraceID() {
				out = append(out, s)
			}
		}
		return out
	}
	var clientSpan sdktrace.ReadOnlySpan
	for _, s := range named("client") {
		clientSpan = s
	}
	dispatch := children(clientSpan, fanout.SpanDispatch)
	if len(dispatch) != 1 || len(named(fanout.SpanDispatch)) != 1 {
		t.Fatalf("%d dispatch spans under the client's, %d in all; want one, of the traced post only", len(dispatch), len(named(fanout.SpanDispatch)))
	}
	handled := children(dispatch[0], fanout.SpanFanout+models.EventPostCreated)
	if len(handled) != 1 {
		t.Fatalf("%d %q spans under the dispatch, want 1", len(handled), fanout.SpanFanout+models.EventPostCreated)
	}
	tasks := children(handled[0], fanout.SpanFanout+fanout.TaskKind)
	if len(tasks) != 2 {
		t.Fatalf("%d task spans under the event's, want 2 (one per reader)", len(tasks))
	}
	for _, task := range tasks {
		batches := children(task, fanout.SpanBatch)
		if len(batches) != 1 || len(children(batches[0], fanout.SpanInboxWrite)) != 1 {
			t.Fatalf("task span: %d batches, want 1 with one inbox write", len(batches))
		}
	}
	if n := len(named(fanout.SpanFanout + models.EventPostCreated)); n != 1 {
		t.Errorf("%d post_created spans, want 1: the untraced post's handling makes none", n)
	}

	// The stream entries: the traced post's carry a traceparent, the
	// untraced post's do not, as those of an earlier version.
	entries, err := te.redis.XRange(context.Background(), te.keys.Stream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	withTrace := map[bool]int{}
	for _, m := range entries {
		if m.Values["kind"] == models.EventPostCreated {
			_, ok := m.Values[fanout.TraceField]
			withTrace[ok]++
		}
	}
	if withTrace[true] != 1 || withTrace[false] != 1 {
		t.Errorf("post_created stream entries with and without %s: %v, want one of each", fanout.TraceField, withTrace)
	}
}
