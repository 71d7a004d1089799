package sockets

import (
	"bytes"
	"io"

	"feedservice/api/extensions"
	"feedservice/internal/apperr"
)

// NextReader reads the next message for gqlgen, answering in its place an
// operation whose payload has a member of the wrong JSON type (variables
// that are not an object, a query that is not a string): gqlgen would
// refuse it as "invalid json", without a code or the member. The first
// message is always passed on: it is gqlgen's to accept as connection_init,
// or to close the socket for.
func (g *gorillaConn) NextReader() (int, io.Reader, error) {
	for {
		mt, r, err := g.nextMessage()
		if err != nil || g.passed == 0 {
			g.passed++
			return mt, r, err
		}
		data, _ := io.ReadAll(r) // nextMessage's reader is in memory
		id, msg := extensions.RefusedSocketOperation(data)
		if msg == "" {
			g.passed++
			return mt, bytes.NewReader(data), nil
		}
		// As gqlgen ends an operation it refuses: an error, then complete.
		errs := []map[string]any{{"message": msg, "extensions": map[string]any{"code": string(apperr.CodeBadUserInput)}}}
		for _, m := range []map[string]any{{"type": "error", "id": id, "payload": errs}, {"type": "complete", "id": id}} {
			if err := g.WriteJSON(m); err != nil {
				return mt, nil, err
			}
		}
	}
}
