// Package dataloader batches the lookups of one GraphQL operation: all the
// users (or posts, or follow checks) its fields ask for become one query.
package dataloader

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vikstrous/dataloadgen"

	"feedservice/feed"
	"feedservice/models"
)

// DefaultWait is how long a loader gathers keys before it runs its batch:
// long enough for the fields gqlgen resolves in parallel to join. Every
// level of a query that loads something it does not find in the engine's
// local tier (or primed) waits this long once.
const DefaultWait = time.Millisecond

// MaxWait bounds the wait setting: a longer wait only delays every response.
const MaxWait = 50 * time.Millisecond

// Loaders are the batching loaders of one operation.
type Loaders struct {
	// Users loads users by id; nil for an unknown id.
	Users *Cached[models.User]
	// Posts loads posts by id, deleted ones included; nil for an unknown id.
	Posts *Cached[models.Post]
	// ViewerFollows says whether the viewer follows a user.
	ViewerFollows *dataloadgen.Loader[int64, bool]
	// FollowsViewer says whether a user follows the viewer.
	FollowsViewer *dataloadgen.Loader[int64, bool]
	// ViewerBlocks says whether the viewer blocks a user.
	ViewerBlocks *dataloadgen.Loader[int64, bool]
	// ViewerMutes says whether the viewer mutes a user.
	ViewerMutes *dataloadgen.Loader[int64, bool]
	// BlockedEitherWay says whether the viewer blocks a user or is blocked
	// by them: whether a block hides that user's posts from the viewer.
	BlockedEitherWay *dataloadgen.Loader[int64, bool]
	// ViewerRequested says whether the viewer has asked to follow a user
	// and waits.
	ViewerRequested *dataloadgen.Loader[int64, bool]
	// UnreadCount is the viewer's unread count, counted once however many
	// fields (aliases of feed { unreadCount }) ask for it.
	UnreadCount *Once[int]

	engine *feed.Engine
	viewer int64
}

// New makes the loaders of one operation acting for viewerID (0: signed
// out), each gathering keys for wait before it runs a batch.
func New(e *feed.Engine, viewerID int64, wait time.Duration) *Loaders {
	opt := dataloadgen.WithWait(wait)
	return &Loaders{
		engine: e,
		viewer: viewerID,
		Users: &Cached[models.User]{cached: e.CachedUsers, Loader: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.User, []error) {
			return all(e.Users(ctx, ids))
		}, opt)},
		Posts: &Cached[models.Post]{cached: e.CachedPosts, Loader: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.Post, []error) {
			return all(e.Posts(ctx, ids))
		}, opt)},
		ViewerFollows: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.FollowedBy(ctx, viewerID, ids))(ids)
		}, opt),
		FollowsViewer: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.FollowersOf(ctx, viewerID, ids))(ids)
		}, opt),
		ViewerBlocks: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.BlockedAmong(ctx, viewerID, ids))(ids)
		}, opt),
		ViewerMutes: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.MutedAmong(ctx, viewerID, ids))(ids)
		}, opt),
		BlockedEitherWay: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.BlockedEitherWayAmong(ctx, viewerID, ids))(ids)
		}, opt),
		ViewerRequested: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]bool, []error) {
			return lookup(e.RequestedAmong(ctx, viewerID, ids))(ids)
		}, opt),
		UnreadCount: &Once[int]{compute: func(ctx context.Context) (int, error) {
			return e.UnreadCount(ctx, viewerID)
		}},
	}
}

// Readable says whether the viewer may read post p: false when a block
// stands between the viewer and p's author, either way, and when p's
// author is protected and the viewer (signed out, or signed in) is not
// among their followers (feed.PostHidden). For the viewer's own posts it
// asks nothing; otherwise the authors of one level of the operation cost
// one batched lookup of each kind.
func (l *Loaders) Readable(ctx context.Context, p *models.Post) (bool, error) {
	if p.AuthorID == l.viewer {
		return true, nil
	}
	if l.viewer != 0 {
		blocked, err := l.BlockedEitherWay.Load(ctx, p.AuthorID)
		if blocked || err != nil {
			return false, err
		}
	}
	author, err := l.Users.Load(ctx, p.AuthorID)
	if err != nil || author == nil || !author.IsProtected {
		return err == nil, err
	}
	follows := false
	if l.viewer != 0 {
		if follows, err = l.ViewerFollows.Load(ctx, p.AuthorID); err != nil {
			return false, err
		}
	}
	return !feed.PostHidden(l.viewer, author, follows), nil
}

// Cached is a loader that answers first from the engine's local tier, at
// once and without I/O, and batches (waiting the loader's wait) only the
// keys that tier lacks. What it answers from the tier it also primes, so
// every field of one operation sees one value per key.
type Cached[V any] struct {
	*dataloadgen.Loader[int64, *V]
	cached func(ids []int64) map[int64]*V

	mu     sync.Mutex
	primed map[int64]*V // what Prime stored: Load answers it with one map read
}

// Prime stores v as the value of id unless the loader has one already,
// and says whether it stored it.
func (c *Cached[V]) Prime(id int64, v *V) bool {
	if !c.Loader.Prime(id, v) {
		return false
	}
	c.mu.Lock()
	if c.primed == nil {
		c.primed = make(map[int64]*V)
	}
	c.primed[id] = v
	c.mu.Unlock()
	return true
}

