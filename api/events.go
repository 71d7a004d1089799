package api

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
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
// budget (COMPLEXITY_RATE), through the lease its viewer's subscriptions
// on this instance share (eventLeases), and waits for a place of the
// operation gate, which it holds until its answer is made; a subscription
// whose event the budget refuses is ended with that RATE_LIMITED error.
// The subscription itself was priced once when it began
// (extensions.ComplexityBudget), at most MaxSubscriptionComplexity
// (extensions.ComplexityLimit).
type subscriptionEvents struct {
	gate    *operationGate
	budget  extensions.ComplexityBudget
	leases  *eventLeases
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
	price := extensions.OperationPrice(ctx)
	turn := &eventTurn{events: e, price: price, asked: make(chan struct{}, 1),
		lease: e.leases.join(ctx, eventLeaseKey{subject: e.budget.Subject(ctx), price: price})}
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
	lease  *eventLease
	// asked carries the transport's request for the next answer.
	asked chan struct{}

	mu    sync.Mutex
	leave func() // the held place's, until the event's answer is made
}

var _ resolvers.EventGate = (*eventTurn)(nil)

// Wait waits until the transport asks for the next answer, then spends
// the event's price from its viewer's lease (eventLease.spend, which asks
// Redis only when the lease is spent) and takes a place of the gate,
// waiting for one up to eventTurnWait.
func (t *eventTurn) Wait(ctx context.Context) error {
	select {
	case <-t.asked:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := t.lease.spend(ctx, t.events.budget, t.price, t.events.leases.events); err != nil {
		var refusal *apperr.Error
		if !errors.As(err, &refusal) {
			return err
		}
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

// eventLeases are the events that the complexity budgets of the viewers
// with subscriptions open on this instance have paid for and not yet run,
// by viewer and price. An event spends its price from its viewer's lease,
// and only a spent lease goes back to Redis, for the price of up to events
// events (SUBSCRIPTION_EVENT_LEASE) at once, as many as the budget holds:
// so when an author posts, its connected followers' dots wait on Redis
// once in events counts, not for each count, and Redis, which the fan-out
// writes to, answers one budget call per events counts a viewer is sent.
//
// Paid ahead, an event never runs unpaid, but the budget's refusal may
// come late: a viewer whose budget is spent by other operations still
// runs, on each instance, the events its lease has left, at most events-1,
// before the next lease is refused with the same RATE_LIMITED as an event
// paid alone; and those other operations may be refused as much early,
// the lease having spent it ahead. The viewer's subscriptions of one price
// on the instance spend from one lease, so the bound is per viewer,
// instance and price, not per subscription. A lease the budget cuts short
// also spends the fraction of an event the budget had left
// (ratelimit.Limiter.AllowAtMost).
//
// A lease still holding events when the viewer's last subscription of its
// price on the instance ends is dropped, not given back: its price stays
// spent, and the budget refills it as it refills any operation's price,
// within events x price / COMPLEXITY_RATE's count of its period (for
// unreadCount at the defaults, 16 x 20 of 300,000 a minute: about 64 ms).
// Giving it back would cost a
// call to Redis at every end of a subscription (all of an instance's at
// once when it restarts) to return less than one lease, and redis_rate
// has no call for it.
type eventLeases struct {
	events int // events a lease pays for at most: SUBSCRIPTION_EVENT_LEASE

	mu   sync.Mutex
	held map[eventLeaseKey]*eventLease
}

// eventLeaseKey names a lease: its viewer's budget (the budget's subject)
// and the price of an event it pays for.
type eventLeaseKey struct {
	subject string
	price   int
}

// eventLease is the events one viewer's budget paid for at one price.
type eventLease struct {
	subscriptions int // open and spending from it; under eventLeases.mu

	// mu is held across the call to Redis for a new lease, so that the
	// viewer's other subscriptions wait for it, then spend from it,
	// rather than each asking Redis for one.
	mu    sync.Mutex
	left  int // events paid for and not yet run
	first int // events the lease's first call pays for (firstLease); 0 once made
}

// firstLease is how many events a viewer's first lease at a price pays
// for: 1 to events, spread over viewers by their subject. Were every
// first lease full, the followers of a big author, who subscribed at
// about the same time, would all spend theirs at the same count and all
// call Redis for the next at once, every events counts; staggered, about
// one in events of them calls at each count. The refusal is no later for
// it: a first lease is no longer than the others.
func firstLease(subject string, events int) int {
	if events <= 1 {
		return events
	}
	h := fnv.New32a()
	h.Write([]byte(subject))
	return 1 + int(h.Sum32()%uint32(events))
}

// join is the lease of key, shared with the viewer's other subscriptions
// of the price on this instance, until ctx (the subscription's) ends.
func (l *eventLeases) join(ctx context.Context, key eventLeaseKey) *eventLease {
	l.mu.Lock()
	defer l.mu.Unlock()
	lease := l.held[key]
	if lease == nil {
		if l.held == nil {
			l.held = map[eventLeaseKey]*eventLease{}
		}
		lease = &eventLease{first: firstLease(key.subject, l.events)}
		l.held[key] = lease
	}
	lease.subscriptions++
	context.AfterFunc(ctx, func() { l.leave(key) })
	return lease
}

// leave is the end of a subscription of key's: the last one's drops the lease.
func (l *eventLeases) leave(key eventLeaseKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lease := l.held[key]; lease != nil {
		if lease.subscriptions--; lease.subscriptions <= 0 {
			delete(l.held, key)
		}
	}
}

// spend spends one event of price from the lease, first leasing up to
// events more (the first time, the lease's first) from budget when none
// is left: the budget's RATE_LIMITED
// refusal when it holds not one, or ctx's error when it ended first.
func (l *eventLease) spend(ctx context.Context, budget extensions.ComplexityBudget, price, events int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left == 0 {
		if l.first != 0 {
			events = l.first
		}
		leased, refusal := budget.Lease(ctx, price, events)
		if refusal != nil {
			return refusal
		}
		if leased == 0 { // no refusal: ctx ended before Redis answered
			return fmt.Errorf("lease of the complexity budget: %w", context.Cause(ctx))
		}
		l.left, l.first = leased, 0
	}
	l.left--
	return nil
}
