package feed

import (
	"context"
	"slices"
	"strconv"

	"feedservice/feed/config"
)

// In hybrid mode an author with at least CelebrityFollowers followers is a
// celebrity: their posts are not fanned out, and readers merge their outbox
// at read time. The set of celebrities lives in Redis (keys.celebrities),
// with a "~" member so that an empty set is told apart from a lost one.

// celebrityIDs is the set of celebrities (empty outside hybrid mode).
func (e *Engine) celebrityIDs(ctx context.Context) ([]int64, error) {
	if e.cfg.Mode != config.ModeHybrid {
		return nil, nil
	}
	members, err := e.redis.SMembers(ctx, e.keys.Celebrities()).Result()
	if err != nil {
		return nil, err
	}
	return e.celebritiesFrom(ctx, members)
}

// celebritiesFrom reads the members of the celebrity set (rebuilding the
// set when it is lost: it always holds the marker "~").
func (e *Engine) celebritiesFrom(ctx context.Context, members []string) ([]int64, error) {
	if len(members) == 0 {
		return e.rebuildCelebrities(ctx)
	}
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		if id, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (e *Engine) rebuildCelebrities(ctx context.Context) ([]int64, error) {
	ids, err := e.store.UserIDsWithFollowers(ctx, e.cfg.CelebrityFollowers)
	if err != nil {
		return nil, err
	}
	members := []any{"~"}
	for _, id := range ids {
		members = append(members, id)
	}
	return ids, e.redis.SAdd(ctx, e.keys.Celebrities(), members...).Err()
}

// isCelebrity says whether author's posts are merged at read time.
func (e *Engine) isCelebrity(ctx context.Context, author int64) (bool, error) {
	if e.cfg.Mode != config.ModeHybrid {
		return false, nil
	}
	celebs, err := e.celebrityIDs(ctx) // rebuilds a lost set
	return slices.Contains(celebs, author), err
}

// updateCelebrity promotes or demotes user after their follower count
// changed. A demoted celebrity's recent posts are fanned out to their
// followers' inboxes, since readers stop merging their outbox.
func (e *Engine) updateCelebrity(ctx context.Context, user int64) error {
	if e.cfg.Mode != config.ModeHybrid {
		return nil
	}
	u, err := e.store.UserByID(ctx, user)
	if err != nil {
		return ignoreNotFound(err)
	}
	if _, err := e.celebrityIDs(ctx); err != nil {
		return err
	}
	if u.FollowerCount >= e.cfg.CelebrityFollowers {
		added, err := e.redis.SAdd(ctx, e.keys.Celebrities(), user).Result()
		if added == 1 {
			e.pub.Publish(ctx, e.keys.CelebritiesChannel(), "change")
		}
		return err
	}
	removed, err := e.redis.SRem(ctx, e.keys.Celebrities(), user).Result()
	if err != nil || removed == 0 {
		return err
	}
	e.pub.Publish(ctx, e.keys.CelebritiesChannel(), "change")
	return e.fanout(ctx, task{Op: opBackfill, User: user})
}
