package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"feedservice/api/extensions"
	"feedservice/internal/apperr"
	"feedservice/resolvers"
)

// eventTurnWait is how long a subscription's event waits for a place
// among the operations in flight (its client's, or the instance's) before
// the subscription is ended with RATE_LIMITED: an event is the server's
// work, not a request a client can be told to send again, so it waits
// where a query would be refused at once.
const eventTurnWait = 10 * time.Second

// subscriptionEvents is the extension that prices what a subscription
// runs: its selection, on every event. Each event, before it is prepared
// and run, spends the subscription's price from its viewer's complexity
// budget (COMPLEXITY_RATE) and waits for a place of the operation gate,
// which it holds until its answer is made; a subscription whose event
// the budget refuses is ended with that RATE_LIMITED error. The
// subscription itself was priced once when it began (extensions.ComplexityBudget),
// at most MaxSubscriptionComplexity (extensions.ComplexityLimit).
type subscriptionEvents struct {
	gate    *operationGate
	budget  extensions.ComplexityBudget
	present graphql.ErrorPresenterFunc
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = subscriptionEvents{}

func (subscriptionEvents) ExtensionName() string                   { return "SubscriptionEvents" }
func (subscriptionEvents) Validate(graphql.ExecutableSchema) error { return nil }

func (e subscriptionEvents) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Subscription {
		return next(ctx)
	}
	turn := &eventTurn{events: e, price: extensions.OperationPrice(ctx), asked: make(chan struct{}, 1)}
	ctx = resolvers.WithEventGate(ctx, turn)
	responses := next(context.WithValue(ctx, eventTurnKey{}, turn))
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if ctx.Err() != nil {
			// The client completed the subscription (or its socket
			// closed): what its resolver made of the cancelled context
			// ("request cancelled") is no error of the server's, and no
			// one reads it.
			return nil
		}
		return res
	}
}

// InterceptResponse asks the subscription's next event (the resolver's
// gate lets it through only now: an event waits for its turn outside the
// gate, not holding a place) and, once its answer is made, gives back the
// place it held.
func (e subscriptionEvents) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	turn, ok := ctx.Value(eventTurnKey{}).(*eventTurn)
	if !ok {
		return next(ctx)
	}
	select {
	case turn.asked <- struct{}{}:
	default:
	}
	defer turn.Cancel()
	return next(ctx)
}

type eventTurnKey struct{}

// eventTurn is one subscription's resolvers.EventGate.
type eventTurn struct {
	events subscriptionEvents
	price  int
	// asked carries the transport's request for the next answer.
	asked chan struct{}

	mu    sync.Mutex
	leave func() // the held place's, until the event's answer is made
}

var _ resolvers.EventGate = (*eventTurn)(nil)

// Wait waits until the transport asks for the next answer, then spends
// the event's price and takes a place of the gate, waiting for one up to
// eventTurnWait.
func (t *eventTurn) Wait(ctx context.Context) error {
	select {
	case <-t.asked:
	case <-ctx.Done():
		return ctx.Err()
	}
	if refusal := t.events.budget.Spend(ctx, t.price); refusal != nil {
		refusal.Message = fmt.Sprintf("the subscription has spent its viewer's complexity budget (COMPLEXITY_RATE, %d per %s): each event costs its price, %d; subscribe again later",
			t.events.budget.Rate.Count, t.events.budget.Rate.Period, t.price)
		return t.end(ctx, refusal)
	}
	deadline := time.Now().Add(eventTurnWait)
	for {
		leave, refusedBy := t.events.gate.enter(ctx)
		if refusedBy == "" {
			t.mu.Lock()
			t.leave = leave
			t.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return t.end(ctx, t.events.gate.refusal(refusedBy, 0))
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Cancel gives back the place the event held, if any.
func (t *eventTurn) Cancel() {
	t.mu.Lock()
	leave := t.leave
	t.leave = nil
	t.mu.Unlock()
	if leave != nil {
		leave()
	}
}

// end tells the client why its subscription ends, in the error message
// that ends it.
func (t *eventTurn) end(ctx context.Context, refusal *apperr.Error) error {
	transport.AddSubscriptionError(ctx, t.events.present(ctx, refusal))
	return refusal
}
