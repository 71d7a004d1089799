package feed

import "context"

type viewerKey struct{}

// viewer is who a request acts for: a user id, or the reason its token was refused.
type viewer struct {
	id  int64
	err error
}

// WithViewer marks ctx as acting for user id.
func WithViewer(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, viewerKey{}, viewer{id: id})
}

// WithBadToken marks ctx as carrying a token that was refused: every
// operation of it answers UNAUTHENTICATED, never acting as signed out.
func WithBadToken(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, viewerKey{}, viewer{err: err})
}

// TokenError is the reason the request's token was refused, if it was.
func TokenError(ctx context.Context) error {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	return v.err
}

// ViewerID is the signed-in user's id, or 0 when signed out.
func ViewerID(ctx context.Context) int64 {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	return v.id
}

// RequireViewer is the signed-in user's id, or UNAUTHENTICATED.
func RequireViewer(ctx context.Context) (int64, error) {
	if id := ViewerID(ctx); id != 0 {
		return id, nil
	}
	return 0, ErrUnauthenticated
}
