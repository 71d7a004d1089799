package feed

import (
	"context"
	"errors"
	"slices"
	"time"

	"feedservice/feed/fanout"
	"feedservice/feed/livemsg"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Block makes the viewer block userID: the follows between them end both
// ways, and until Unblock neither sees the other's posts nor may follow
// the other. Idempotent.
func (e *Engine) Block(ctx context.Context, viewerID, userID int64) (*models.BlockPayload, error) {
	if viewerID == userID {
		return nil, apperr.BadInput("you cannot block yourself")
	}
	changed, err := e.store.Block(ctx, viewerID, userID, e.ids.Next(), e.now().UTC())
	if changed {
		e.hidingChanged(ctx, fanout.Hiding{Actor: viewerID, Other: userID, Block: true}, true)
	}
	return e.blockPayload(ctx, viewerID, userID, err)
}

// Unblock ends the viewer's block of userID. It restores no follow.
// Idempotent.
func (e *Engine) Unblock(ctx context.Context, viewerID, userID int64) (*models.BlockPayload, error) {
	if viewerID == userID {
		return nil, apperr.BadInput("you cannot unblock yourself")
	}
	changed, err := e.store.Unblock(ctx, viewerID, userID, e.now().UTC())
	if changed {
		e.hidingChanged(ctx, fanout.Hiding{Actor: viewerID, Other: userID, Block: true}, false)
	}
	return e.blockPayload(ctx, viewerID, userID, err)
}

// Mute makes the viewer mute userID: any follow stays, and userID's posts
// and reposts, and others' reposts of their posts, leave the viewer's
// feed. Idempotent.
func (e *Engine) Mute(ctx context.Context, viewerID, userID int64) (*models.MutePayload, error) {
	if viewerID == userID {
		return nil, apperr.BadInput("you cannot mute yourself")
	}
	changed, err := e.store.Mute(ctx, viewerID, userID, e.ids.Next(), e.now().UTC())
	if changed {
		e.hidingChanged(ctx, fanout.Hiding{Actor: viewerID, Other: userID}, true)
	}
	return e.mutePayload(ctx, viewerID, userID, err)
}

// Unmute ends the viewer's mute of userID: what it hid comes back in its
// place. Idempotent.
func (e *Engine) Unmute(ctx context.Context, viewerID, userID int64) (*models.MutePayload, error) {
	if viewerID == userID {
		return nil, apperr.BadInput("you cannot unmute yourself")
	}
	changed, err := e.store.Unmute(ctx, viewerID, userID, e.now().UTC())
	if changed {
		e.hidingChanged(ctx, fanout.Hiding{Actor: viewerID, Other: userID}, false)
	}
	return e.mutePayload(ctx, viewerID, userID, err)
}

// hidingChanged runs what follows the commit of h, so that the actor's
// next read, on any instance, reflects it: the cached copies of both (a
// block moves counts); for a block the relation lists of the follows it
// ended; the inboxes and followee sets of h's readers reset and their live
// listeners told (fanout.Stream.ResetInboxes, which the change's stream
// event repeats); and their cached home inserts dropped, on a reset or
// when the change hides (a block or mute: an insert may show the other
// user). A failure is only logged: the change's stream event resets the
// inboxes again.
func (e *Engine) hidingChanged(ctx context.Context, h fanout.Hiding, hides bool) {
	e.cache.RefreshAfterCommit(ctx, []int64{h.Actor, h.Other}, nil)
	if h.Block && hides {
		e.listsChanged(ctx, h.Actor, h.Other) // the follows it ended left both users' lists
	}
	if h.Block {
		for _, follow := range [][2]int64{{h.Actor, h.Other}, {h.Other, h.Actor}} {
			if err := e.jumps.SettleRelationLists(ctx, follow[0], follow[1]); err != nil && ctx.Err() == nil {
				e.log.WarnContext(ctx, "change a relation list's copy; the stream event will", "follower", follow[0], "err", err)
			}
		}
	}
	reset, err := e.stream.ResetInboxes(ctx, h, true)
	if err != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "reset inboxes after a block or mute; the stream event will", "actor", h.Actor, "err", err)
	}
	for _, r := range h.Readers() {
		if !hides && !slices.Contains(reset, r) {
			continue
		}
		if err := e.home.ForgetInserts(ctx, r); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "drop home inserts after a block or mute", "reader", r, "err", err)
		}
	}
	e.afterCommit(ctx, nil)
}

