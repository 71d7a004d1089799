// Package replicas says which reads go to MySQL's read replicas (store.Config.ReplicaDSNs), and
// the read-your-writes rule that keeps a user's own writes in view.
//
// Replicas serve only the reads that may lag: relation pages (followers,
// following), timeline pages, pull pages (pull mode, pages below the
// cached window, pull-mode unread counts), inbox rebuilds, and the cache
// fills of the request path (Users, Posts). Everything else reads the
// primary: every mutation and what it reads, logIn and lookups by name,
// the refresh of the cached copies after a commit, the fan-out and the
// other stream handlers, live unread counts.
//
// Read your writes: a committed mutation marks the users whose rows it
// changed (the cache's RefreshAfterCommit's users, the actor among them) in Redis, where every
// instance sees it, for readYourWritesTTL = 2 x ReplicaMaxLag. A lag-tolerant
// read concerning a marked user (the users its caller names: the viewer,
// the user whose list or timeline is read, or a user whose row a cache
// fill reads) goes to the primary. The router is told who is concerned; it
// reads no request identity from the context. A post a fill does not find
// on a replica is read again from the primary (the cache's rule), so a
// post just written is found by everyone, its author included. A mark that expired is older than
// ReplicaMaxLag, and the store sends marked reads to replicas only while
// they hold every commit older than ReplicaMaxLag (store.AllowReplica), so
// the writer sees the write whatever the replicas' lag: a stopped replica
// sends the reads back to the primary.
//
// An inbox rebuild keeps what the fan-out counts on: a post fanned out
// while the reader had no inbox is found by the rebuild, which reads MySQL
// after entering the index of active inboxes. So a rebuild reads the
// replicas only when they hold every commit from before that entry
// (store.AllowReplicaSince), after waiting up to rebuildFreshWait for them;
// else the primary. So does a returning reader's page, read before the
// rebuild, as of the page's start.
//
// Cache fills write a copy with its row version through setIfNewerScript,
// so a stale replica row never replaces a newer copy; the copies refreshed
// after a commit read the primary (store.Primary). A stale fill is written
// only where no copy exists: a row changed within ReplicaMaxLag whose
// refreshed copy Redis lost in that time; the next change of the row or
// the copy's TTL ends it.
package replicas

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/store"
)

// Router sends the lag-tolerant reads to the replicas when it may.
type Router struct {
	store *store.Store
	rdb   redis.UniversalClient // where the marks of recent writes are
	keys  keyspace.Keys
	warn  func(msg string, err error) // a failure to mark a write
}

// New routes the reads of st, keeping the marks of recent writes in rdb.
func New(st *store.Store, rdb redis.UniversalClient, keys keyspace.Keys, warn func(msg string, err error)) *Router {
	return &Router{store: st, rdb: rdb, keys: keys, warn: warn}
}

// rebuildFreshWait is how long a rebuild waits for the replicas to hold
// what was committed before it entered the index of active inboxes: two polls.
const rebuildFreshWait = 2 * store.ReplicaPollInterval

// readYourWritesTTL is how long a write keeps its users' lag-tolerant reads
// on the primary.
func (r *Router) readYourWritesTTL() time.Duration { return 2 * r.store.ReplicaMaxLag() }

// MarkWrote records that users changed just now.
func (r *Router) MarkWrote(ctx context.Context, users []int64) {
	if !r.store.HasReplicas() {
		return
	}
	ids := concerned(users)
	pipe := r.rdb.Pipeline()
	for _, id := range ids {
		pipe.Set(ctx, r.keys.RecentWrite(id), 1, r.readYourWritesTTL())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		r.warn("mark a write for read-your-writes; the replicas' lag bound still holds", err)
	}
}

// AllowLag is ctx with its reads allowed to go to a replica (and so to lag),
// unless one of users wrote lately (or Redis cannot tell): then ctx as it
// is, reading the primary. users are everyone the read concerns: the
// viewer and whoever's list or timeline it reads.
func (r *Router) AllowLag(ctx context.Context, users ...int64) context.Context {
	if !r.store.HasReplicas() || r.wroteLately(ctx, users) {
		return ctx
	}
	return store.AllowReplica(ctx)
}

// AllowLagSince is AllowLag for a read that must see every commit before t.
func (r *Router) AllowLagSince(ctx context.Context, t time.Time, users ...int64) context.Context {
	if !r.store.HasReplicas() || r.wroteLately(ctx, users) || !r.store.WaitFresh(ctx, t, rebuildFreshWait) {
		return ctx
	}
	return store.AllowReplicaSince(ctx, t)
}

func (r *Router) wroteLately(ctx context.Context, users []int64) bool {
	ids := concerned(users)
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.Exists(ctx, r.keys.RecentWrite(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return true
	}
	for _, c := range cmds {
		if c.Val() > 0 {
			return true
		}
	}
	return false
}

// concerned is users without zeros (no one signed in) or repeats.
func concerned(users []int64) []int64 {
	ids := slices.DeleteFunc(slices.Clone(users), func(id int64) bool { return id == 0 })
	slices.Sort(ids)
	return slices.Compact(ids)
}

// fillKey marks a context whose cache fills may read a replica.
type fillKey struct{}

// AllowLaggingFills lets the cache fills under ctx read a replica (the
// request path's Users and Posts), subject to AllowLag's rule when they
// reach MySQL.
func AllowLaggingFills(ctx context.Context) context.Context {
	return context.WithValue(ctx, fillKey{}, true)
}

// FillContext is the context of a cache fill's MySQL read of the rows of
// users (a fill of users' rows) or of rows of no one in particular (posts):
// the fill reads the primary if one of users wrote lately. A user who just
// signed up is in no replica yet, and whoever reads them first (a follow's
// payload, a profile) must find them. (A post fill reads again from the
// primary what a replica did not have: see the cache's loadPosts.)
func (r *Router) FillContext(ctx context.Context, users ...int64) context.Context {
	if ok, _ := ctx.Value(fillKey{}).(bool); ok {
		return r.AllowLag(ctx, users...)
	}
	return ctx
}
