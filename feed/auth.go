package feed

import (
	"context"
	"errors"
	"fmt"

	"feedservice/feed/apperr"
	"feedservice/store"
)

// IssueToken signs a bearer token for user id at tokenVersion, the
// user's current token version, valid for Config.TokenTTL.
func (e *Engine) IssueToken(id, tokenVersion int64) (string, error) {
	return e.tokens.Issue(id, tokenVersion)
}

// Viewer is the user a bearer token (the header's value after "Bearer ")
// acts for: apperr.ErrBadToken for a malformed, forged or expired token,
// apperr.ErrRevokedToken for one its user revoked by logging out.
func (e *Engine) Viewer(ctx context.Context, token string) (int64, error) {
	id, version, err := e.tokens.Parse(token)
	if err != nil {
		return 0, err
	}
	if err := e.checkTokenVersion(ctx, id, version); err != nil {
		return 0, err
	}
	return id, nil
}

// checkTokenVersion answers ErrRevokedToken unless version is user id's
// current token version. The version is read as the user is, through the
// tiers: this instance's local copy (no I/O on a warm request), the Redis
// copy, MySQL's primary on a miss. A log-out drops the local copies on
// every instance by message, so another instance refuses a revoked token
// once the message arrives, and within LocalCacheTTL if it missed it.
func (e *Engine) checkTokenVersion(ctx context.Context, id, version int64) error {
	byID, err := e.cache.UsersByID(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("check the token version of user %d: %w", id, err)
	}
	u := byID[id]
	if u == nil || u.TokenVersion != version {
		return apperr.ErrRevokedToken
	}
	return nil
}

// LogOut revokes every token of the viewer, on every instance: it moves
// their token version up, refreshes the copies that carry it and drops
// the local ones here and, by message, elsewhere.
func (e *Engine) LogOut(ctx context.Context, viewerID int64) error {
	_, err := e.store.RevokeTokens(ctx, viewerID, e.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.ErrUnauthenticated
	}
	if err != nil {
		return err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
	return nil
}
