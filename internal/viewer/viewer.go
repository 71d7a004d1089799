// Package viewer carries who a request acts for through its context: the
// signed-in user, the reason their token was refused, and whether the
// request is an operator's.
package viewer

import (
	"context"
	"sync/atomic"

	"feedservice/internal/apperr"
)

type key struct{}

// identity is who a request acts for: a user id, or the reason its token
// was refused. revoked is set when the token is revoked while the request
// (or the websocket, whose operations share it) still runs.
type identity struct {
	id      int64
	err     error
	revoked atomic.Bool
}

// With marks ctx as acting for user id.
func With(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, key{}, &identity{id: id})
}

// WithBadToken marks ctx as carrying a token that was refused: every
// operation of it answers UNAUTHENTICATED, never acting as signed out.
func WithBadToken(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, key{}, &identity{err: err})
}

// Revoke marks the token of ctx's viewer as revoked from now on (its user
// logged out): what runs after it under ctx, or under any context derived
// from the one With made, acts for no one and is refused as a revoked
// token is.
func Revoke(ctx context.Context) {
	if v, _ := ctx.Value(key{}).(*identity); v != nil && v.id != 0 {
		v.revoked.Store(true)
	}
}

// TokenError is the reason the request's token was refused, if it was, or
// apperr.ErrRevokedToken once Revoke revoked it.
func TokenError(ctx context.Context) error {
	v, _ := ctx.Value(key{}).(*identity)
	switch {
	case v == nil:
		return nil
	case v.revoked.Load():
		return apperr.ErrRevokedToken
	}
	return v.err
}

// ID is the signed-in user's id, or 0 when signed out or revoked.
func ID(ctx context.Context) int64 {
	v, _ := ctx.Value(key{}).(*identity)
	if v == nil || v.revoked.Load() {
		return 0
	}
	return v.id
}

// Require is the signed-in user's id, or UNAUTHENTICATED (saying so when
// the token was revoked).
func Require(ctx context.Context) (int64, error) {
	if id := ID(ctx); id != 0 {
		return id, nil
	}
	if err := TokenError(ctx); err != nil {
		return 0, err
	}
	return 0, apperr.ErrUnauthenticated
}
