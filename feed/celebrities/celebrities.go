// Package celebrities is hybrid mode's set of celebrities: the authors with
// at least CelebrityFollowers followers, whose posts are not fanned out but
// merged at read time.
package celebrities

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
)

// Set is the set of celebrities. It lives in Redis
// (keyspace.Keys.Celebrities), with a "~" member so that an empty set is
// told apart from a lost one; Set also keeps the last one this instance
// read, for a read that must guess before it learns it (Guess).
type Set struct {
	d     *deps.Deps
	guess atomic.Pointer[[]int64]
}

// New is the set in d's Redis, rebuilt from d's store when lost.
func New(d *deps.Deps) *Set { return &Set{d: d} }

// Celebrities is the set of celebrities (empty outside hybrid mode).
func (s *Set) Celebrities(ctx context.Context) ([]int64, error) {
	if s.d.Cfg.Mode != config.ModeHybrid {
		return nil, nil
	}
	members, err := s.d.Redis.SMembers(ctx, s.d.Keys.Celebrities()).Result()
	if err != nil {
		return nil, err
	}
	return s.CelebritiesFrom(ctx, members)
}

// CelebritiesFrom reads the members of the celebrity set, as SMEMBERS
// answered them (rebuilding the set when it is lost: it always holds the
// marker "~").
func (s *Set) CelebritiesFrom(ctx context.Context, members []string) ([]int64, error) {
	if len(members) == 0 {
		return s.rebuildCelebrities(ctx)
	}
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		if id, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (s *Set) rebuildCelebrities(ctx context.Context) ([]int64, error) {
	ids, err := s.d.Store.UserIDsWithFollowers(ctx, s.d.Cfg.CelebrityFollowers)
	if err != nil {
		return nil, err
	}
	members := []any{"~"}
	for _, id := range ids {
		members = append(members, id)
	}
	return ids, s.d.Redis.SAdd(ctx, s.d.Keys.Celebrities(), members...).Err()
}

// IsCelebrity says whether author's posts are merged at read time.
func (s *Set) IsCelebrity(ctx context.Context, author int64) (bool, error) {
	if s.d.Cfg.Mode != config.ModeHybrid {
		return false, nil
	}
	celebs, err := s.Celebrities(ctx) // rebuilds a lost set
	return slices.Contains(celebs, author), err
}

// SetCelebrity adds user to the celebrity set, or takes them out; it says
// whether the set changed. The set is read (and rebuilt when lost) first.
func (s *Set) SetCelebrity(ctx context.Context, user int64, celebrity bool) (bool, error) {
	if _, err := s.Celebrities(ctx); err != nil {
		return false, err
	}
	var n int64
	var err error
	if celebrity {
		n, err = s.d.Redis.SAdd(ctx, s.d.Keys.Celebrities(), user).Result()
	} else {
		n, err = s.d.Redis.SRem(ctx, s.d.Keys.Celebrities(), user).Result()
	}
	return n == 1, err
}

// Remember keeps ids as the last celebrity set read.
func (s *Set) Remember(ids []int64) { s.guess.Store(&ids) }

// Guess is the last celebrity set this instance read (Remember), for a read
// that must guess its followed celebrities before it learns them; nil
// before the first.
func (s *Set) Guess() []int64 {
	if ids := s.guess.Load(); ids != nil {
		return *ids
	}
	return nil
}
