package home

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/models"
	"feedservice/store"
)

// redisErr is err, but for redis.Nil (a missing key reads as empty).
func redisErr(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// The kinds of inserted home entries, packed into the item id
// (keyspace.Keys.HomeCandidates). Candidates are
// ordered by the packed value: promoted posts first, then suggestions.
const (
	kindPromoted          = 1
	kindSuggested         = 2
	kindDismissedPromoted = 3 // in the viewer's set: a promoted post they dismissed
	kindShift             = 53
)

func packKind(kind int, id int64) int64 { return int64(kind)<<kindShift | id }

func unpackKind(m int64) (kind int, id int64) {
	return int(m >> kindShift), m & (1<<kindShift - 1)
}

// insertion is an entry the home may insert: packed is its kind and id.
type insertion struct {
	packed     int64
	followedBy int          // suggestions: the viewer's followees who follow the user
	post       *models.Post // promoted posts: the post, as loaded to check it is live
}

// candidates is what a viewer's home may insert now, in packed order:
// the promoted posts still live and not dismissed, and the suggested
// users not dismissed and not followed meanwhile.
// Both Redis copies are read in one round trip.
func (mx *Mixer) candidates(ctx context.Context, viewerID int64) ([]insertion, error) {
	return mx.readHomeCandidates(ctx, viewerID).finish(ctx)
}

// candidateRead is the one Redis round trip of a home page's insertions:
// the promoted posts and the viewer's own set, read together.
type candidateRead struct {
	x           *Mixer
	viewerID    int64
	promotedCmd *redis.StringSliceCmd
	ownCmd      *redis.ZSliceCmd
}

// readHomeCandidates makes the round trip; finish turns its answer into
// insertions (reading MySQL on a miss, and the followee set for the
// follow check).
func (mx *Mixer) readHomeCandidates(ctx context.Context, viewerID int64) *candidateRead {
	r := &candidateRead{x: mx, viewerID: viewerID}
	_, _ = mx.d.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		r.promotedCmd = p.ZRange(ctx, mx.d.Keys.Promoted(), 0, -1)
		r.ownCmd = p.ZRangeWithScores(ctx, mx.d.Keys.HomeCandidates(viewerID), 0, -1)
		return nil
	})
	return r
}

func (r *candidateRead) finish(ctx context.Context) ([]insertion, error) {
	x, viewerID, promotedCmd, ownCmd := r.x, r.viewerID, r.promotedCmd, r.ownCmd
	promoted, err := x.promotedPostIDs(ctx, promotedCmd.Val(), redisErr(promotedCmd.Err()))
	if err != nil {
		return nil, err
	}
	own, err := x.viewerInserts(ctx, viewerID, promoted, ownCmd.Val(), redisErr(ownCmd.Err()))
	if err != nil {
		return nil, err
	}
	dismissed := map[int64]bool{}
	var out []insertion
	var users []int64
	for _, c := range own {
		switch kind, id := unpackKind(c.packed); kind {
		case kindDismissedPromoted:
			dismissed[id] = true
		case kindSuggested:
			out = append(out, c)
			users = append(users, id)
		}
	}
	if len(promoted) > 0 {
		posts, err := x.cache.Posts(ctx, promoted)
		if err != nil {
			return nil, err
		}
		closed, err := x.reads.ClosedAuthors(ctx, viewerID, authorsOf(posts))
		if err != nil {
			return nil, err
		}
		for _, p := range posts {
			if p != nil && !p.Deleted() && !dismissed[p.ID] && !closed[p.AuthorID] {
				out = append(out, insertion{packed: packKind(kindPromoted, p.ID), post: p})
			}
		}
	}
	if len(users) > 0 {
		followed, err := x.reads.FollowedBy(ctx, viewerID, users)
		if err != nil {
			return nil, err
		}
		out = slices.DeleteFunc(out, func(c insertion) bool {
			kind, id := unpackKind(c.packed)
			return kind == kindSuggested && followed[id]
		})
	}
	slices.SortFunc(out, func(a, b insertion) int { return cmp.Compare(a.packed, b.packed) })
	return out, nil
}

