package gqlclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Protocol is the websocket subprotocol the socket speaks: the graphql-ws
// library's.
const Protocol = "graphql-transport-ws"

// UnreadCountSubscription is the red dot's live count.
const UnreadCountSubscription = "subscription { unreadCount }"

// Socket is one websocket with one subscription (id "1") on it.
type Socket struct {
	conn *websocket.Conn
	wmu  sync.Mutex // one writer at a time: the reader answers pings
}

// Message is one message of graphql-transport-ws.
type Message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Subscribe dials the server at url (http://host:port), sends
// connection_init with token, and subscribes to query. It does not wait for
// the server's answers: Next reads them.
func Subscribe(ctx context.Context, url, token, query string, handshake time.Duration) (*Socket, error) {
	d := websocket.Dialer{Subprotocols: []string{Protocol}, HandshakeTimeout: handshake}
	conn, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(url, "http")+"/query", nil)
	if err != nil {
		return nil, err
	}
	s := &Socket{conn: conn}
	msgs := []map[string]any{
		{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}},
		{"type": "subscribe", "id": "1", "payload": map[string]any{"query": query}},
	}
	for _, m := range msgs {
		if err := s.Send(m); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return s, nil
}

// Send writes one message, within 10 seconds.
func (s *Socket) Send(m any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return s.conn.WriteJSON(m)
}

// Next reads the next message other than a ping, which it answers with a
// pong. An error means the socket is closed or broken.
func (s *Socket) Next() (Message, error) {
	for {
		var m Message
		if err := s.conn.ReadJSON(&m); err != nil {
			return m, err
		}
		if m.Type == "ping" {
			if err := s.Send(map[string]string{"type": "pong"}); err != nil {
				return m, err
			}
			continue
		}
		return m, nil
	}
}

// Close closes the socket without a close handshake.
func (s *Socket) Close() error { return s.conn.Close() }

// UnreadCount is the count a "next" message of the unreadCount subscription
// carries; ok is false for any other message.
func (m Message) UnreadCount() (n int, ok bool) {
	if m.Type != "next" {
		return 0, false
	}
	var p struct {
		Data struct{ UnreadCount *int }
	}
	if json.Unmarshal(m.Payload, &p) != nil || p.Data.UnreadCount == nil {
		return 0, false
	}
	return *p.Data.UnreadCount, true
}

// Err is an error naming the errors a "next" message carries, or nil.
func (m Message) Err() error {
	var p struct{ Errors []Error }
	if json.Unmarshal(m.Payload, &p) != nil || len(p.Errors) == 0 {
		return nil
	}
	return fmt.Errorf("subscription errors: %s", m.Payload)
}
