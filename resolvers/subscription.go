package resolvers

import (
	"context"
	"sync/atomic"

	"feedservice/feed"
	"feedservice/models"
)

func (r *subscriptionResolver) UnreadCount(ctx context.Context) (<-chan int, error) {
	viewer, err := feed.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := reserveSubscription(ctx); err != nil {
		return nil, err
	}
	return r.Engine.UnreadCounts(ctx, viewer)
}

func (r *subscriptionResolver) FeedItemAdded(ctx context.Context) (<-chan *models.FeedEdge, error) {
	viewer, err := feed.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := reserveSubscription(ctx); err != nil {
		return nil, err
	}
	return r.Engine.FeedItemsAdded(ctx, viewer)
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
		return feed.RateLimited("a connection may hold at most %d subscriptions", l.max)
	}
	go func() {
		<-ctx.Done()
		l.live.Add(-1)
	}()
	return nil
}
