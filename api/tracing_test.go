package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
	"feedservice/store/storetest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes the protobuf
// export requests the servers send to /v1/traces and keeps their spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []receivedSpan
}

// receivedSpan is a span as received, with the service that sent it.
type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func (s receivedSpan) id() string     { return hex.EncodeToString(s.span.SpanId) }
func (s receivedSpan) parent() string { return hex.EncodeToString(s.span.ParentSpanId) }
func (s receivedSpan) trace() string  { return hex.EncodeToString(s.span.TraceId) }

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.NotFound(w, req)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var export coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &export); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.ResourceSpans {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans = append(r.spans, receivedSpan{service, s})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// received is a copy of the spans received so far.
func (r *otlpReceiver) received() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// traceOf is the spans of trace id.
func traceOf(spans []receivedSpan, id string) []receivedSpan {
	var out []receivedSpan
	for _, s := range spans {
		if s.trace() == id {
			out = append(out, s)
		}
	}
	return out
}

func spansNamed(spans []receivedSpan, name string) []receivedSpan {
	var out []receivedSpan
	for _, s := range spans {
		if s.span.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func childrenOf(spans []receivedSpan, parent receivedSpan) []receivedSpan {
	var out []receivedSpan
	for _, s := range spans {
		if s.parent() == parent.id() {
			out = append(out, s)
		}
	}
	return out
}

// ancestors are the names of span's ancestors in spans, nearest first.
func ancestors(spans []receivedSpan, span receivedSpan) []string {
	byID := map[string]receivedSpan{}
	for _, s := range spans {
		byID[s.id()] = s
	}
	var names []string
	for p, ok := byID[span.parent()]; ok && len(names) < len(spans); p, ok = byID[p.parent()] {
		names = append(names, p.span.Name)
	}
	return names
}

// TestTracingAcrossInstances runs two server processes with tracing on
// (OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP receiver in this test)
// on one MariaDB and Redis. An author posts on instance a; two readers,
// whose feeds and unreadCount subscriptions are on instance b, get the
// post. The post's trace is one trace across both instances: the HTTP
// request, the GraphQL mutation and its resolver, its SQL statements, the
// outbox dispatch (a child of the mutation, through the outbox row), the
// worker's handling of the event (through the stream entry), one batch per
// reader (FANOUT_BATCH=1, through the task entries) and in each the inbox
// write, whose Redis script publishes the reader's unread count.
func TestTracingAcrossInstances(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	receiver := newOTLPReceiver(t)
	bin := buildServer(t)
	dsn := storetest.MySQL(t)
	_, prefix := testenv.Redis(t)
	env := []string{"MYSQL_DSN=" + dsn, "REDIS_ADDR=" + testenv.RedisAddr(), "KEY_PREFIX=" + prefix,
		"TOKEN_SECRET=test-secret-test-secret-test-secret!", "BCRYPT_COST=4", "FEED_MODE=push", "FANOUT_BATCH=1",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_TRACES_SAMPLER=parentbased_always_on",
		"TRACE_TRUSTED_CALLERS=127.0.0.1/32,::1/128"} // the feed page below is sent as a trusted gateway would
	a := startServerProcess(t, bin, append(env, "OTEL_SERVICE_NAME=feed-a")...)
	b := startServerProcess(t, bin, append(env, "OTEL_SERVICE_NAME=feed-b")...)

	type user struct{ id, token string }
	signUp := func(url, name string) user {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		mustRawDo(t, url, "", `mutation($u: String!, $p: String!) { signUp(input: {username: $u, password: $p}) { token user { id } } }`,
			map[string]any{"u": name, "p": "password-" + name}, &out)
		return user{out.SignUp.User.ID, out.SignUp.Token}
	}
	author := signUp(a.URL, "author")
	var sockets []*liveConn
	var subs []string
	var readers []user
	for _, name := range []string{"reader0", "reader1"} {
		r := signUp(b.URL, name)
		readers = append(readers, r)
		mustRawDo(t, b.URL, r.token, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": author.id}, nil)
		// An inbox, so that the fan-out (not a rebuild) brings the post.
		mustRawDo(t, b.URL, r.token, `{ feed(first: 5) { edges { cursor } } }`, nil, nil)
		c := liveConnect(t, &testServer{URL: b.URL}, liveTransportWS, r.token)
		c.autoPong.Store(true)
		sub := c.subscribe(liveUnreadSub)
		if n := c.firstCount(sub, testenv.Scale(5*time.Second), name); n != 0 {
			t.Fatalf("%s: first unreadCount %d, want 0", name, n)
		}
		sockets, subs = append(sockets, c), append(subs, sub)
	}

	mustRawDo(t, a.URL, author.token, createPostMutation, map[string]any{"b": "traced across instances"}, nil)
	for i, c := range sockets {
		c.expectCount(subs[i], 1, 10*time.Second, fmt.Sprintf("reader%d on instance b", i))
	}

	// The spans arrive in each instance's exporter batches, in no order
	// between the instances: wait until the post's trace holds every span
	// the checks below name (a span ends after its children of the same
	// instance, so those came in the same batch or before).
	var spans []receivedSpan
	complete := func(spans []receivedSpan) bool {
		for name, n := range map[string]int{"POST /query": 1, "outbox dispatch": 1, "fanout post_created": 1, "fanout task": 2} {
			if len(spansNamed(spans, name)) < n {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(testenv.Scale(15 * time.Second))
	for {
		all := receiver.received()
		if m := spansNamed(all, "mutation createPost"); len(m) == 1 {
			spans = traceOf(all, m[0].trace())
			if complete(spans) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the post's trace is incomplete within %s; spans received:\n%s",
				testenv.Scale(15*time.Second), waterfall(spans))
		}
		time.Sleep(50 * time.Millisecond)
	}

	one := func(name string) receivedSpan {
		t.Helper()
		s := spansNamed(spans, name)
		if len(s) != 1 {
			t.Fatalf("%d spans %q in the trace, want 1:\n%s", len(s), name, waterfall(spans))
		}
		return s[0]
	}
	parentIs := func(child, parent receivedSpan) {
		t.Helper()
		if child.parent() != parent.id() {
			t.Errorf("span %q (%s) has parent %s, want %q (%s)", child.span.Name, child.service, child.parent(), parent.span.Name, parent.id())
		}
	}
	httpSpan := one("POST /query")
	if httpSpan.service != "feed-a" || len(httpSpan.span.ParentSpanId) != 0 || httpSpan.span.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("HTTP span: service %q, parent %x, kind %v; want feed-a's root server span", httpSpan.service, httpSpan.span.ParentSpanId, httpSpan.span.Kind)
	}
	operation := one("mutation createPost")
	parentIs(operation, httpSpan)
	resolver := one("Mutation.createPost")
	parentIs(resolver, operation)
	var sql []string
	for _, s := range childrenOf(spans, resolver) {
		if s.span.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			sql = append(sql, s.span.Name)
		}
	}
	if !slices.Contains(sql, "insert posts") || !slices.Contains(sql, "insert outbox_events") {
		t.Errorf("the resolver's client spans are %q, want its SQL statements (insert posts, insert outbox_events)", sql)
	}
	dispatch := one("outbox dispatch")
	parentIs(dispatch, resolver)
	event := one("fanout post_created")
	parentIs(event, dispatch)
	tasks := spansNamed(spans, "fanout task")
	if len(tasks) != 2 {
		t.Fatalf("%d fanout task spans, want 2 (one per reader):\n%s", len(tasks), waterfall(spans))
	}
	// The event's stream entry is acknowledged once its tasks are done; the
	// tasks ran in the worker that took it (in parallel), not as entries.
	if acks := spansNamed(childrenOf(spans, event), "xack"); len(acks) != 1 {
		t.Errorf("event %s has children %v, want one xack:\n%s", event.id(), names(childrenOf(spans, event)), waterfall(spans))
	}
	for _, task := range tasks {
		parentIs(task, event)
		batches := spansNamed(childrenOf(spans, task), "fanout batch")
		if len(batches) != 1 || len(spansNamed(childrenOf(spans, task), "xack")) != 0 {
			t.Fatalf("task %s has children %v, want one fanout batch and no xack (it was no stream entry):\n%s", task.id(), names(childrenOf(spans, task)), waterfall(spans))
		}
		var writes []receivedSpan
		for _, s := range childrenOf(spans, batches[0]) {
			if s.span.Name == "inbox write" {
				writes = append(writes, s)
			}
		}
		if len(writes) != 1 {
			t.Fatalf("batch %s has %d inbox writes, want 1:\n%s", batches[0].id(), len(writes), waterfall(spans))
		}
		// The write's Redis pipeline adds the entry by plain commands (ZADD
		// NX and EXPIRE NX, no script: issue 40), then the readers' new
		// unread counts are published to their instances.
		redisSpans := childrenOf(spans, writes[0])
		if !slices.ContainsFunc(redisSpans, func(s receivedSpan) bool {
			return s.span.Kind == tracepb.Span_SPAN_KIND_CLIENT && strings.HasPrefix(s.span.Name, "redis.pipeline zadd expire")
		}) || len(spansNamed(redisSpans, "publish")) == 0 {
			t.Errorf("inbox write has children %v, want its Redis pipeline (redis.pipeline zadd expire) and a publish", names(redisSpans))
		}
	}
	for _, s := range spans {
		if s.service != "feed-a" && s.service != "feed-b" {
			t.Errorf("span %q from service %q", s.span.Name, s.service)
		}
	}
	// No span of the background loops' polls made a trace of its own.
	for _, s := range receiver.received() {
		if len(s.span.ParentSpanId) == 0 && s.span.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("a lone client span %q (%s) was exported", s.span.Name, s.service)
		}
	}
	t.Logf("the post's trace:\n%s", waterfall(spans))

	// A reader's feed page, sent with a client's traceparent: its spans
	// continue the client's trace, and the fast executor runs the resolver
	// fields (and only those) in spans, under the operation's.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"query":"query ReaderFeed { feed(first: 5) { unreadCount edges { node { post { id body author { id username } } } } } }"}`
	req, _ := http.NewRequest(http.MethodPost, b.URL+"/query", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+readers[0].token)
	req.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "traced across instances") {
		t.Fatalf("feed page: %d %s", res.StatusCode, page)
	}
	deadline = time.Now().Add(testenv.Scale(15 * time.Second))
	for spans = nil; len(spansNamed(spans, "Post.author")) == 0 || len(spansNamed(spans, "POST /query")) == 0; spans = traceOf(receiver.received(), clientTrace) {
		if time.Now().After(deadline) {
			t.Fatalf("the feed page's trace is incomplete within %s:\n%s", testenv.Scale(15*time.Second), waterfall(spans))
		}
		time.Sleep(50 * time.Millisecond)
	}
	httpSpan = one("POST /query")
	if httpSpan.parent() != clientSpan || httpSpan.service != "feed-b" {
		t.Errorf("the page's HTTP span has parent %s on %s, want the client's span %s on feed-b", httpSpan.parent(), httpSpan.service, clientSpan)
	}
	operation = one("query ReaderFeed")
	parentIs(operation, httpSpan)
	feedField := one("Query.feed")
	parentIs(feedField, operation)
	parentIs(one("FeedConnection.unreadCount"), feedField)
	parentIs(one("Post.author"), feedField)
	for _, plain := range []string{"Post.id", "Post.body", "User.username", "FeedEdge.node"} {
		if n := len(spansNamed(spans, plain)); n != 0 {
			t.Errorf("%d spans of the plain field %s, want none", n, plain)
		}
	}
	t.Logf("a feed page's trace:\n%s", waterfall(spans))
}

func names(spans []receivedSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.span.Name)
	}
	return out
}

