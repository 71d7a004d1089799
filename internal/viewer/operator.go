package viewer

import (
	"context"
	"crypto/subtle"
	"strings"

	"feedservice/internal/apperr"
)

type operatorKey struct{}

// ErrNotOperator refuses an operator's action to anyone else.
var ErrNotOperator = apperr.New(apperr.CodeForbidden, "only an operator may do this: send the operator token in the X-Operator-Token header")

// WithOperatorHeader marks ctx as an operator's when header is token, the
// configured operator token. With no token configured no one is.
func WithOperatorHeader(ctx context.Context, header, token string) context.Context {
	header = strings.TrimSpace(header)
	if token == "" || header == "" {
		return ctx
	}
	if subtle.ConstantTimeCompare([]byte(header), []byte(token)) != 1 {
		return ctx
	}
	return context.WithValue(ctx, operatorKey{}, true)
}

// RequireOperator is nil for an operator's request, else ErrNotOperator.
func RequireOperator(ctx context.Context) error {
	if ok, _ := ctx.Value(operatorKey{}).(bool); ok {
		return nil
	}
	return ErrNotOperator
}
