// Package sockets is the websocket transport of /query: gorilla/websocket
// adapted to gqlgen's transport (the accepted sockets, their shutdown,
// their messages), each socket's session and its end at a log-out, and
// each socket's own budgets of subscription starts and pings.
package sockets

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"feedservice/api/extensions"
	"feedservice/internal/apperr"
	"feedservice/internal/ratelimit"
)

// Websocket limits.
const (
	// websocketWriteTimeout bounds a write to a client that stopped reading.
	websocketWriteTimeout = 10 * time.Second
	// websocketCloseGrace is how long after its request ends a socket that
	// gqlgen left open is closed by the adapter.
	websocketCloseGrace = time.Second
	// websocketGoAwayWait is how long a server shutting down waits for
	// clients to answer its close frame before it drops their connections.
	websocketGoAwayWait = time.Second
)

// Websocket close codes of graphql-ws (graphql-transport-ws); the legacy
// protocol gets the same codes after its connection_error message.
const (
	CloseUnauthorized    = 4401 // connection_init without a token
	CloseForbidden       = 4403 // a malformed, forged or expired token
	CloseTooManyRequests = 4429 // the user holds Sessions.MaxPerUser already
)

// CloseGoingAway is the close code a server shutting down sends (RFC 6455).
const (
	CloseGoingAway       = websocket.CloseGoingAway
	closeGoingAwayReason = "server shutting down"
)

// Gorilla adapts gorilla/websocket to gqlgen's websocket transport.
type Gorilla struct {
	// AllowOrigin says whether a browser origin other than the server's own
	// host may open a socket (ALLOWED_ORIGINS); nil allows none.
	AllowOrigin func(origin string) bool
	// Metrics counts the websockets; nil counts nothing.
	Metrics *Metrics
	// Conns tracks the accepted sockets, for the shutdown.
	Conns *Conns
	// ReadLimit caps one incoming message, in bytes (WS_MAX_MESSAGE_BYTES);
	// the transport's PayloadReadLimit must be the same, or it replaces
	// this with its own default once the socket is accepted.
	ReadLimit int64
	// SubscribeRate and PingRate are each socket's budgets of subscription
	// starts (WS_SUBSCRIBE_RATE) and pings (WS_PING_RATE).
	SubscribeRate, PingRate ratelimit.Rate
}

var _ transport.WebsocketImplementation = Gorilla{}

// Accept upgrades the request to a websocket for gqlgen's transport: the
// socket is tracked in Conns and counted in Metrics, and given to the
// request's Session (WithSession).
func (g Gorilla) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		Subprotocols:    opts.Subprotocols,
		CheckOrigin:     g.checkOrigin,
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
	}
	// The server's ReadTimeout and WriteTimeout are for plain requests; a
	// websocket lives on, bounded by its pings and the deadline each of its
	// writes sets. net/http clears the read deadline on Hijack, not the
	// write deadline: clear both here rather than rely on every write.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	c, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(g.ReadLimit)
	protocol := c.Subprotocol()
	if protocol == "" {
		protocol = "graphql-ws" // gqlgen's choice for a client that names none
	}
	conn := &gorillaConn{c: c, metrics: g.Metrics, protocol: protocol, conns: g.Conns,
		rates: &socketRates{subscribe: g.SubscribeRate, ping: g.PingRate}}
	if s := SessionOf(r.Context()); s != nil {
		s.conn = conn
	}
	g.Metrics.accepted(protocol)
	if !g.Conns.add(conn) {
		conn.WriteClose(CloseGoingAway, closeGoingAwayReason)
		conn.Close()
		return nil, errors.New("server shutting down")
	}
	// gqlgen leaves a socket open when connection_init's payload is not a
	// JSON object; close what is still open a moment after it is done with
	// the request (the moment lets its own close send the close frame).
	context.AfterFunc(r.Context(), func() { time.AfterFunc(websocketCloseGrace, func() { conn.Close() }) })
	return conn, nil
}

// checkOrigin lets in clients that send no Origin (not browsers), browsers
// on the server's own host, and the configured origins.
func (g Gorilla) checkOrigin(r *http.Request) bool {
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
	return g.AllowOrigin != nil && g.AllowOrigin(origin)
}

// gorillaConn is one accepted websocket. gorilla allows one concurrent
// writer, and gqlgen writes from several goroutines, so writes take a lock.
type gorillaConn struct {
	c     *websocket.Conn
	wmu   sync.Mutex
	conns *Conns

	metrics   *Metrics
	protocol  string
	closeCode atomic.Int32 // the first close code sent or received
	closeOnce sync.Once
	passed    int // messages NextReader passed on to gqlgen; its reader's alone
	rates     *socketRates
}

