package sockets

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/internal/apperr"
	"feedservice/internal/ratelimit"
)

// What one websocket may send, beside its operations in flight
// (MaxOperationsPerSocket): subscription starts (WS_SUBSCRIBE_RATE) and
// pings (WS_PING_RATE), each a budget of the socket's own, in process. A
// start and a ping cost the server work whatever they ask for: a loop of
// subscribe and complete, or of pings, ran free before.
type socketRates struct {
	subscribe, ping ratelimit.Rate
	subscribes      ratelimit.Local
	pings           ratelimit.Local
}

// SubscriptionStarts refuses a subscription started on a websocket past
// its WS_SUBSCRIBE_RATE with RATE_LIMITED and retryAfter, before it is
// priced or spends anything. It runs in the socket's reader, so the start
// is counted even when the client completes it at once.
type SubscriptionStarts struct {
	Present graphql.ErrorPresenterFunc
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = SubscriptionStarts{}

func (SubscriptionStarts) ExtensionName() string                   { return "SubscriptionStarts" }
func (SubscriptionStarts) Validate(graphql.ExecutableSchema) error { return nil }

func (e SubscriptionStarts) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	s := SessionOf(ctx)
	if s == nil || s.conn == nil || op.Operation == nil || op.Operation.Operation != ast.Subscription {
		return nil
	}
	rate := s.conn.rates.subscribe
	wait := s.conn.rates.subscribes.Allow(rate, time.Now())
	if wait <= 0 {
		return nil
	}
	refusal := &apperr.Error{Code: apperr.CodeRateLimited, RetryAfter: wait,
		Message: fmt.Sprintf("too many subscriptions started on this websocket: at most %d per %s (WS_SUBSCRIBE_RATE); retry later", rate.Count, rate.Period)}
	return e.Present(graphql.WithOperationContext(ctx, op), refusal)
}

// ClosePingFlood is the close code of a socket that sent pings past its
// WS_PING_RATE, as of one past its other budgets.
const ClosePingFlood = CloseTooManyRequests

// pingAllowed spends a ping of the socket's budget when data is a ping
// message; false when it is one past WS_PING_RATE.
func (g *gorillaConn) pingAllowed(data []byte) bool {
	var m struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &m) != nil || m.Type != "ping" {
		return true
	}
	return g.rates.pings.Allow(g.rates.ping, time.Now()) <= 0
}

// refusePings closes a socket that sent pings past its WS_PING_RATE.
func (g *gorillaConn) refusePings() {
	rate := g.rates.ping
	g.closeWith(ClosePingFlood, "Too many pings", &apperr.Error{Code: apperr.CodeRateLimited,
		Message: fmt.Sprintf("at most %d pings per %s on one websocket (WS_PING_RATE)", rate.Count, rate.Period)})
}
