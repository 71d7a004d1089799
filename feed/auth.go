package feed

import (
	"context"
	"errors"
	"fmt"

	"feedservice/feed/livemsg"
	"feedservice/internal/apperr"
	"feedservice/store"
)

// IssueToken signs a bearer token for user id at tokenVersion, the
// user's current token version, valid for Config.TokenTTL.
func (e *Engine) IssueToken(id, tokenVersion int64) (string, error) {
	return e.tokens.Issue(id, tokenVersion)
}

// A Session is what a bearer token signs in: its user, at the token
// version it was issued with. A log-out moves the user's version up, which
// revokes every session of theirs.
type Session struct {
	User, TokenVersion int64
}

// Viewer is the user a bearer token (the header's value after "Bearer ")
// acts for: apperr.ErrBadToken for a malformed, forged or expired token,
// apperr.ErrRevokedToken for one its user revoked by logging out.
func (e *Engine) Viewer(ctx context.Context, token string) (int64, error) {
	s, err := e.SessionOf(ctx, token)
	return s.User, err
}

// SessionOf is Viewer with the token's version, for a caller that keeps
// the session (a websocket) and checks it again with CheckSession.
func (e *Engine) SessionOf(ctx context.Context, token string) (Session, error) {
	id, version, err := e.tokens.Parse(token)
	if err != nil {
		return Session{}, err
	}
	s := Session{User: id, TokenVersion: version}
	if err := e.CheckSession(ctx, s); err != nil {
		return Session{}, err
	}
	return s, nil
}

// CheckSession answers ErrRevokedToken unless s's token version is its
// user's current one. The version is read as the user is, through the
// tiers: this instance's local copy (no I/O on a warm request), the Redis
// copy, MySQL's primary on a miss. A log-out drops the local copies on
// every instance by message, so another instance refuses a revoked token
// once the message arrives, and within LocalCacheTTL if it missed it.
func (e *Engine) CheckSession(ctx context.Context, s Session) error {
	byID, err := e.cache.UsersByID(ctx, []int64{s.User})
	if err != nil {
		return fmt.Errorf("check the token version of user %d: %w", s.User, err)
	}
	u := byID[s.User]
	if u == nil || u.TokenVersion != s.TokenVersion {
		return apperr.ErrRevokedToken
	}
	return nil
}

// RevokedSessions returns those of sessions whose token was revoked. It
// reads the versions below this instance's local tier (Redis's copies,
// MySQL on a miss), for a caller told of a log-out by a message that may
// come before the local copy is dropped.
func (e *Engine) RevokedSessions(ctx context.Context, sessions []Session) ([]Session, error) {
	users := make([]int64, len(sessions))
	for i, s := range sessions {
		users[i] = s.User
	}
	byID, err := e.cache.UsersBelowLocal(ctx, users)
	if err != nil {
		return nil, fmt.Errorf("check the token versions of %d sessions: %w", len(sessions), err)
	}
	var revoked []Session
	for _, s := range sessions {
		if u := byID[s.User]; u == nil || u.TokenVersion != s.TokenVersion {
			revoked = append(revoked, s)
		}
	}
	return revoked, nil
}

// LogOut revokes every token of the viewer, on every instance: it moves
// their token version up, refreshes the copies that carry it and drops
// the local ones here and, by message, elsewhere; then it tells the
// LogOutWatcher here, and by message on every instance, to end what the
// tokens opened.
func (e *Engine) LogOut(ctx context.Context, viewerID int64) error {
	_, err := e.store.RevokeTokens(ctx, viewerID, e.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.ErrUnauthenticated
	}
	if err != nil {
		return err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
	if e.logOuts != nil {
		e.logOuts.LoggedOut([]int64{viewerID})
	}
	// After the refresh: an instance that checks the sessions on this
	// message reads the new version from Redis's copy.
	e.cache.Invalidate(ctx, livemsg.KindLogOut, []int64{viewerID})
	return nil
}

// A LogOutWatcher is told of log-outs on every instance, so that it ends
// what the revoked tokens opened (the API's websockets). Its methods are
// called on the hub's goroutine, which hands on every instance's
// messages: they must not wait.
type LogOutWatcher interface {
	// LoggedOut says that users revoked their tokens, here or on another
	// instance.
	LoggedOut(users []int64)
	// MayHaveLoggedOut says that messages may have been lost (the hub's
	// connection dropped and came back): any user may have logged out.
	MayHaveLoggedOut()
}

// WatchLogOuts has w told of every log-out. Call it before Start.
func (e *Engine) WatchLogOuts(w LogOutWatcher) {
	e.logOuts = w
	e.cache.Register(livemsg.KindLogOut, logOutMessages{w})
}

// logOutMessages hands the invalidate channel's log-out messages to a
// LogOutWatcher.
type logOutMessages struct{ w LogOutWatcher }

func (m logOutMessages) Drop(users []int64) { m.w.LoggedOut(users) }
func (m logOutMessages) DropAll()           { m.w.MayHaveLoggedOut() }
