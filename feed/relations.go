package feed

import (
	"context"
	"errors"

	"feedservice/feed/livemsg"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Follow makes the viewer follow userID, or, when userID is protected,
// ask to (see protected.go). Idempotent.
func (e *Engine) Follow(ctx context.Context, viewerID, userID int64) (*models.FollowPayload, error) {
	if viewerID == userID {
		return nil, apperr.BadInput("you cannot follow yourself")
	}
	outcome, err := e.store.FollowOrRequest(ctx, viewerID, userID, e.ids.Next(), e.now().UTC())
	if outcome == store.Followed {
		e.relationChanged(ctx, viewerID, userID, true, e.stream.OnFollowed)
	}
	if err = forbiddenFollow(err); apperr.CodeOf(err) == apperr.CodeForbidden {
		return nil, err
	}
	return e.followPayload(ctx, viewerID, userID, err)
}

// Unfollow makes the viewer stop following userID, or withdraws their
// request to. Idempotent.
func (e *Engine) Unfollow(ctx context.Context, viewerID, userID int64) (*models.FollowPayload, error) {
	changed, err := e.store.Unfollow(ctx, viewerID, userID, e.ids.Next(), e.now().UTC())
	if changed {
		e.relationChanged(ctx, viewerID, userID, false, e.stream.OnUnfollowed)
	}
	if err == nil {
		err = e.withdrawRequest(ctx, viewerID, userID)
	}
	return e.followPayload(ctx, viewerID, userID, err)
}

// RemoveFollower makes userID stop following the viewer. Idempotent.
func (e *Engine) RemoveFollower(ctx context.Context, viewerID, userID int64) (*models.FollowPayload, error) {
	changed, err := e.store.RemoveFollower(ctx, viewerID, userID, e.ids.Next(), e.now().UTC())
	if changed {
		// The follower is not the actor: their inbox waits for the event.
		e.relationChanged(ctx, userID, viewerID, false, nil)
	}
	return e.followPayload(ctx, viewerID, userID, err)
}

// relationChanged runs what follows the commit of follower's follow (or
// unfollow) of followee: the cached copies, the follower's followee set
// and both relation lists are settled, so that the instance that served
// it reads its own write at once; the dispatcher wakes; the actor's own
// inbox changes at once (onOwnInbox; nil when the follower is not the
// actor); and the follower's live listeners re-subscribe. A failure is
// only logged: the change's stream event does it all again.
func (e *Engine) relationChanged(ctx context.Context, follower, followee int64, follows bool, onOwnInbox func(context.Context, models.FollowEventPayload) error) {
	e.cache.RefreshAfterCommit(ctx, []int64{follower, followee}, nil)
	if err := e.inboxes.SettleFollowing(ctx, follower, followee, follows); err != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "change followee set; the stream event will", "follower", follower, "err", err)
	}
	if err := e.jumps.SettleRelationLists(ctx, follower, followee); err != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "change a relation list's copy; the stream event will", "follower", follower, "err", err)
	}
	var ownInbox func(context.Context) error
	if onOwnInbox != nil {
		ownInbox = func(ctx context.Context) error {
			return onOwnInbox(ctx, models.FollowEventPayload{FollowerID: follower, FolloweeID: followee})
		}
	}
	if !follows {
		e.listsChanged(ctx, follower) // the followee left the follower's lists
	}
	e.afterCommit(ctx, ownInbox)
	e.pub.Publish(ctx, e.keys.ReaderChannel(follower), livemsg.Followed(followee, follows))
}

// followPayload answers a relation change with both users as now stored.
func (e *Engine) followPayload(ctx context.Context, viewerID, userID int64, err error) (*models.FollowPayload, error) {
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	users, err := e.Users(ctx, []int64{userID, viewerID})
	if err != nil {
		return nil, err
	}
	if users[1] == nil {
		return nil, apperr.ErrUnauthenticated
	}
	if users[0] == nil {
		return nil, apperr.NotFound("no such user")
	}
	return &models.FollowPayload{User: users[0], Viewer: users[1]}, nil
}

// Followers pages who follows user, most recent follow first.
func (e *Engine) Followers(ctx context.Context, user *models.User, args paging.PageArgs) (*models.UserConnection, error) {
	return e.relations(ctx, paging.CursorFollowers, user.FollowerCount, args, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.FollowersPage(e.rep.AllowLag(ctx, user.ID), user.ID, dir, bound, limit)
	})
}

// Following pages whom user follows, most recent follow first.
func (e *Engine) Following(ctx context.Context, user *models.User, args paging.PageArgs) (*models.UserConnection, error) {
	return e.relations(ctx, paging.CursorFollowing, user.FollowingCount, args, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.FollowingPage(e.rep.AllowLag(ctx, user.ID), user.ID, dir, bound, limit)
	})
}

func (e *Engine) relations(ctx context.Context, kind paging.CursorKind, total int, args paging.PageArgs, fetch paging.FetchFunc[models.Relation]) (*models.UserConnection, error) {
	rows, info, err := paging.Paginate(ctx, e.metrics, kind, args, fetch, func(r models.Relation) int64 { return r.ID })
	if err != nil {
		return nil, err
	}
	conn := &models.UserConnection{PageInfo: info, TotalCount: total, Edges: make([]*models.UserEdge, len(rows))}
	for i, r := range rows {
		conn.Edges[i] = &models.UserEdge{Cursor: paging.EncodeCursor(kind, r.ID), UserID: r.UserID, FollowedAt: r.FollowedAt}
	}
	return conn, nil
}

// FollowedBy returns which of ids the viewer follows (see
// timeline.Reads.FollowedBy).
func (e *Engine) FollowedBy(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.reads.FollowedBy(ctx, viewerID, ids)
}

// FollowersOf returns which of ids follow the viewer.
func (e *Engine) FollowersOf(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.store.FollowersAmong(ctx, viewerID, ids)
}

// FollowersAt is the page of user's followers at args.Offset.
func (e *Engine) FollowersAt(ctx context.Context, user *models.User, args paging.JumpArgs) (*models.UserConnection, error) {
	return e.jumps.FollowersAt(ctx, user, args)
}

// FollowingAt is the page of whom user follows at args.Offset.
func (e *Engine) FollowingAt(ctx context.Context, user *models.User, args paging.JumpArgs) (*models.UserConnection, error) {
	return e.jumps.FollowingAt(ctx, user, args)
}
