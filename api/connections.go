package api

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// readHeaderTimeout is how long a client may take to send a request's
// headers (at most ReadTimeout, which covers them too).
const readHeaderTimeout = 10 * time.Second

// httpServer is the public HTTP server of h, with the timeouts that close
// the connections of clients that stall or drip a request (ReadTimeout),
// stop reading a response (WriteTimeout) or sit idle between requests
// (IdleTimeout). A websocket clears its deadlines when it is accepted
// (gorillaWebsocket.Accept): its own pings and write deadlines bound it.
func (c config) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, c.ReadTimeout),
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
	}
}

// listen opens the public listener on c.Addr, with at most
// MaxConnectionsPerAddress connections open from one peer address at once.
// The peer is the socket's: X-Forwarded-For is not read yet when a
// connection is accepted, so the trusted proxies (TRUSTED_PROXIES), whose
// connections carry many clients, are exempt and limit their clients
// themselves.
func (c config) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	return &addressLimitListener{Listener: ln, max: c.MaxConnectionsPerAddress, exempt: c.trusts, open: map[netip.Addr]int{}}, nil
}

// refusedResponse is what a connection over the per-address cap gets
// before it is closed.
const refusedResponse = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 38\r\n\r\ntoo many connections from one address\n"

// addressLimitListener accepts at most max open connections per peer
// address; one more is answered 503 and closed at once.
type addressLimitListener struct {
	net.Listener
	max    int
	exempt func(netip.Addr) bool

	mu   sync.Mutex
	open map[netip.Addr]int
}

func (l *addressLimitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(conn.RemoteAddr().String())
		if err != nil || l.exempt(ap.Addr()) {
			return conn, nil
		}
		addr := ap.Addr().Unmap()
		l.mu.Lock()
		full := l.open[addr] >= l.max
		if !full {
			l.open[addr]++
		}
		l.mu.Unlock()
		if full {
			conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			conn.Write([]byte(refusedResponse))
			conn.Close()
			continue
		}
		return &countedConn{Conn: conn, release: func() { l.release(addr) }}, nil
	}
}

func (l *addressLimitListener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

// countedConn gives its place back on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
