package api

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"feedservice/api/settings"
)

// readHeaderTimeout is how long a client may take to send a request's
// headers (at most ReadTimeout, which covers them too).
const readHeaderTimeout = 10 * time.Second

// httpServer is the public HTTP server of h, with the timeouts that close
// the connections of clients that stall or drip a request (ReadTimeout),
// stop reading a response (WriteTimeout) or sit idle between requests
// (IdleTimeout). A websocket clears its deadlines when it is accepted
// (sockets.Gorilla.Accept): its own pings and write deadlines bound it.
func httpServer(c settings.Settings, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, c.ReadTimeout),
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
	}
}

// connectionFileReserve is the open files the server keeps for itself
// beside its clients' connections: the MySQL pools (32 connections each),
// the Redis pools (REDIS_POOL_SIZE and a connection per fan-out worker, on
// each cluster node), pub/sub connections, the listeners, SQLite's files.
// MAX_CONNECTIONS is lowered to the open-file limit less this (less half
// the limit, when the limit is under twice this).
const connectionFileReserve = 1024

// connectionCap is the most connections a listener may hold open: max,
// lowered to what the open-file limit fileLimit leaves (0: no limit known).
// At the limit accept fails with "too many open files" and the server
// answers no one, not even to refuse.
func connectionCap(max int, fileLimit uint64) int {
	if fileLimit == 0 || fileLimit > math.MaxInt32 {
		return max
	}
	room := int(fileLimit) - min(connectionFileReserve, int(fileLimit)/2)
	return min(max, room)
}

// openFileLimit is the process's limit on open files (RLIMIT_NOFILE, which
// Go raises to the hard limit at start), or 0 when unknown.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// listen opens the public listener on c.Addr, with at most maxConnections
// connections open at once (MaxConnections, lowered by connectionCap to
// what the open-file limit leaves) and at most MaxConnectionsPerAddress
// from one peer address group (an IPv4 address, an IPv6 /64). The peer is
// the socket's: X-Forwarded-For is not read yet when a connection is
// accepted, so the trusted proxies (TRUSTED_PROXIES), whose connections
// carry many clients, are exempt from the per-address cap and limit their
// clients themselves.
func listen(c settings.Settings) (ln net.Listener, maxConnections int, err error) {
	tcp, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, 0, err
	}
	maxConnections = connectionCap(c.MaxConnections, openFileLimit())
	l := newConnectionLimitListener(tcp, maxConnections, c.MaxConnectionsPerAddress, c.IsTrustedProxy)
	l.sendBufferBytes = c.SocketSendBufferBytes
	return l, maxConnections, nil
}

// The answers of a connection refused by a cap, before it is closed.
const (
	refusedByAddress  = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 38\r\n\r\ntoo many connections from one address\n"
	refusedByInstance = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 38\r\n\r\nthe server is at its connection limit\n"
)

// connectionLimitListener accepts at most maxTotal open connections, and
// at most maxPerAddress per peer address group (addressPrefix) unless
// exempt; one more is answered 503 and closed at once.
type connectionLimitListener struct {
	net.Listener
	maxTotal, maxPerAddress int
	exempt                  func(netip.Addr) bool
	// sendBufferBytes is the send buffer each accepted connection asks of
	// the kernel (SocketSendBufferBytes; 0 leaves the system's): the
	// answer budget counts an answer's bytes until the kernel takes them,
	// and the system's buffer grows to 4 MiB for a client that stops
	// reading. Bounded, a write to such a client blocks, and its write
	// deadline (MinWriteTime, MinWriteRate) closes the connection.
	sendBufferBytes int

	mu    sync.Mutex
	total int
	open  map[netip.Prefix]int
}

func newConnectionLimitListener(ln net.Listener, maxTotal, maxPerAddress int, exempt func(netip.Addr) bool) *connectionLimitListener {
	return &connectionLimitListener{Listener: ln, maxTotal: maxTotal, maxPerAddress: maxPerAddress, exempt: exempt, open: map[netip.Prefix]int{}}
}

func (l *connectionLimitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		group, capped := netip.Prefix{}, false
		if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil && !l.exempt(ap.Addr()) {
			group, capped = addressPrefix(ap.Addr()), true
		}
		if refusal := l.take(group, capped); refusal != "" {
			conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			conn.Write([]byte(refusal))
			conn.Close()
			continue
		}
		if tcp, ok := conn.(*net.TCPConn); ok && l.sendBufferBytes > 0 {
			_ = tcp.SetWriteBuffer(l.sendBufferBytes) // a refusal leaves the system's buffer: the cap is a bound, not a need
		}
		return &countedConn{Conn: conn, release: func() { l.release(group, capped) }}, nil
	}
}

// take counts a new connection of group (in the per-address count when
// capped), or returns the answer of the cap that refuses it.
func (l *connectionLimitListener) take(group netip.Prefix, capped bool) (refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.maxTotal:
		return refusedByInstance
	case capped && l.open[group] >= l.maxPerAddress:
		return refusedByAddress
	}
	l.total++
	if capped {
		l.open[group]++
	}
	return ""
}

func (l *connectionLimitListener) release(group netip.Prefix, capped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if !capped {
		return
	}
	if l.open[group]--; l.open[group] <= 0 {
		delete(l.open, group)
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