// Load returns the value of id: a primed one at once, without the slice,
// map and tier lookup of a key the operation has not seen yet.
func (c *Cached[V]) Load(ctx context.Context, id int64) (*V, error) {
	c.mu.Lock()
	v, ok := c.primed[id]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	if v, ok := c.cached([]int64{id})[id]; ok && c.Prime(id, v) {
		return v, nil
	}
	return c.Loader.Load(ctx, id)
}

// LoadAll returns the values of ids, in their order.
func (c *Cached[V]) LoadAll(ctx context.Context, ids []int64) ([]*V, error) {
	for id, v := range c.cached(ids) {
		c.Prime(id, v)
	}
	return c.Loader.LoadAll(ctx, ids)
}

// PrimeFeed loads, in one call each, the posts of a feed page the engine
// did not load and the users the page shows (authors and reposters), sets
// each item's post and reposters (plain GraphQL fields, which gqlgen
// resolves without a goroutine) and primes the loaders with them; if the
// operation asks, it also primes whether the viewer follows, blocks or
// mutes those users and whether they follow the viewer. A failure to load the posts or the users is the
// page's error.
func (l *Loaders) PrimeFeed(ctx context.Context, conn *models.FeedConnection) error {
	if err := FillPosts(ctx, l.engine, conn.Edges); err != nil {
		return err
	}
	return l.prime(ctx, conn.Edges)
}

// FillPosts sets the post of every feed item that lacks one, loaded from
// the engine in one call; an unknown post stays nil.
func FillPosts(ctx context.Context, e *feed.Engine, edges []*models.FeedEdge) error {
	var ids []int64
	for _, edge := range edges {
		if edge.Node.LoadedPost == nil {
			ids = append(ids, edge.Node.PostID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	posts, err := e.Posts(ctx, ids)
	if err != nil {
		return err
	}
	i := 0
	for _, edge := range edges {
		if edge.Node.LoadedPost == nil {
			edge.Node.LoadedPost = posts[i]
			i++
		}
	}
	return nil
}

// FillReposters sets the reposters of every feed item from users, the
// users of ids in their order; unknown users (nil) are left out.
func FillReposters(edges []*models.FeedEdge, ids []int64, users []*models.User) {
	byID := make(map[int64]*models.User, len(ids))
	for i, id := range ids {
		byID[id] = users[i]
	}
	for _, edge := range edges {
		item := edge.Node
		item.Reposters = make([]*models.User, 0, len(item.ReposterIDs))
		for _, id := range item.ReposterIDs {
			if u := byID[id]; u != nil {
				item.Reposters = append(item.Reposters, u)
			}
		}
	}
}

// prime loads the users of edges, sets the items' reposters and primes
// the loaders.
func (l *Loaders) prime(ctx context.Context, edges []*models.FeedEdge) error {
	var ids []int64
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, edge := range edges {
		if p := edge.Node.LoadedPost; p != nil {
			l.Posts.Prime(p.ID, p)
			add(p.AuthorID)
		}
		for _, id := range edge.Node.ReposterIDs {
			add(id)
		}
	}
	if len(ids) == 0 {
		FillReposters(edges, nil, nil)
		return nil
	}
	var wg sync.WaitGroup
	prime := func(field string, loader *dataloadgen.Loader[int64, bool], among func(context.Context, int64, []int64) (map[int64]bool, error)) {
		if l.viewer == 0 || !asks(ctx, field) {
			return
		}
		wg.Go(func() {
			if set, err := among(ctx, l.viewer, ids); err == nil {
				for _, id := range ids {
					loader.Prime(id, set[id])
				}
			}
		})
	}
	prime("viewerIsFollowing", l.ViewerFollows, l.engine.FollowedBy)
	prime("followsViewer", l.FollowsViewer, l.engine.FollowersOf)
	prime("viewerHasBlocked", l.ViewerBlocks, l.engine.BlockedAmong)
	prime("viewerHasMuted", l.ViewerMutes, l.engine.MutedAmong)
	users, err := l.engine.Users(ctx, ids)
	wg.Wait()
	if err != nil {
		return err
	}
	for i, id := range ids {
		l.Users.Prime(id, users[i])
	}
	FillReposters(edges, ids, users)
	return nil
}

// asks says whether the operation's document names field anywhere: a
// cheap over-estimate of whether it selects it, which at worst primes a
// loader that no field reads.
func asks(ctx context.Context, field string) bool {
	return graphql.HasOperationContext(ctx) && strings.Contains(graphql.GetOperationContext(ctx).RawQuery, field)
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

// attached are the loaders of a context: made on first use.
type attached struct {
	once sync.Once
	make func() *Loaders
	l    *Loaders
}

// With attaches loaders to ctx.
func With(ctx context.Context, l *Loaders) context.Context {
	return Lazy(ctx, func() *Loaders { return l })
}

// Lazy attaches to ctx the loaders make makes, made when a field first
// asks for them (For): a response that loads nothing, such as each event
// of an unreadCount subscription, makes none. With 10,000 sockets told of
// one post, a set made for each event and socket was a tenth of the
// server's CPU.
func Lazy(ctx context.Context, make func() *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, &attached{make: make})
}

// For returns the loaders attached to ctx.
func For(ctx context.Context) *Loaders {
	a := ctx.Value(loadersKey{}).(*attached)
	a.once.Do(func() { a.l = a.make() })
	return a.l
}
