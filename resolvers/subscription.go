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
	viewer, err := viewer.Require(ctx)
	if err != nil {
		return nil, err
	}
	if err := reserveSubscription(ctx); err != nil {
		return nil, err
	}
	return r.Engine.UnreadCounts(ctx, viewer)
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
	return r.filledEdges(ctx, edges), nil
}

// filledEdges forwards the edges of feedItemAdded with their items' post
// and reposters loaded (plain GraphQL fields, see dataloader.PrimeFeed).
// An edge whose load fails goes on as it is: its post is null, which
// answers that event with an error.
func (r *subscriptionResolver) filledEdges(ctx context.Context, in <-chan *models.FeedEdge) <-chan *models.FeedEdge {
	out := make(chan *models.FeedEdge)
	go func() {
		defer close(out)
		for edge := range in {
			edges := []*models.FeedEdge{edge}
			if err := dataloader.FillPosts(ctx, r.Engine, edges); err == nil {
				ids := edge.Node.ReposterIDs
				if len(ids) == 0 {
					dataloader.FillReposters(edges, nil, nil)
				} else if users, err := r.Engine.Users(ctx, ids); err == nil {
					dataloader.FillReposters(edges, ids, users)
				}
			}
			select {
			case out <- edge:
			case <-ctx.Done():
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
