// Package dataloader batches the lookups of one GraphQL operation: all the
// users (or posts, or follow checks) its fields ask for become one query.
package dataloader

import (
	"context"
	"sync"
	"time"

	"github.com/vikstrous/dataloadgen"

	"feedservice/feed"
	"feedservice/models"
)

// DefaultWait is how long a loader gathers keys before it runs its batch:
// long enough for the fields gqlgen resolves in parallel to join. Every
// level of a query that loads something waits this long once.
const DefaultWait = time.Millisecond

// MaxWait bounds the wait setting: a longer wait only delays every response.
const MaxWait = 50 * time.Millisecond

// Loaders are the batching loaders of one operation.
type Loaders struct {
	// Users loads users by id; nil for an unknown id.
	Users *dataloadgen.Loader[int64, *models.User]
	// Posts loads posts by id, deleted ones included; nil for an unknown id.
	Posts *dataloadgen.Loader[int64, *models.Post]
	// ViewerFollows says whether the viewer follows a user.
	ViewerFollows *dataloadgen.Loader[int64, bool]
	// FollowsViewer says whether a user follows the viewer.
	FollowsViewer *dataloadgen.Loader[int64, bool]
	// UnreadCount is the viewer's unread count, counted once however many
	// fields (aliases of feed { unreadCount }) ask for it.
	UnreadCount *Once[int]
}

// New makes the loaders of one operation acting for viewerID (0: signed
// out), each gathering keys for wait before it runs a batch.
func New(e *feed.Engine, viewerID int64, wait time.Duration) *Loaders {
	opt := dataloadgen.WithWait(wait)
	return &Loaders{
		Users: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.User, []error) {
			return all(e.Users(ctx, ids))
		}, opt),
		Posts: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.Post, []error) {
			return all(e.Posts(ctx, ids))
		}, opt),
		ViewerFollows: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.FollowedBy(ctx, viewerID, ids))(ids)
		}, opt),
		FollowsViewer: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.FollowersOf(ctx, viewerID, ids))(ids)
		}, opt),
		UnreadCount: &Once[int]{compute: func(ctx context.Context) (int, error) {
			return e.UnreadCount(ctx, viewerID)
		}},
	}
}

// Once computes a value at its first Get and answers every later Get with
// it, error included; concurrent Gets wait for the first.
type Once[T any] struct {
	compute func(context.Context) (T, error)
	mu      sync.Mutex
	done    bool
	value   T
	err     error
}

// Get returns the value, computing it on the first call.
func (o *Once[T]) Get(ctx context.Context) (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.value, o.err = o.compute(ctx)
		o.done = true
	}
	return o.value, o.err
}

// all hands one batch's error to every key of it.
func all[T any](values []T, err error) ([]T, []error) {
	if err != nil {
		return nil, []error{err}
	}
	return values, nil
}

func lookup(set map[int64]bool, err error) func([]int64) ([]bool, []error) {
	return func(ids []int64) ([]bool, []error) {
		if err != nil {
			return nil, []error{err}
		}
		out := make([]bool, len(ids))
		for i, id := range ids {
			out[i] = set[id]
		}
		return out, nil
	}
}

type loadersKey struct{}

// With attaches loaders to ctx.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the loaders attached to ctx.
func For(ctx context.Context) *Loaders {
	return ctx.Value(loadersKey{}).(*Loaders)
}
