package timeline

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"

	"feedservice/feed/config"
)

// In hybrid mode an author with at least CelebrityFollowers followers is a
// celebrity: their posts are not fanned out, and readers merge their outbox
// at read time. The set of celebrities lives in Redis (keyspace.Keys.Celebrities),
// with a "~" member so that an empty set is told apart from a lost one.

// Celebrities is the set of celebrities (empty outside hybrid mode).
func (o *Outboxes) Celebrities(ctx context.Context) ([]int64, error) {
	if o.d.Cfg.Mode != config.ModeHybrid {
		return nil, nil
	}
	members, err := o.d.Redis.SMembers(ctx, o.d.Keys.Celebrities()).Result()
	if err != nil {
		return nil, err
	}
	return o.celebritiesFrom(ctx, members)
}

// celebritiesFrom reads the members of the celebrity set (rebuilding the
// set when it is lost: it always holds the marker "~").
func (o *Outboxes) celebritiesFrom(ctx context.Context, members []string) ([]int64, error) {
	if len(members) == 0 {
		return o.rebuildCelebrities(ctx)
	}
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		if id, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (o *Outboxes) rebuildCelebrities(ctx context.Context) ([]int64, error) {
	ids, err := o.d.Store.UserIDsWithFollowers(ctx, o.d.Cfg.CelebrityFollowers)
	if err != nil {
		return nil, err
	}
	members := []any{"~"}
	for _, id := range ids {
		members = append(members, id)
	}
	return ids, o.d.Redis.SAdd(ctx, o.d.Keys.Celebrities(), members...).Err()
}

// IsCelebrity says whether author's posts are merged at read time.
func (o *Outboxes) IsCelebrity(ctx context.Context, author int64) (bool, error) {
	if o.d.Cfg.Mode != config.ModeHybrid {
		return false, nil
	}
	celebs, err := o.Celebrities(ctx) // rebuilds a lost set
	return slices.Contains(celebs, author), err
}

// SetCelebrity adds user to the celebrity set, or takes them out; it says
// whether the set changed. The set is read (and rebuilt when lost) first.
func (o *Outboxes) SetCelebrity(ctx context.Context, user int64, celebrity bool) (bool, error) {
	if _, err := o.Celebrities(ctx); err != nil {
		return false, err
	}
	var n int64
	var err error
	if celebrity {
		n, err = o.d.Redis.SAdd(ctx, o.d.Keys.Celebrities(), user).Result()
	} else {
		n, err = o.d.Redis.SRem(ctx, o.d.Keys.Celebrities(), user).Result()
	}
	return n == 1, err
}

// celebrityGuess is the last celebrity set this instance read, for a read
// that must guess its followed celebrities before it learns them (see
// guessLookups); nil before the first.
type celebrityGuess struct{ ids atomic.Pointer[[]int64] }

// Remember keeps ids as the last celebrity set read.
func (o *Outboxes) Remember(ids []int64) { o.guess.ids.Store(&ids) }
