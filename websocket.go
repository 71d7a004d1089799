package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// Websocket limits.
const (
	// WebsocketReadLimitBytes caps one incoming websocket message.
	WebsocketReadLimitBytes = 64 << 10
	// websocketWriteTimeout bounds a write to a client that stopped reading.
	websocketWriteTimeout = 10 * time.Second
)

// gorillaWebsocket adapts gorilla/websocket to gqlgen's websocket transport.
type gorillaWebsocket struct {
	// AllowedOrigins are the browser origins allowed besides the server's own
	// host; "*" allows any.
	AllowedOrigins []string
}

var _ transport.WebsocketImplementation = gorillaWebsocket{}

func (g gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		Subprotocols:    opts.Subprotocols,
		CheckOrigin:     g.checkOrigin,
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
	}
	c, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(WebsocketReadLimitBytes)
	return &gorillaConn{c: c}, nil
}

// checkOrigin lets in clients that send no Origin (not browsers), browsers
// on the server's own host, and the configured origins.
func (g gorillaWebsocket) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, allowed := range g.AllowedOrigins {
		if allowed == "*" || strings.EqualFold(allowed, origin) {
			return true
		}
	}
	return false
}

// gorillaConn is one accepted websocket. gorilla allows one concurrent
// writer, and gqlgen writes from several goroutines, so writes take a lock.
type gorillaConn struct {
	c   *websocket.Conn
	wmu sync.Mutex
}

var (
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (g *gorillaConn) NextReader() (int, io.Reader, error) {
	mt, r, err := g.c.NextReader()
	var ce *websocket.CloseError
	if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway || ce.Code == websocket.CloseNoStatusReceived) {
		return mt, nil, transport.ErrWebsocketClosed
	}
	if err != nil {
		return mt, r, err
	}
	// A message that is not Unicode text (see refuseMalformedRequest) reads
	// as empty: gqlgen refuses it as invalid and closes the socket, instead
	// of decoding U+FFFD in place of its bad bytes or half surrogate pairs.
	data, err := io.ReadAll(r)
	if err != nil || !isJSONText(data) {
		return mt, bytes.NewReader(nil), nil
	}
	return mt, bytes.NewReader(data), nil
}

func (g *gorillaConn) WriteJSON(v any) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.c.SetWriteDeadline(time.Now().Add(websocketWriteTimeout))
	return g.c.WriteJSON(v)
}

// closeInitTimeout is graphql-transport-ws's code for a client that sent no
// connection_init in time; gqlgen closes those with a generic 1002.
const closeInitTimeout = 4408

func (g *gorillaConn) WriteClose(code int, message string) error {
	if code == websocket.CloseProtocolError && message == "connection initialisation timeout" && g.c.Subprotocol() == "graphql-transport-ws" {
		code = closeInitTimeout
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	return g.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
}

func (g *gorillaConn) Close() error                      { return g.c.Close() }
func (g *gorillaConn) Subprotocol() string               { return g.c.Subprotocol() }
func (g *gorillaConn) SetReadLimit(limit int64)          { g.c.SetReadLimit(limit) }
func (g *gorillaConn) SetReadDeadline(t time.Time) error { return g.c.SetReadDeadline(t) }
