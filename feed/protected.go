package feed

import (
	"context"
	"errors"

	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Protected accounts. A protected user's new followers need their
// approval: a follow becomes a request (store.FollowOrRequest), which the
// user approves (the follow then comes, with everything a follow does)
// or rejects, and the requester may withdraw by unfollowing. Turning
// protection off approves every waiting request; turning it on keeps the
// followers. The user's posts are for them and their approved followers
// only: the feed's entries are filtered in timeline.Reads.VisibleTo, the
// timeline here, node, nodes and repostOf through PostHidden, and a
// repost by anyone but the author is refused. Counts stay public.

// FollowRequests pages who waits for the viewer's approval, most recent
// request first.
func (e *Engine) FollowRequests(ctx context.Context, viewerID int64, args paging.PageArgs) (*models.RelatedUserConnection, error) {
	return e.relatedUsers(ctx, paging.CursorRequests, args, e.store.FollowRequestCount, func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]models.Relation, error) {
		return e.store.FollowRequestsPage(ctx, viewerID, dir, bound, limit)
	}, viewerID)
}

// ApproveFollowRequest turns userID's request to follow the viewer into
// the follow. Approving a follower again changes nothing; NOT_FOUND when
// userID neither asked nor follows.
func (e *Engine) ApproveFollowRequest(ctx context.Context, viewerID, userID int64) (*models.FollowPayload, error) {
	approved, err := e.approve(ctx, viewerID, userID)
	if err == nil && !approved {
		follows, ferr := e.store.Follows(ctx, userID, viewerID)
		if ferr != nil {
			return nil, ferr
		}
		if !follows {
			if users, uerr := e.Users(ctx, []int64{userID}); uerr == nil && users[0] != nil {
				return nil, apperr.NotFound("this user has not asked to follow you")
			}
		}
	}
	return e.followPayload(ctx, viewerID, userID, err)
}

// RejectFollowRequest drops userID's request to follow the viewer.
// Idempotent.
func (e *Engine) RejectFollowRequest(ctx context.Context, viewerID, userID int64) (*models.FollowPayload, error) {
	_, err := e.store.DropFollowRequest(ctx, viewerID, viewerID, userID)
	return e.followPayload(ctx, viewerID, userID, err)
}

// approve makes requester follow target, as their request asked, and
// runs what follows a follow's commit. The follower is not the actor:
// their inbox waits for the stream event, as after RemoveFollower.
func (e *Engine) approve(ctx context.Context, target, requester int64) (bool, error) {
	approved, err := e.store.ApproveFollowRequest(ctx, target, requester, e.ids.Next(), e.now().UTC())
	if approved {
		e.relationChanged(ctx, requester, target, true, nil)
	}
	return approved, err
}

// approveAllRequests approves every request waiting for target: they
// turned protection off. A request cannot be made afterwards (a follow
// reads the protection under the lock its change takes), so none is left.
// The change's user_changed event approves them again
// (fanout.Stream.approveWaitingRequests): a process that dies between the
// commit and this loop leaves none waiting for long.
func (e *Engine) approveAllRequests(ctx context.Context, target int64) error {
	requesters, err := e.store.FollowRequesterIDs(ctx, target)
	if err != nil {
		return err
	}
	for _, r := range requesters {
		if _, err := e.approve(ctx, target, r); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// withdrawRequest drops the viewer's request to follow userID, if any:
// unfollow withdraws it.
func (e *Engine) withdrawRequest(ctx context.Context, viewerID, userID int64) error {
	_, err := e.store.DropFollowRequest(ctx, viewerID, userID, viewerID)
	return err
}

// RequestedAmong returns which of ids the viewer has asked to follow and
// waits for.
func (e *Engine) RequestedAmong(ctx context.Context, viewerID int64, ids []int64) (map[int64]bool, error) {
	return e.store.RequestedAmong(ctx, viewerID, ids)
}

// PostHidden says whether a protected account hides its posts from the
// viewer (0: signed out): author is protected, and the viewer is neither
// the author nor one of their followers (follows says whether they
// follow).
func PostHidden(viewerID int64, author *models.User, follows bool) bool {
	return author != nil && author.IsProtected && author.ID != viewerID && !follows
}

// timelineHidden says whether user's timeline is closed to the viewer (0:
// signed out) because user is protected.
func (e *Engine) timelineHidden(ctx context.Context, viewerID int64, user *models.User) (bool, error) {
	if !user.IsProtected || user.ID == viewerID {
		return false, nil
	}
	if viewerID == 0 {
		return true, nil
	}
	follows, err := e.store.Follows(e.rep.AllowLag(ctx, viewerID), viewerID, user.ID)
	return !follows, err
}

// repostAllowed refuses a repost of a protected account's post by anyone
// but its author: NOT_FOUND to whom it is hidden (as node would not show
// it), FORBIDDEN to its followers. authors are the target's and its
// original's (the latter last).
func (e *Engine) repostAllowed(ctx context.Context, viewerID int64, authors []int64) error {
	closed, err := e.reads.ClosedAuthors(ctx, viewerID, authors)
	if err != nil {
		return err
	}
	if len(closed) > 0 {
		return apperr.NotFound("that post does not exist or was deleted")
	}
	original := authors[len(authors)-1]
	if original == viewerID {
		return nil
	}
	users, err := e.Users(ctx, []int64{original})
	if err != nil {
		return err
	}
	if users[0] != nil && users[0].IsProtected {
		return apperr.New(apperr.CodeForbidden, "the posts of a protected account cannot be reposted")
	}
	return nil
}
