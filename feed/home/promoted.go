package home

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/internal/apperr"
	"feedservice/store"
)

// SetPromoted puts a live post among the promoted home entries, or takes
// it out (then it need not be live). The cached list is dropped after the
// commit, so every instance reads the new one at its next home page.
func (mx *Mixer) SetPromoted(ctx context.Context, postID int64, promoted bool) error {
	if promoted {
		if _, err := mx.cache.LivePost(ctx, postID); err != nil {
			return err
		}
	}
	if err := mx.d.Store.SetPromoted(ctx, postID, promoted); err != nil {
		return fmt.Errorf("set promoted %d: %w", postID, err)
	}
	if err := mx.d.Redis.Del(ctx, mx.d.Keys.Promoted()).Err(); err != nil {
		mx.d.WarnRedis("drop the promoted posts' copy; it expires by itself", err)
	}
	return nil
}

// promotedPostIDs is the promoted posts from their Redis copy (members,
// as read with err), or from MySQL on a miss (then kept for
// PromotedCacheTTL).
func (mx *Mixer) promotedPostIDs(ctx context.Context, members []string, err error) ([]int64, error) {
	if err == nil && len(members) > 0 {
		ids := make([]int64, 0, len(members))
		for _, m := range members {
			if n, _ := strconv.ParseInt(m, 10, 64); n != 0 {
				ids = append(ids, n)
			}
		}
		return ids, nil
	}
	if err != nil {
		mx.d.WarnRedis("read the promoted posts' copy; reading MySQL", err)
	}
	ids, err := mx.d.Store.PromotedPostIDs(ctx, config.MaxPromotedPosts)
	if err != nil {
		return nil, fmt.Errorf("promoted posts: %w", err)
	}
	zs := []redis.Z{{Member: 0}}
	for _, id := range ids {
		zs = append(zs, redis.Z{Member: id})
	}
	_, werr := mx.d.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, mx.d.Keys.Promoted())
		p.ZAdd(ctx, mx.d.Keys.Promoted(), zs...)
		p.Expire(ctx, mx.d.Keys.Promoted(), config.PromotedCacheTTL)
		return nil
	})
	if werr != nil {
		mx.d.WarnRedis("keep the promoted posts' copy", werr)
	}
	return ids, nil
}

// DismissHomeEntry hides a suggested user (isUser) or a promoted post from
// the viewer for good: recorded in MySQL, and the viewer's cached inserts
// are dropped so that the next page works them out again without it. If
// Redis cannot drop them the dismissal is refused (it is idempotent: the
// client retries), since the copy would show the entry again. An id that
// names no user or post is refused with NOT_FOUND: nothing is stored for
// it. A deleted post may still be dismissed (it may have been deleted
// while the viewer looked at it).
func (mx *Mixer) DismissHomeEntry(ctx context.Context, viewerID int64, isUser bool, id int64) error {
	kind := store.DismissPromoted
	if isUser {
		kind = store.DismissSuggested
	}
	if err := mx.mustExist(ctx, isUser, id); err != nil {
		return err
	}
	if err := mx.d.Store.Dismiss(ctx, viewerID, kind, id); err != nil {
		return fmt.Errorf("dismiss %d: %w", id, err)
	}
	if err := mx.ForgetInserts(ctx, viewerID); err != nil {
		mx.d.Log.WarnContext(ctx, "dismiss: cannot drop the cached home inserts", "viewer", viewerID, "err", err)
		return apperr.ErrUnavailable
	}
	return nil
}

// mustExist is NOT_FOUND unless id names a user (isUser) or a post,
// deleted or not. It reads the cache tiers, so a home entry just shown
// costs no query.
func (mx *Mixer) mustExist(ctx context.Context, isUser bool, id int64) error {
	if isUser {
		users, err := mx.cache.UsersByID(ctx, []int64{id})
		if err != nil {
			return fmt.Errorf("load user %d: %w", id, err)
		}
		if users[id] == nil {
			return apperr.NotFound("that user does not exist")
		}
		return nil
	}
	posts, err := mx.cache.Posts(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("load post %d: %w", id, err)
	}
	if posts[0] == nil {
		return apperr.NotFound("that post does not exist")
	}
	return nil
}

// ForgetInserts drops the viewer's cached home inserts after a commit that
// changes them (a dismissal, a block or a mute), so that the next page
// works them out again. The count moves first: a set being worked out from
// MySQL now, which may not hold the commit, is then not kept
// (keepInsertsScript).
func (mx *Mixer) ForgetInserts(ctx context.Context, viewerID int64) error {
	_, err := mx.d.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, mx.d.Keys.HomeEpoch(viewerID))
		p.Expire(ctx, mx.d.Keys.HomeEpoch(viewerID), 2*mx.d.Cfg.HomeCandidatesTTL)
		p.Del(ctx, mx.d.Keys.HomeCandidates(viewerID))
		return nil
	})
	return err
}
