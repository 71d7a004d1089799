package resolvers

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"feedservice/internal/apperr"

	"github.com/99designs/gqlgen/graphql"
)

func presentFor(t *testing.T, err error) (code, message, logged string) {
	t.Helper()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	requestID := func(context.Context) string { return "req-42" }
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{})
	ctx = graphql.WithResponseContext(ctx, graphql.DefaultErrorPresenter, nil)
	e := ErrorPresenter(logger, requestID, 1<<20)(ctx, err)
	code, _ = e.Extensions["code"].(string)
	return code, e.Message, log.String()
}

// A panic in a resolver becomes an internal error: the client sees the
// code and the request id, the log sees the panic and its stack.
func TestRecoveredPanicIsAnInternalError(t *testing.T) {
	var log bytes.Buffer
	recovered := Recover(slog.New(slog.NewTextHandler(&log, nil)), func(context.Context) string { return "req-42" })(context.Background(), "boom: secret detail")
	if !strings.Contains(log.String(), "boom: secret detail") || !strings.Contains(log.String(), "stack") {
		t.Fatalf("the panic is not logged with its stack: %s", log.String())
	}
	code, message, _ := presentFor(t, recovered)
	if code != string(apperr.CodeInternal) {
		t.Fatalf("code %q, want %s", code, apperr.CodeInternal)
	}
	if strings.Contains(message, "secret") || !strings.Contains(message, "req-42") {
		t.Fatalf("message %q leaks the panic or lacks the request id", message)
	}
}

// An engine error keeps its own code and message; any other error is
// internal, logged with its text, and sent without it but with the request
// id. (The logger adds the request id to the line: api_metrics_test.go.)
func TestErrorPresenterCodes(t *testing.T) {
	code, message, _ := presentFor(t, apperr.BadInput("first and last are at most %d", 100))
	if code != string(apperr.CodeBadUserInput) || message != "first and last are at most 100" {
		t.Fatalf("engine error presented as %s %q", code, message)
	}
	code, message, logged := presentFor(t, errors.New("dial tcp 10.0.0.1:3306: connection refused"))
	if code != string(apperr.CodeInternal) || strings.Contains(message, "3306") {
		t.Fatalf("internal error presented as %s %q", code, message)
	}
	if !strings.Contains(logged, "3306") || !strings.Contains(message, "req-42") {
		t.Fatalf("internal error not logged with its text (%s), or sent without the request id (%q)", logged, message)
	}
}

// A message is sent whole up to MaxErrorMessageBytes and cut past it, at a
// character's start.
func TestErrorMessageCappedAtItsEdge(t *testing.T) {
	atCap := strings.Repeat("a", MaxErrorMessageBytes)
	if _, message, _ := presentFor(t, apperr.BadInput("%s", atCap)); message != atCap {
		t.Fatalf("a message of %d bytes was changed to %d bytes", len(atCap), len(message))
	}
	over := strings.Repeat("é", MaxErrorMessageBytes) // twice the cap, in 2-byte characters
	_, message, _ := presentFor(t, apperr.BadInput("%s", over))
	if len(message) > MaxErrorMessageBytes || !strings.HasSuffix(message, "…") || !utf8.ValidString(message) {
		t.Fatalf("a message of %d bytes was sent as %d bytes: %q", len(over), len(message), message[len(message)-8:])
	}
}

// The id parsers quote at most apperr.MaxQuotedBytes of what they refuse.
func TestIDRefusalQuotesLittleOfTheInput(t *testing.T) {
	long := strings.Repeat("A", 20_000)
	for name, parse := range map[string]func() error{
		"parseAnyID": func() error { _, _, err := parseAnyID(long); return err },
		"parseID":    func() error { _, err := parseID("User", long); return err },
	} {
		err := parse()
		if apperr.CodeOf(err) != apperr.CodeBadUserInput || len(err.Error()) > 200 {
			t.Errorf("%s of a %d-byte id: %v (%d bytes)", name, len(long), apperr.CodeOf(err), len(err.Error()))
		}
	}
}
