// Package cache holds the copies of users and posts that pages show, in
// two tiers above MySQL: this process's (the local tier) and Redis's. A
// mutation refreshes the copies it changed after its commit, and drops the
// local ones on every instance by message.
package cache

import (
	"context"
	"sync"

	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/livemsg"
	"feedservice/feed/replicas"
	"feedservice/internal/apperr"
	"feedservice/models"
)

// Tiers are the cache tiers of users and posts.
type Tiers struct {
	d     *deps.Deps
	pub   *livemsg.Publisher
	rep   *replicas.Router
	users *Tier[*models.User]
	posts *Tier[*models.Post]
	// userCopies and postCopies read and write their Redis copies.
	userCopies copies[*models.User]
	postCopies copies[*models.Post]
	// others are the local tiers of other parts of the engine (the
	// celebrities' outboxes), by kind, which the invalidate channel's
	// messages drop too.
	others map[string]Dropper
	// syncs are the SyncInvalidations waiting, by token.
	syncs sync.Map
}

// Dropper is what the invalidation messages of its kind act on: a local
// tier that they drop from, or the engine's log-out watcher.
type Dropper interface {
	Drop(ids []int64)
	DropAll()
}

// New makes the tiers (the local ones off when LocalCacheMaxEntries is not
// positive).
func New(d *deps.Deps, pub *livemsg.Publisher, rep *replicas.Router) *Tiers {
	cfg := d.Cfg
	c := &Tiers{d: d, pub: pub, rep: rep,
		users:  NewTier(metrics.KindUser, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, userBytes, d.Metrics),
		posts:  NewTier(metrics.KindPost, cfg.LocalCacheMaxEntries, cfg.LocalCacheMaxBytes, cfg.LocalCacheTTL, postBytes, d.Metrics),
		others: map[string]Dropper{},
	}
	c.userCopies, c.postCopies = c.userCopiesOf(), c.postCopiesOf()
	return c
}

// Register has the invalidation messages of kind drop from t. Call it
// before the hub starts.
func (c *Tiers) Register(kind string, t Dropper) { c.others[kind] = t }

// Stop ends the local tiers' clean-up goroutines.
func (c *Tiers) Stop() {
	c.users.Stop()
	c.posts.Stop()
}

// Users loads users by id, in the order of ids; nil where unknown. It reads
// the local tier, then the tiers below for the rest in one batch (a
// replica may serve MySQL's part: see replicas.AllowLaggingFills). The users
// are shared with other readers: read them only.
func (c *Tiers) Users(ctx context.Context, ids []int64) ([]*models.User, error) {
	byID, err := c.users.GetMany(replicas.AllowLaggingFills(ctx), ids, c.UsersBelowLocal)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, byID), nil
}

// UsersByID is Users by id, reading MySQL's primary on a miss.
func (c *Tiers) UsersByID(ctx context.Context, ids []int64) (map[int64]*models.User, error) {
	return c.users.GetMany(ctx, ids, c.UsersBelowLocal)
}

// Posts loads posts by id, in the order of ids; nil where unknown. Deleted
// posts are included: callers decide how they show. It reads as Users does.
func (c *Tiers) Posts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	byID, err := c.posts.GetMany(replicas.AllowLaggingFills(ctx), ids, c.PostsBelowLocal)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, byID), nil
}

// StoredPosts is Posts without the local tier, for the writers (fan-out,
// rebuild, repost) that act on a post's state: another instance's change
// reaches the local tier by a message that may come after the stream
// event that acts on it.
func (c *Tiers) StoredPosts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	byID, err := c.PostsBelowLocal(ctx, ids)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, byID), nil
}

// LivePost is the post id as StoredPosts reads it; NOT_FOUND when it does
// not exist or was deleted.
func (c *Tiers) LivePost(ctx context.Context, id int64) (*models.Post, error) {
	posts, err := c.StoredPosts(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	if posts[0] == nil || posts[0].Deleted() {
		return nil, apperr.NotFound("that post does not exist or was deleted")
	}
	return posts[0], nil
}

// inOrder lists byID's values in the order of ids; nil where absent.
func inOrder[V any](ids []int64, byID map[int64]*V) []*V {
	out := make([]*V, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// CachedUsers returns the users of ids that this instance holds in its
// local tier, without I/O, for callers that would otherwise wait to batch
// a load (the dataloaders). The values are shared: read them only.
func (c *Tiers) CachedUsers(ids []int64) map[int64]*models.User { return c.users.Cached(ids) }

// CachedPosts is CachedUsers for posts, deleted ones included.
func (c *Tiers) CachedPosts(ids []int64) map[int64]*models.Post { return c.posts.Cached(ids) }

// userBytes and postBytes estimate what a cached value holds in memory:
// its strings, its fixed fields, and the cache's own entry (about 100
// bytes in otter).
func userBytes(u *models.User) int {
	return 250 + len(u.Username) + len(u.UsernameKey) + len(u.DisplayName) + len(u.Bio) + len(u.PasswordHash)
}

func postBytes(p *models.Post) int { return 200 + len(p.Body) + 16*len(p.Reposts) }

// DropLocal forgets users and posts in this instance's local tier at once,
// and tells the other instances to forget them. A mutation calls it after
// its commit, before it answers. An instance that misses the message keeps
// its copy for LocalCacheTTL at most.
func (c *Tiers) DropLocal(ctx context.Context, users, posts []int64) {
	c.users.Drop(users)
	c.posts.Drop(posts)
	c.Invalidate(ctx, metrics.KindUser, users)
	c.Invalidate(ctx, metrics.KindPost, posts)
}

// Invalidate tells every instance to drop ids from its local tier of kind.
func (c *Tiers) Invalidate(ctx context.Context, kind string, ids []int64) {
	if len(ids) == 0 {
		return
	}
	if err := c.pub.Invalidate(ctx, livemsg.Invalidation{Kind: kind, IDs: ids}); err != nil && ctx.Err() == nil {
		c.d.Log.WarnContext(ctx, "publish an invalidation", "kind", kind, "err", err)
	}
}

// OnInvalidation applies a message of the invalidate channel (the hub's
// handler).
func (c *Tiers) OnInvalidation(inv livemsg.Invalidation) {
	if inv.Sync != "" {
		if done, ok := c.syncs.LoadAndDelete(inv.Sync); ok {
			close(done.(chan struct{}))
		}
		return
	}
	switch inv.Kind {
	case metrics.KindUser:
		c.users.Drop(inv.IDs)
	case metrics.KindPost:
		c.posts.Drop(inv.IDs)
	default:
		if t := c.others[inv.Kind]; t != nil {
			t.Drop(inv.IDs)
		}
	}
}

// OnResubscribed forgets every local copy: the hub's connection dropped
// and came back, and the messages sent meanwhile are lost, so any copy may
// be one a message would have dropped.
func (c *Tiers) OnResubscribed() {
	c.users.DropAll()
	c.posts.DropAll()
	for _, t := range c.others {
		t.DropAll()
	}
}

// SyncInvalidations returns once this instance has applied every
// invalidation message published before the call: it publishes a message
// of its own and waits for it (Redis delivers a channel's messages in the
// order it ran their PUBLISH). Tests use it to read across instances
// "after the messages arrived". The hub must be running.
func (c *Tiers) SyncInvalidations(ctx context.Context) error {
	token := redisx.NewToken()
	done := make(chan struct{})
	c.syncs.Store(token, done)
	defer c.syncs.Delete(token)
	if err := c.pub.Invalidate(ctx, livemsg.Invalidation{Sync: token}); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