var (
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (g *gorillaConn) nextMessage() (int, io.Reader, error) {
	mt, r, err := g.c.NextReader()
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		g.closeCode.CompareAndSwap(0, int32(ce.Code))
	} else if err != nil {
		// The connection broke (or went silent past the ping deadline)
		// without a close frame.
		g.closeCode.CompareAndSwap(0, websocket.CloseAbnormalClosure)
	}
	if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway || ce.Code == websocket.CloseNoStatusReceived) {
		return mt, nil, transport.ErrWebsocketClosed
	}
	if err != nil {
		return mt, r, err
	}
	// A message that is not Unicode text (see extensions.RefuseMalformedRequest) reads
	// as empty: gqlgen refuses it as invalid and closes the socket, instead
	// of decoding U+FFFD in place of its bad bytes or half surrogate pairs.
	data, err := io.ReadAll(r)
	if err != nil || !extensions.IsJSONText(data) {
		return mt, bytes.NewReader(nil), nil
	}
	if !g.pingAllowed(data) {
		g.refusePings()
		return mt, nil, transport.ErrWebsocketClosed
	}
	return mt, bytes.NewReader(data), nil
}

func (g *gorillaConn) WriteJSON(v any) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.c.SetWriteDeadline(time.Now().Add(websocketWriteTimeout))
	return g.c.WriteJSON(v)
}

// CloseInitTimeout is graphql-transport-ws's code for a client that sent no
// connection_init in time; gqlgen closes those with a generic 1002.
const CloseInitTimeout = 4408

func (g *gorillaConn) WriteClose(code int, message string) error {
	if code == websocket.CloseProtocolError && message == "connection initialisation timeout" && g.c.Subprotocol() == "graphql-transport-ws" {
		code = CloseInitTimeout
	}
	g.closeCode.CompareAndSwap(0, int32(code))
	g.wmu.Lock()
	defer g.wmu.Unlock()
	return g.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
}

// closeWith ends a socket that was accepted: on the legacy graphql-ws
// protocol a connection_error with err's message first, then a close frame
// with code and reason; the client gets websocketCloseGrace to answer it
// (the transport's reader then closes the socket and ends its
// subscriptions) before the connection is dropped.
func (g *gorillaConn) closeWith(code int, reason string, err *apperr.Error) {
	if g.protocol == "graphql-ws" {
		g.WriteJSON(map[string]any{"type": "connection_error", "payload": map[string]any{
			"message": err.Error(), "extensions": map[string]any{"code": string(err.Code)}}})
	}
	g.WriteClose(code, reason)
	time.AfterFunc(websocketCloseGrace, func() { g.Close() })
}

// Close closes the socket; the first call counts it as closed, with 1006
// (abnormal closure) when no close frame went either way first.
func (g *gorillaConn) Close() error {
	g.conns.remove(g)
	g.closeOnce.Do(func() {
		code := int(g.closeCode.Load())
		if code == 0 {
			code = websocket.CloseAbnormalClosure
		}
		g.metrics.closed(g.protocol, code)
	})
	return g.c.Close()
}

func (g *gorillaConn) Subprotocol() string               { return g.c.Subprotocol() }
func (g *gorillaConn) SetReadLimit(limit int64)          { g.c.SetReadLimit(limit) }
func (g *gorillaConn) SetReadDeadline(t time.Time) error { return g.c.SetReadDeadline(t) }

// Conns is the set of accepted websockets of one server, so that a
// server shutting down can tell each client it is going away (the HTTP
// server's Shutdown does not see hijacked connections). A nil set tracks
// nothing.
type Conns struct {
	mu      sync.Mutex
	conns   map[*gorillaConn]struct{}
	closing bool
	empty   chan struct{} // closed when closing and the last socket is gone
}

// add registers c; it refuses when the server is shutting down.
func (s *Conns) add(c *gorillaConn) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	if s.conns == nil {
		s.conns = map[*gorillaConn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Conns) remove(c *gorillaConn) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.closing && len(s.conns) == 0 && s.empty != nil {
		close(s.empty)
		s.empty = nil
	}
}

// GoAway closes every open websocket with 1001 (going away) and refuses new
// ones. Each client gets websocketGoAwayWait to answer the close frame (the
// transport's reader then closes the socket and ends its subscriptions);
// the sockets still open after that are dropped. It returns how many
// sockets it closed.
func (s *Conns) GoAway() int {
	s.mu.Lock()
	s.closing = true
	conns := make([]*gorillaConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	empty := make(chan struct{})
	if len(conns) == 0 {
		close(empty)
	} else {
		s.empty = empty
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.WriteClose(CloseGoingAway, closeGoingAwayReason)
	}
	select {
	case <-empty:
	case <-time.After(websocketGoAwayWait):
		for _, c := range conns {
			c.Close()
		}
	}
	return len(conns)
}
