// Package viewer carries who a request acts for through its context: the
// signed-in user, the reason their token was refused, and whether the
// request is an operator's.
package viewer

import (
	"context"

	"feedservice/feed/apperr"
)

type key struct{}

// identity is who a request acts for: a user id, or the reason its token was refused.
type identity struct {
	id  int64
	err error
}

// With marks ctx as acting for user id.
func With(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, key{}, identity{id: id})
}

// WithBadToken marks ctx as carrying a token that was refused: every
// operation of it answers UNAUTHENTICATED, never acting as signed out.
func WithBadToken(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, key{}, identity{err: err})
}

// TokenError is the reason the request's token was refused, if it was.
func TokenError(ctx context.Context) error {
	v, _ := ctx.Value(key{}).(identity)
	return v.err
}

// ID is the signed-in user's id, or 0 when signed out.
func ID(ctx context.Context) int64 {
	v, _ := ctx.Value(key{}).(identity)
	return v.id
}

// Require is the signed-in user's id, or UNAUTHENTICATED.
func Require(ctx context.Context) (int64, error) {
	if id := ID(ctx); id != 0 {
		return id, nil
	}
	return 0, apperr.ErrUnauthenticated
}
