package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

// wsPadded is a message of exactly size bytes: format with its one %s
// filled with padding.
func wsPadded(t *testing.T, format string, size int) []byte {
	t.Helper()
	pad := size - len(format) + len("%s")
	if pad < 0 {
		t.Fatalf("a message of %d bytes cannot hold %q", size, format)
	}
	return []byte(fmt.Sprintf(format, strings.Repeat("x", pad)))
}

// sendRaw writes one text message as it is.
func (c *liveConn) sendRaw(msg []byte) {
	c.t.Helper()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(testenv.Scale(5 * time.Second)))
	if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
		c.t.Fatalf("send %d bytes: %v", len(msg), err)
	}
}

// TestWebsocketMessageLimit: a message of WS_MAX_MESSAGE_BYTES is read, one
// byte more closes the socket with 1009 (message too big), both for
// connection_init and for a message after it. gqlgen's own 1 MiB default
// used to replace the adapter's limit once the socket was accepted.
func TestWebsocketMessageLimit(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	token := s.signUp(t, "ann").Token
	limit := s.app.cfg.WebsocketMaxMessageBytes
	if limit != settings.DefaultWebsocketMaxMessageBytes {
		t.Fatalf("the test server's limit is %d, not the default %d", limit, settings.DefaultWebsocketMaxMessageBytes)
	}
	initMsg := `{"type":"connection_init","payload":{"Authorization":"Bearer ` + token + `","pad":"%s"}}`
	queryMsg := `{"id":"1","type":"subscribe","payload":{"query":"{ __typename }","extensions":{"pad":"%s"}}}`
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{{"at the limit", limit, true}, {"one byte over", limit + 1, false}} {
		t.Run("connection_init "+tc.name, func(t *testing.T) {
			c := liveDial(t, s, liveTransportWS)
			c.sendRaw(wsPadded(t, initMsg, tc.size))
			if tc.ok {
				c.expectAck(5 * time.Second)
			} else {
				c.expectClose(websocket.CloseMessageTooBig, 5*time.Second)
			}
		})
		t.Run("operation "+tc.name, func(t *testing.T) {
			c := liveConnect(t, s, liveTransportWS, token)
			c.sendRaw(wsPadded(t, queryMsg, tc.size))
			if !tc.ok {
				c.expectClose(websocket.CloseMessageTooBig, 5*time.Second)
				return
			}
			res, end, err := c.event("1", 5*time.Second)
			if err != nil || end != nil || string(res.Data) != `{"__typename":"Query"}` {
				t.Fatalf("a message of %d bytes: %s %+v, end %v, err %v", tc.size, res.Data, res.Errors, end, err)
			}
		})
	}
}
