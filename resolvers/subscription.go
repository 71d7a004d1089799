package resolvers

import (
	"context"
	"sync/atomic"

	"feedservice/dataloader"
	"feedservice/internal/apperr"
	"feedservice/internal/viewer"
	"feedservice/models"
)

func (r *subscriptionResolver) UnreadCount(ctx context.Context) (<-chan int, error) {
	counts, err := r.unreadCounts(ctx)
	if err != nil {
		return nil, err
	}
	return paced(ctx, counts, same[int]), nil
}

// UnreadBadge is UnreadCount's stream, each count sent with whether it is
// at the cap.
func (r *subscriptionResolver) UnreadBadge(ctx context.Context) (<-chan *models.UnreadBadge, error) {
	counts, err := r.unreadCounts(ctx)
	if err != nil {
		return nil, err
	}
	return paced(ctx, counts, r.badge), nil
}

// unreadCounts starts the viewer's stream of unread counts, in one of the
// connection's subscription slots.
func (r *subscriptionResolver) unreadCounts(ctx context.Context) (<-chan int, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	if err := reserveSubscription(ctx); err != nil {
		return nil, err
	}
	return r.Engine.UnreadCounts(ctx, viewer)
}

func (r *subscriptionResolver) badge(_ context.Context, count int) *models.UnreadBadge {
	return &models.UnreadBadge{Count: count, Capped: r.Engine.UnreadCountCapped(count)}
}

func (r *subscriptionResolver) FeedItemAdded(ctx context.Context) (<-chan *models.FeedEdge, error) {
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	if err := reserveSubscription(ctx); err != nil {
		return nil, err
	}
	edges, err := r.Engine.FeedItemsAdded(ctx, viewer)
	if err != nil {
		return nil, err
	}
	return paced(ctx, edges, r.fillEdge), nil
}

// fillEdge loads the post and reposters of a feedItemAdded edge (plain
// GraphQL fields, see dataloader.PrimeFeed). An edge whose load fails goes
// on as it is: its post is null, which answers that event with an error.
func (r *subscriptionResolver) fillEdge(ctx context.Context, edge *models.FeedEdge) *models.FeedEdge {
	edges := []*models.FeedEdge{edge}
	if err := dataloader.FillPosts(ctx, r.Engine, edges); err != nil {
		return edge
	}
	ids := edge.Node.ReposterIDs
	if len(ids) == 0 {
		dataloader.FillReposters(edges, nil, nil)
	} else if users, err := r.Engine.Users(ctx, ids); err == nil {
		dataloader.FillReposters(edges, ids, users)
	}
	return edge
}

// same is the prepare of paced for events sent as they come.
func same[T any](_ context.Context, event T) T { return event }

// EventGate paces the events of one subscription (the server's extension
// puts one in its context, WithEventGate): each event's selection runs on
// the server like a query, so it must wait its turn and pay its price.
type EventGate interface {
	// Wait returns once the next event may be prepared and run, or with
	// an error that ends the subscription: the gate has told the client
	// why.
	Wait(ctx context.Context) error
	// Cancel gives back the turn Wait gave, whose event was not run.
	Cancel()
}

type eventGateKey struct{}

// WithEventGate gives a subscription's context its gate.
func WithEventGate(ctx context.Context, g EventGate) context.Context {
	return context.WithValue(ctx, eventGateKey{}, g)
}

// paced forwards a subscription's events, each once its gate (if the
// context has one) lets it, made ready to send by prepare within its turn.
// It ends, closing its channel, when in ends, ctx ends or the gate refuses.
func paced[T, U any](ctx context.Context, in <-chan T, prepare func(context.Context, T) U) <-chan U {
	gate, _ := ctx.Value(eventGateKey{}).(EventGate)
	out := make(chan U)
	go func() {
		defer close(out)
		for event := range in {
			if gate != nil {
				if err := gate.Wait(ctx); err != nil {
					return
				}
			}
			select {
			case out <- prepare(ctx, event):
			case <-ctx.Done():
				if gate != nil {
					gate.Cancel()
				}
				return
			}
		}
	}()
	return out
}

// connectionLimits counts the live subscriptions of one websocket.
type connectionLimits struct {
	max  int32
	live atomic.Int32
}

type connectionLimitsKey struct{}

// WithSubscriptionLimit caps the subscriptions of the websocket whose
// context this is.
func WithSubscriptionLimit(ctx context.Context, max int) context.Context {
	return context.WithValue(ctx, connectionLimitsKey{}, &connectionLimits{max: int32(max)})
}

// reserveSubscription takes one of the connection's subscription slots
// until the subscription's context ends.
func reserveSubscription(ctx context.Context) error {
	l, ok := ctx.Value(connectionLimitsKey{}).(*connectionLimits)
	if !ok {
		return nil
	}
	if l.live.Add(1) > l.max {
		l.live.Add(-1)
		return apperr.RateLimited("a connection may hold at most %d subscriptions", l.max)
	}
	go func() {
		<-ctx.Done()
		l.live.Add(-1)
	}()
	return nil
}