// viewerInserts is the viewer's suggestions and dismissed promoted posts
// from their Redis copy (zs, as read with err), or worked out from MySQL
// on a miss (then kept for HomeCandidatesTTL). Redis failing, MySQL
// answers.
func (mx *Mixer) viewerInserts(ctx context.Context, viewerID int64, promoted []int64, zs []redis.Z, err error) ([]insertion, error) {
	key := mx.d.Keys.HomeCandidates(viewerID)
	if err == nil && len(zs) > 0 {
		out := make([]insertion, 0, len(zs))
		for _, z := range zs {
			m, _ := strconv.ParseInt(fmt.Sprint(z.Member), 10, 64)
			if m != 0 {
				out = append(out, insertion{packed: m, followedBy: int(z.Score)})
			}
		}
		return out, nil
	}
	if err != nil {
		mx.d.WarnRedis("read the cached home inserts; reading MySQL", err)
	}
	// The dismissal count before MySQL is read: a dismissal committed
	// after this read would not be in the answer, and moves the count.
	epoch, eerr := mx.d.Redis.Get(ctx, mx.d.Keys.HomeEpoch(viewerID)).Result()
	keep := eerr == nil || errors.Is(eerr, redis.Nil)
	out, err := mx.workOutInserts(ctx, viewerID, promoted)
	if err != nil {
		return nil, err
	}
	if !keep {
		return out, nil // Redis failing: answer from MySQL, keep nothing
	}
	args := []any{epoch, int64(mx.d.Cfg.HomeCandidatesTTL / time.Millisecond), 0, 0}
	for _, c := range out {
		args = append(args, float64(c.followedBy), c.packed)
	}
	if werr := keepInsertsScript.Run(ctx, mx.d.Redis, []string{key, mx.d.Keys.HomeEpoch(viewerID)}, args...).Err(); werr != nil {
		mx.d.WarnRedis("keep the home inserts", werr)
	}
	return out, nil
}

// keepInsertsScript replaces a viewer's home inserts (KEYS[1]) with the
// members worked out from MySQL (ARGV[3..]: score, member pairs; member 0
// marks a set that is empty otherwise), with the TTL ARGV[2] in ms, only if
// the viewer's dismissal count (KEYS[2]) still is ARGV[1] ("" for none):
// a dismissal that committed while MySQL was read would otherwise have its
// entry kept for a whole TTL.
var keepInsertsScript = redis.NewScript(`
local epoch = redis.call('GET', KEYS[2]) or ''
if epoch ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
for i = 3, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

// workOutInserts finds the accounts that at least SuggestMinFollowedBy of
// the viewer's SuggestFollowees most recent followees follow (among their
// SuggestPerFollowee most recent follows), that the viewer neither follows
// nor dismissed nor hides (mutes, blocks, or is blocked by), the most
// followed first (at most MaxSuggestions); and which of the promoted posts
// the viewer dismissed or must not see (their author is hidden: those are
// kept out as dismissed ones are). Bounded work, whatever the sizes of the
// lists.
func (mx *Mixer) workOutInserts(ctx context.Context, viewerID int64, promoted []int64) ([]insertion, error) {
	followees, err := mx.d.Store.RecentFolloweeIDs(ctx, viewerID, config.SuggestFollowees)
	if err != nil {
		return nil, fmt.Errorf("suggestions of %d: %w", viewerID, err)
	}
	theirs, err := mx.d.Store.RecentFolloweesOf(ctx, followees, config.SuggestPerFollowee)
	if err != nil {
		return nil, fmt.Errorf("suggestions of %d: %w", viewerID, err)
	}
	counts := map[int64]int{}
	for _, id := range theirs {
		if id != viewerID {
			counts[id]++
		}
	}
	var ids []int64
	for id, n := range counts {
		if n >= config.SuggestMinFollowedBy {
			ids = append(ids, id)
		}
	}
	followed, err := mx.d.Store.FollowedAmong(ctx, viewerID, ids)
	if err != nil {
		return nil, err
	}
	dismissed, err := mx.d.Store.DismissedAmong(ctx, viewerID, store.DismissSuggested, ids)
	if err != nil {
		return nil, err
	}
	_, hiddenIDs, err := mx.d.Store.FeedView(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	hidden := make(map[int64]bool, len(hiddenIDs))
	for _, id := range hiddenIDs {
		hidden[id] = true
	}
	var out []insertion
	for _, id := range ids {
		if !followed[id] && !dismissed[id] && !hidden[id] {
			out = append(out, insertion{packed: packKind(kindSuggested, id), followedBy: counts[id]})
		}
	}
	slices.SortFunc(out, func(a, b insertion) int {
		return cmp.Or(cmp.Compare(b.followedBy, a.followedBy), cmp.Compare(a.packed, b.packed))
	})
	out = out[:min(len(out), config.MaxSuggestions)]
	gone, err := mx.d.Store.DismissedAmong(ctx, viewerID, store.DismissPromoted, promoted)
	if err != nil {
		return nil, err
	}
	if len(hidden) > 0 {
		posts, err := mx.cache.Posts(ctx, promoted)
		if err != nil {
			return nil, err
		}
		for _, p := range posts {
			if p != nil && hidden[p.AuthorID] {
				gone[p.ID] = true
			}
		}
	}
	for id := range gone {
		out = append(out, insertion{packed: packKind(kindDismissedPromoted, id)})
	}
	return out, nil
}

// authorsOf are the authors of posts (nil ones left out).
func authorsOf(posts []*models.Post) []int64 {
	out := make([]int64, 0, len(posts))
	for _, p := range posts {
		if p != nil {
			out = append(out, p.AuthorID)
		}
	}
	return out
}
