package extensions

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
)

// A query runs while its price is spent, so that the answer does not wait
// for Redis; a query the budget refuses so answers RATE_LIMITED alone. Its
// subject's next queries wait for their price, and run only if it is
// spent; a mutation always waits.
func TestComplexityBudgetRunsAQueryWhileItsPriceIsSpent(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	var seq, answered atomic.Int64 // a clock of events; when the last budget call was answered
	rdb.AddHook(testenv.AfterEachCommand(func(c redis.Cmder) {
		if isBudgetCall(c) {
			answered.Store(seq.Add(1))
		}
	}))
	const price = 10
	b := ComplexityBudget{
		Limiter:        ratelimit.New(rdb, prefix, prometheus.NewRegistry(), time.Minute, 100, slog.New(slog.NewTextHandler(io.Discard, nil))),
		Rate:           ratelimit.Rate{Count: 2 * price, Period: time.Hour},
		Limit:          "complexity",
		Subject:        func(ctx context.Context) string { return ctx.Value(subjectKey{}).(string) },
		NoteRetryAfter: func(context.Context, int) {},
		Present:        func(_ context.Context, err error) *gqlerror.Error { return &gqlerror.Error{Message: err.Error()} },
		Refused:        &RecentRefusals{},
	}
	// run runs an operation of kind by subject through the budget, with
	// its budget call held by hold (unless nil) until it has run or the
	// call is waiting, and says when it ran on seq's clock (0: it did not).
	run := func(subject string, kind ast.Operation, hold *testenv.Hold) (resp *graphql.Response, ranAt int64) {
		t.Helper()
		op := &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: kind}}
		op.Stats.SetExtension(complexityStats, price)
		ctx := context.WithValue(graphql.WithOperationContext(context.Background(), op), subjectKey{}, subject)
		ran := make(chan struct{})
		next := func(ctx context.Context) graphql.ResponseHandler {
			return graphql.OneShot(&graphql.Response{Data: []byte(`{"ok":true}`)})
		}
		executed := func(ctx context.Context) graphql.ResponseHandler {
			h := next(ctx)
			return func(ctx context.Context) *graphql.Response {
				ranAt = seq.Add(1)
				close(ran)
				return h(ctx)
			}
		}
		done := make(chan *graphql.Response, 1)
		go func() { done <- b.InterceptOperation(ctx, executed)(ctx) }()
		if hold != nil {
			select {
			case <-hold.Held():
			case <-ran:
			}
			if kind == ast.Query && !b.Refused.Lately(subject) {
				// It runs, with its price not spent yet.
				select {
				case <-ran:
				case <-time.After(testenv.Scale(10 * time.Second)):
					t.Fatalf("%s's query did not run while its budget call was held", subject)
				}
			}
			hold.Release()
		}
		select {
		case resp = <-done:
		case <-time.After(testenv.Scale(10 * time.Second)):
			t.Fatalf("%s's %s was not answered", subject, kind)
		}
		return resp, ranAt
	}
	holdBudget := func() *testenv.Hold {
		h := testenv.HoldCommands(isBudgetCall)
		rdb.AddHook(h)
		t.Cleanup(h.Release)
		return h
	}

	resp, ranAt := run("ann", ast.Query, holdBudget())
	if len(resp.Errors) > 0 || ranAt == 0 || ranAt > answered.Load() {
		t.Fatalf("ann's first query: %+v, ran at %d, the budget answered at %d: want data, run before the answer", resp, ranAt, answered.Load())
	}
	if resp, _ := run("ann", ast.Query, nil); len(resp.Errors) > 0 {
		t.Fatalf("ann's second query, within the budget: %+v", resp.Errors)
	}
	resp, ranAt = run("ann", ast.Query, nil)
	if len(resp.Errors) != 1 || resp.Data != nil || !strings.Contains(resp.Errors[0].Message, "COMPLEXITY_RATE") {
		t.Fatalf("ann's third query, past the budget: %+v, want RATE_LIMITED alone, no data", resp)
	}
	if ranAt == 0 {
		t.Error("ann's third query did not run: it should have, while its price was spent")
	}
	if !b.Refused.Lately("ann") {
		t.Fatal("ann is not among the subjects refused lately")
	}
	resp, ranAt = run("ann", ast.Query, holdBudget())
	if len(resp.Errors) != 1 || ranAt != 0 {
		t.Fatalf("ann's fourth query, refused lately: %+v, ran at %d; want refused, and never run", resp, ranAt)
	}
	resp, ranAt = run("bob", ast.Mutation, holdBudget())
	if len(resp.Errors) > 0 || ranAt <= answered.Load() {
		t.Fatalf("bob's mutation: %+v, ran at %d, the budget answered at %d: want it run after the answer", resp, ranAt, answered.Load())
	}
}

type subjectKey struct{}

// isBudgetCall says whether c is the rate limiter's script call.
func isBudgetCall(c redis.Cmder) bool {
	name := c.Name()
	return name == "evalsha" || name == "eval" || name == "evalsha_ro" || name == "eval_ro"
}

// Subjects refused lately are kept until their retryAfter has passed, at
// least a second, and at most MaxRecentRefusals at once: past that, every
// subject counts as refused lately until some are let go.
func TestRecentRefusals(t *testing.T) {
	var r RecentRefusals
	if r.Lately("ann") {
		t.Fatal("ann refused lately before any refusal")
	}
	r.Note("ann", time.Hour)
	r.Note("bob", -time.Hour) // at least a second
	if !r.Lately("ann") || !r.Lately("bob") || r.Lately("cat") {
		t.Fatal("want ann and bob refused lately, cat not")
	}
	r.mu.Lock()
	r.until["bob"] = time.Now().Add(-time.Millisecond)
	for i := len(r.until); i < MaxRecentRefusals; i++ {
		r.until[fmt.Sprint("user", i)] = time.Now().Add(time.Hour)
	}
	r.mu.Unlock()
	if !r.Lately("cat") {
		t.Fatal("with MaxRecentRefusals kept, cat should count as refused lately")
	}
	r.Note("dan", time.Hour) // lets bob go, whose time has passed
	r.mu.Lock()
	_, bob := r.until["bob"]
	_, dan := r.until["dan"]
	n := len(r.until)
	r.mu.Unlock()
	if bob || !dan || n > MaxRecentRefusals {
		t.Errorf("a refusal with the set full: bob (passed) kept %v, dan kept %v, %d kept; want bob let go, dan kept, at most %d", bob, dan, n, MaxRecentRefusals)
	}
	r.Note("eve", time.Hour) // full, and nothing has passed: not kept
	if r.mu.Lock(); len(r.until) > MaxRecentRefusals {
		t.Errorf("the set grew past MaxRecentRefusals: %d", len(r.until))
	}
	r.mu.Unlock()
}
