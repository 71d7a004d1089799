// Package apperr holds the errors the engine shows its clients: a code
// (sent as extensions.code) and a message a person understands.
package apperr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Code is the client-facing class of an error, sent as extensions.code.
type Code string

// The codes of the public API contract.
const (
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeForbidden       Code = "FORBIDDEN"
	CodeNotFound        Code = "NOT_FOUND"
	CodeBadUserInput    Code = "BAD_USER_INPUT"
	CodeRateLimited     Code = "RATE_LIMITED"
	CodeInternal        Code = "INTERNAL_SERVER_ERROR"
	// CodeUnavailable says a backend (MySQL, or Redis where nothing can
	// stand in for it) cannot be reached: retry; a retried change is
	// completed, never applied twice.
	CodeUnavailable Code = "UNAVAILABLE"
	// CodeResponseTooLarge says an answer would pass the server's cap on
	// the bytes of one (MAX_RESPONSE_BYTES): ask for less in one request.
	CodeResponseTooLarge Code = "RESPONSE_TOO_LARGE"
)

// Error is an error with a message safe to show a person and its code. Any
// other error reaching the edge is internal: logged, never shown.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, on a RATE_LIMITED error, is how long until the action can
	// succeed again; the client sees it as extensions.retryAfter (seconds).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up so that a
// client that waits that long is not refused again; 0 when there is none.
func (e *Error) RetryAfterSeconds() int { return int(math.Ceil(e.RetryAfter.Seconds())) }

// New is an error of code with a message made as fmt.Sprintf makes it.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// BadInput is a BAD_USER_INPUT error with a message a person understands.
func BadInput(format string, args ...any) error { return New(CodeBadUserInput, format, args...) }

// NotFound is a NOT_FOUND error.
func NotFound(format string, args ...any) error { return New(CodeNotFound, format, args...) }

// ErrUnauthenticated is returned where a signed-in viewer is required.
var ErrUnauthenticated = New(CodeUnauthenticated, "sign in first: this needs a valid bearer token")

// ErrBadCredentials is the one answer to a wrong username or password.
var ErrBadCredentials = New(CodeUnauthenticated, "wrong username or password")

// ErrBadToken is returned for a malformed, forged or expired token.
var ErrBadToken = New(CodeUnauthenticated, "the bearer token is malformed, forged or expired: sign in again")

// ErrRevokedToken is returned for a token its user revoked by logging out.
var ErrRevokedToken = New(CodeUnauthenticated, "the bearer token was revoked (its user logged out): sign in again")

// CodeOf is the client code of err: its own for an *Error, else internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// RateLimited is a RATE_LIMITED error.
func RateLimited(format string, args ...any) error { return New(CodeRateLimited, format, args...) }

// ErrUnavailable is what a client is told when a backend cannot be reached.
var ErrUnavailable = New(CodeUnavailable, "the service cannot reach its database just now: retry in a moment; a change retried is completed where it was begun, and never applied twice")

// MaxQuotedBytes is the most of a client's input a message quotes: an id,
// a cursor or a name quoted whole would let a request's answer grow with
// what it sent, once per error (150 aliases of one long id were 3 MB).
const MaxQuotedBytes = 64

// Quote is s quoted for a message as %q quotes it, but no more than its
// first MaxQuotedBytes (cut at a character's start), followed by its length
// when it was cut.
func Quote(s string) string {
	if len(s) <= MaxQuotedBytes {
		return strconv.Quote(s)
	}
	cut := MaxQuotedBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
