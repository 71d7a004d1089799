package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"unicode/utf8"

	"feedservice/feed"
	"feedservice/internal/apperr"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// RequestIDFunc returns the id of the request ctx belongs to, for the
// message of an internal error. (The logger adds it to log lines itself.)
type RequestIDFunc func(ctx context.Context) string

// ErrorPresenter decides once, at the edge, what a client sees of an error:
// an engine error's own message and code (and, when rate limited, the
// seconds to wait as extensions.retryAfter); a malformed, invalid or too
// complex document is BAD_USER_INPUT, and so is a request body that is not
// a GraphQL request (or is larger than bodyLimitBytes); a persisted query's
// unknown hash keeps the code Apollo's client looks for; a backend that
// cannot be reached is UNAVAILABLE (the client may retry); anything else is
// logged with the request id and sent as INTERNAL_SERVER_ERROR without its
// text.
func ErrorPresenter(log *slog.Logger, requestID RequestIDFunc, bodyLimitBytes int64) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var engineErr *apperr.Error
		switch {
		case errors.As(err, &engineErr):
			gqlErr.Message = engineErr.Message
			setCode(gqlErr, engineErr.Code)
			if engineErr.Code == apperr.CodeRateLimited {
				gqlErr.Extensions["retryAfter"] = engineErr.RetryAfterSeconds()
			}
		case gqlErr.Extensions["code"] == errPersistedQueryNotFound:
		case isDocumentError(gqlErr):
			setCode(gqlErr, apperr.CodeBadUserInput)
		case !graphql.HasOperationContext(ctx):
			// The transport failed to read the request before any operation
			// existed. Its message would echo the body back: replace it.
			gqlErr.Message = fmt.Sprintf("the request body must be a JSON GraphQL request of at most %d bytes", bodyLimitBytes)
			setCode(gqlErr, apperr.CodeBadUserInput)
		case feed.IsUnavailable(err):
			// Logged as a warning: the outage is the operator's news, not a bug.
			log.Warn("backend unavailable", "requestId", requestID(ctx), "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = apperr.ErrUnavailable.Message
			setCode(gqlErr, apperr.CodeUnavailable)
		case errors.Is(err, context.Canceled):
			// The client went away; nobody reads this answer, and it is no fault.
			setCode(gqlErr, apperr.CodeInternal)
			gqlErr.Message = "request cancelled"
		default:
			id := requestID(ctx)
			log.ErrorContext(ctx, "internal error", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "internal server error (request " + id + ")"
			setCode(gqlErr, apperr.CodeInternal)
		}
		gqlErr.Message = capMessage(gqlErr.Message)
		return gqlErr
	}
}

// MaxErrorMessageBytes is the longest message an error is sent with. The
// API's own messages quote a client's input only as far as apperr.Quote
// does; this bounds any other (a library's) that would quote more.
const MaxErrorMessageBytes = 1024

// capMessage is msg cut to MaxErrorMessageBytes, at a character's start,
// with an ellipsis where it was cut.
func capMessage(msg string) string {
	if len(msg) <= MaxErrorMessageBytes {
		return msg
	}
	const ellipsis = "…"
	cut := MaxErrorMessageBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + ellipsis
}

// Codes that gqlgen's extensions set on their own refusals.
const (
	errComplexityLimit        = "COMPLEXITY_LIMIT_EXCEEDED"
	errPersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
)

// isDocumentError tells gqlgen's own errors about the request document
// (parse, validation, variable coercion, complexity) from resolver errors.
func isDocumentError(e *gqlerror.Error) bool {
	code, _ := e.Extensions["code"].(string)
	return code == errcode.ParseFailed || code == errcode.ValidationFailed || code == errComplexityLimit
}

func setCode(e *gqlerror.Error, code apperr.Code) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = string(code)
}

// Recover turns a panic in a resolver into an internal error with its stack
// in the log; the client sees INTERNAL_SERVER_ERROR, the server lives on.
func Recover(log *slog.Logger, requestID RequestIDFunc) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "panic", p, "stack", string(debug.Stack()))
		return fmt.Errorf("panic: %v", p)
	}
}
