package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/feed"
)

// RequestIDFunc returns the id of the request ctx belongs to, for logs.
type RequestIDFunc func(ctx context.Context) string

// ErrorPresenter decides once, at the edge, what a client sees of an error:
// an engine error's own message and code; a malformed or invalid document is
// BAD_USER_INPUT, and so is a request body that is not a GraphQL request (or
// is larger than bodyLimitBytes); anything else is logged with the request
// id and sent as INTERNAL_SERVER_ERROR without its text, except a backend
// that cannot be reached, which is UNAVAILABLE (the client may retry).
func ErrorPresenter(log *slog.Logger, requestID RequestIDFunc, bodyLimitBytes int64) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var engineErr *feed.Error
		switch {
		case errors.As(err, &engineErr):
			gqlErr.Message = engineErr.Message
			setCode(gqlErr, engineErr.Code)
		case isDocumentError(gqlErr):
			setCode(gqlErr, feed.CodeBadUserInput)
		case !graphql.HasOperationContext(ctx):
			// The transport failed to read the request before any operation
			// existed. Its message would echo the body back: replace it.
			gqlErr.Message = fmt.Sprintf("the request body must be a JSON GraphQL request of at most %d bytes", bodyLimitBytes)
			setCode(gqlErr, feed.CodeBadUserInput)
		case feed.IsUnavailable(err):
			// Logged as a warning: the outage is the operator's news, not a bug.
			log.Warn("backend unavailable", "requestId", requestID(ctx), "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = feed.ErrUnavailable.Message
			setCode(gqlErr, feed.CodeUnavailable)
		case errors.Is(err, context.Canceled):
			// The client went away; nobody reads this answer, and it is no fault.
			setCode(gqlErr, feed.CodeInternal)
			gqlErr.Message = "request cancelled"
		default:
			id := requestID(ctx)
			log.Error("internal error", "requestId", id, "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "internal server error (request " + id + ")"
			setCode(gqlErr, feed.CodeInternal)
		}
		return gqlErr
	}
}

// isDocumentError tells gqlgen's own errors about the request document
// (parse, validation, variable coercion) from resolver errors.
func isDocumentError(e *gqlerror.Error) bool {
	code, _ := e.Extensions["code"].(string)
	return code == errcode.ParseFailed || code == errcode.ValidationFailed
}

func setCode(e *gqlerror.Error, code feed.Code) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = string(code)
}

// Recover turns a panic in a resolver into an internal error with its stack
// in the log; the client sees INTERNAL_SERVER_ERROR, the server lives on.
func Recover(log *slog.Logger, requestID RequestIDFunc) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.Error("panic in resolver", "requestId", requestID(ctx), "panic", p, "stack", string(debug.Stack()))
		return fmt.Errorf("panic: %v", p)
	}
}
