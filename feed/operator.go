package feed

import (
	"context"
	"crypto/subtle"
	"strings"
)

type operatorKey struct{}

// ErrNotOperator refuses an operator's action to anyone else.
var ErrNotOperator = newError(CodeForbidden, "only an operator may do this: send the operator token in the X-Operator-Token header")

// WithOperatorHeader marks ctx as an operator's when header is the
// configured operator token. With no token configured no one is.
func (e *Engine) WithOperatorHeader(ctx context.Context, header string) context.Context {
	header = strings.TrimSpace(header)
	if e.cfg.OperatorToken == "" || header == "" {
		return ctx
	}
	if subtle.ConstantTimeCompare([]byte(header), []byte(e.cfg.OperatorToken)) != 1 {
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