// blockPayload answers a block change with both users as now stored.
func (e *Engine) blockPayload(ctx context.Context, viewerID, userID int64, err error) (*models.BlockPayload, error) {
	p, err := e.followPayload(ctx, viewerID, userID, err)
	if err != nil {
		return nil, err
	}
	return &models.BlockPayload{User: p.User, Viewer: p.Viewer}, nil
}

// mutePayload answers a mute change with the other user.
func (e *Engine) mutePayload(ctx context.Context, viewerID, userID int64, err error) (*models.MutePayload, error) {
	p, err := e.followPayload(ctx, viewerID, userID, err)
	if err != nil {
		return nil, err
	}
	return &models.MutePayload{User: p.User}, nil
}

// runDueBlockResets makes the inbox resets that unblocks deferred (see
// timeline.Inboxes.ResetOther) as they fall due, on every instance (each
// reset is taken by one), until ctx ends.
func (e *Engine) runDueBlockResets(ctx context.Context) {
	tick := time.NewTicker(min(time.Second, max(e.cfg.BlockResetInterval/10, 10*time.Millisecond)))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := e.ResetDueBlocks(ctx, e.now()); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "deferred inbox resets after unblocks", "err", err)
		}
	}
}

// ResetDueBlocks makes the deferred resets due by now (see
// runDueBlockResets), drops those readers' home inserts and tells their
// live listeners, and says how many it made. Tests pass a later now to
// read as after the interval.
func (e *Engine) ResetDueBlocks(ctx context.Context, now time.Time) (int, error) {
	readers, err := e.inboxes.RunDueResets(ctx, now)
	for _, r := range readers {
		if err := e.home.ForgetInserts(ctx, r); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "drop home inserts after a deferred reset", "reader", r, "err", err)
		}
		e.pub.Publish(ctx, e.keys.ReaderChannel(r), livemsg.Hid(0))
	}
	return len(readers), err
}

// BlockedUsers pages whom the viewer blocks, most recent first.
func (e *Engine) BlockedUsers(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.RelatedUserConnection, error) {
	return e.relatedUsers(ctx, paging.CursorBlocked, args, e.store.BlockedCount, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.BlockedPage(e.rep.AllowLag(ctx, viewerID), viewerID, dir, bound, limit)
	}, viewerID)
}

// MutedUsers pages whom the viewer mutes, most recent first.
func (e *Engine) MutedUsers(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.RelatedUserConnection, error) {
	return e.relatedUsers(ctx, paging.CursorMuted, args, e.store.MutedCount, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.MutedPage(e.rep.AllowLag(ctx, viewerID), viewerID, dir, bound, limit)
	}, viewerID)
}

func (e *Engine) relatedUsers(ctx context.Context, kind paging.CursorKind, args paging.PageArgs, count func(context.Context, int64) (int, error), fetch paging.FetchFunc[models.Relation], viewerID int64) (*models.RelatedUserConnection, error) {
	rows, info, err := paging.Paginate(ctx, e.metrics, kind, args, fetch, func(r models.Relation) int64 { return r.ID })
	if err != nil {
		return nil, err
	}
	total, err := count(e.rep.AllowLag(ctx, viewerID), viewerID)
	if err != nil {
		return nil, err
	}
	conn := &models.RelatedUserConnection{PageInfo: info, TotalCount: total, Edges: make([]*models.RelatedUserEdge, len(rows))}
	for i, r := range rows {
		conn.Edges[i] = &models.RelatedUserEdge{Cursor: paging.EncodeCursor(kind, r.ID), UserID: r.UserID, Since: r.FollowedAt}
	}
	return conn, nil
}

// BlockedAmong returns which of ids the viewer blocks.
func (e *Engine) BlockedAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.store.BlockedAmong(ctx, viewerID, ids)
}

// BlockedEitherWayAmong returns which of ids the viewer blocks or is
// blocked by: the authors whose posts node, nodes and repostOf do not show
// the viewer.
func (e *Engine) BlockedEitherWayAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.store.BlockedEitherWayAmong(e.rep.AllowLag(ctx, viewerID), viewerID, ids)
}

// MutedAmong returns which of ids the viewer mutes.
func (e *Engine) MutedAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.store.MutedAmong(ctx, viewerID, ids)
}

// forbiddenFollow turns a follow refused for a block into FORBIDDEN.
func forbiddenFollow(err error) error {
	if errors.Is(err, store.ErrBlocked) {
		return apperr.New(apperr.CodeForbidden, "you cannot follow this user: one of you blocks the other")
	}
	return err
}