// waterfall draws spans as a text waterfall: one line per span, indented
// under its parent, with its service, start offset and duration, and a bar
// on the trace's time line.
func waterfall(spans []receivedSpan) string {
	if len(spans) == 0 {
		return "(no spans)\n"
	}
	const barWidth = 40
	start, end := spans[0].span.StartTimeUnixNano, spans[0].span.EndTimeUnixNano
	ids := map[string]bool{}
	for _, s := range spans {
		start, end = min(start, s.span.StartTimeUnixNano), max(end, s.span.EndTimeUnixNano)
		ids[s.id()] = true
	}
	total := max(end-start, 1)
	children := map[string][]receivedSpan{}
	var roots []receivedSpan
	for _, s := range spans {
		if ids[s.parent()] {
			children[s.parent()] = append(children[s.parent()], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b receivedSpan) int {
		return int(int64(a.span.StartTimeUnixNano) - int64(b.span.StartTimeUnixNano))
	}
	var out bytes.Buffer
	var draw func(s receivedSpan, depth int)
	draw = func(s receivedSpan, depth int) {
		from := int((s.span.StartTimeUnixNano - start) * barWidth / total)
		to := max(int((s.span.EndTimeUnixNano-start)*barWidth/total), from+1)
		bar := strings.Repeat(" ", from) + strings.Repeat("█", min(to, barWidth)-from)
		name := strings.Repeat("  ", depth) + s.span.Name
		fmt.Fprintf(&out, "%-40s %-7s %8.1fms %8.1fms |%-*s|\n", name, s.service,
			float64(s.span.StartTimeUnixNano-start)/1e6, float64(s.span.EndTimeUnixNano-s.span.StartTimeUnixNano)/1e6,
			barWidth, bar)
		kids := children[s.id()]
		slices.SortFunc(kids, byStart)
		for _, k := range kids {
			draw(k, depth+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		draw(r, 0)
	}
	return out.String()
}

// TestTracingOffByDefault: without OTEL_EXPORTER_OTLP_ENDPOINT (or with
// OTEL_SDK_DISABLED=true) tracing is off; either endpoint variable turns it
// on.
func TestTracingOffByDefault(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := tracingEnabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("tracingEnabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestRequestLogsCarryTraceID: a line logged with a request's context
// names the request id and, when the request is traced, its trace and span
// ids.
func TestRequestLogsCarryTraceID(t *testing.T) {
	var buf bytes.Buffer
	log := withRequestIDLogs(slog.New(slog.NewJSONHandler(&buf, nil)))
	ctx := context.WithValue(context.Background(), requestIDKey{}, "req-1")
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled,
	})
	log.InfoContext(trace.ContextWithSpanContext(ctx, sc), "traced")
	log.InfoContext(ctx, "untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %q", buf.String())
	}
	for _, want := range []string{`"request_id":"req-1"`, `"trace_id":"` + sc.TraceID().String() + `"`, `"span_id":"` + sc.SpanID().String() + `"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("traced line %s lacks %s", lines[0], want)
		}
	}
	if strings.Contains(lines[1], "trace_id") || !strings.Contains(lines[1], `"request_id":"req-1"`) {
		t.Errorf("untraced line %s: want its request id and no trace id", lines[1])
	}
}

// TestTracingFollowsOurSampler: a traceparent header from a caller that
// TRACE_TRUSTED_CALLERS does not name neither decides sampling nor becomes
// the parent of the request's span. With the sampler at ratio 0, a post
// sent flagged sampled is not traced and its outbox event keeps no trace;
// under the default sampler, one flagged unsampled is traced, in a trace
// of our own that links the client's span, and its outbox event keeps our
// trace id. From a trusted caller the client's span is the parent.
func TestTracingFollowsOurSampler(t *testing.T) {
	receiver := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	// post sends a post with the client's traceparent flagged flags and
	// returns the traceparent its outbox event keeps, once the server's
	// spans are exported.
	post := func(t *testing.T, s *testServer, body, flags string) string {
		t.Helper()
		author := s.signUp(t, "author")
		author.Header = http.Header{"Traceparent": {"00-" + clientTrace + "-" + clientSpan + "-" + flags}}
		author.mustDo(t, createPostMutation, map[string]any{"b": body}, nil)
		var stored []string
		if err := s.app.store.DB().Table("outbox_events").Where("kind = ?", "post_created").Pluck("trace_parent", &stored).Error; err != nil {
			t.Fatal(err)
		}
		if len(stored) != 1 {
			t.Fatalf("%d post_created events, want 1", len(stored))
		}
		if err := s.app.tracer.(interface{ ForceFlush(context.Context) error }).ForceFlush(t.Context()); err != nil {
			t.Fatal(err)
		}
		return stored[0]
	}
	httpSpans := func() []receivedSpan { return spansNamed(receiver.received(), "POST /query") }
	linksClient := func(s receivedSpan) bool {
		for _, l := range s.span.Links {
			if hex.EncodeToString(l.TraceId) == clientTrace && hex.EncodeToString(l.SpanId) == clientSpan {
				return true
			}
		}
		return false
	}

	t.Run("untrusted, flagged sampled, ratio 0", func(t *testing.T) {
		t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0")
		s := newTestServer(t, backendReal)
		if stored := post(t, s, "forced sampling", "01"); stored != "" {
			t.Errorf("the outbox event keeps traceparent %q, want none (not sampled)", stored)
		}
		if spans := traceOf(receiver.received(), clientTrace); len(spans) != 0 {
			t.Errorf("the client's trace has %d spans, want none:\n%s", len(spans), waterfall(spans))
		}
	})
	t.Run("untrusted, flagged unsampled, default sampler", func(t *testing.T) {
		s := newTestServer(t, backendReal)
		before := len(httpSpans())
		stored := post(t, s, "opted out", "00")
		spans := httpSpans()[before:]
		var mutation []receivedSpan
		for _, sp := range spans {
			if linksClient(sp) {
				mutation = append(mutation, sp)
			}
		}
		if len(mutation) != 1 {
			t.Fatalf("%d HTTP spans linking the client's span, want 1 (of %d HTTP spans)", len(mutation), len(spans))
		}
		ours := mutation[0]
		if ours.trace() == clientTrace || len(ours.span.ParentSpanId) != 0 {
			t.Errorf("the request's span is in trace %s with parent %s; want a root of a trace of ours", ours.trace(), ours.parent())
		}
		if !strings.Contains(stored, ours.trace()) || strings.Contains(stored, clientTrace) {
			t.Errorf("the outbox event keeps traceparent %q, want one of our trace %s", stored, ours.trace())
		}
	})
	t.Run("trusted caller", func(t *testing.T) {
		s := newTestServer(t, backendReal, func(c *settings.Settings) {
			c.TraceTrustedCallers = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
		})
		before := len(httpSpans())
		stored := post(t, s, "from the gateway", "01")
		var adopted []receivedSpan
		for _, sp := range httpSpans()[before:] {
			if sp.trace() == clientTrace && sp.parent() == clientSpan {
				adopted = append(adopted, sp)
			}
		}
		if len(adopted) != 1 {
			t.Fatalf("%d HTTP spans whose parent is the client's span, want 1", len(adopted))
		}
		if !strings.Contains(stored, clientTrace) {
			t.Errorf("the outbox event keeps traceparent %q, want one of the caller's trace %s", stored, clientTrace)
		}
	})
}

// TestTraceTrustedCallers: TRACE_TRUSTED_CALLERS takes a comma list of
// addresses and CIDRs, refuses what is neither, and names callers by their
// socket's address (an IPv4 address mapped into IPv6 as itself), never by
// X-Forwarded-For.
func TestTraceTrustedCallers(t *testing.T) {
	t.Setenv("TRACE_TRUSTED_CALLERS", "10.0.0.0/8, 192.168.1.7")
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TraceTrustedCallers) != 2 {
		t.Fatalf("TRACE_TRUSTED_CALLERS read as %v", c.TraceTrustedCallers)
	}
	for _, tc := range []struct {
		remote, forwardedFor string
		trusted              bool
	}{
		{"10.1.2.3:5555", "", true},
		{"192.168.1.7:80", "", true},
		{"[::ffff:10.1.2.3]:5555", "", true},
		{"192.168.1.8:80", "", false},
		{"11.0.0.1:1234", "10.1.2.3", false},
		{"[2001:db8::1]:443", "", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		r.RemoteAddr = tc.remote
		if tc.forwardedFor != "" {
			r.Header.Set("X-Forwarded-For", tc.forwardedFor)
		}
		if got := isTrustedCaller(r, c.TraceTrustedCallers); got != tc.trusted {
			t.Errorf("a caller at %s (X-Forwarded-For %q): trusted %v, want %v", tc.remote, tc.forwardedFor, got, tc.trusted)
		}
	}
	t.Setenv("TRACE_TRUSTED_CALLERS", "gateway")
	if _, err := parseConfig(nil); err == nil || !strings.Contains(err.Error(), "trace-trusted-callers") {
		t.Fatalf("TRACE_TRUSTED_CALLERS=gateway: error %v, want one naming the setting", err)
	}
}
