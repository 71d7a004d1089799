package api

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

// realServer serves s's app as serve does, over real TCP: cfg's public
// listener (with its per-address cap) and HTTP server (with its
// timeouts). It returns the listener's address.
func realServer(t *testing.T, s *testServer) string {
	t.Helper()
	cfg := s.app.cfg
	cfg.Addr = "127.0.0.1:0"
	ln, _, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(cfg, s.app.handler())
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// rawConn is a TCP connection that speaks HTTP/1.1 by hand.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin waits at most d for the server to close c (answering it
// first or not), and says how long that took.
func closedWithin(c net.Conn, d time.Duration) (time.Duration, bool) {
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return time.Since(start), false
	}
	return time.Since(start), true
}

// TestConnectionTimeouts: over real TCP, a client that sends headers and
// stalls its body, one that drips its body a byte at a time, and an idle
// keep-alive connection are each closed within their timeout, while other
// clients are served all along; a websocket outlives both timeouts.
func TestConnectionTimeouts(t *testing.T) {
	t.Parallel()
	// writeTimeout bounds every answer, the test's own signUp included: at
	// 1 s a signUp under the race detector on a busy box (load average 10)
	// outlived it, and its connection was closed (EOF). The websocket
	// outlives it all the same.
	const readTimeout, writeTimeout, idleTimeout = 500 * time.Millisecond, 5 * time.Second, 500 * time.Millisecond
	slack := testenv.Scale(time.Second)
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) {
		c.ReadTimeout, c.WriteTimeout, c.IdleTimeout = readTimeout, writeTimeout, idleTimeout
	})
	addr := realServer(t, s)
	post := "POST /query HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"

	// Others are served meanwhile: a health check every 50ms, each quick.
	stop := make(chan struct{})
	var others sync.WaitGroup
	others.Go(func() {
		client := &http.Client{Timeout: testenv.Scale(2 * time.Second), Transport: &http.Transport{DisableKeepAlives: true}}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			res, err := client.Get("http://" + addr + "/healthz")
			if err != nil {
				t.Errorf("another client's health check: %v", err)
				return
			}
			res.Body.Close()
			if took := time.Since(start); res.StatusCode != http.StatusOK || took > testenv.Scale(500*time.Millisecond) {
				t.Errorf("another client's health check: status %d in %s", res.StatusCode, took)
			}
		}
	})
	defer func() { close(stop); others.Wait() }()

	var wg sync.WaitGroup
	wg.Go(func() {
		c := rawConn(t, addr)
		io.WriteString(c, post+`{"query":`) // and nothing more
		if took, ok := closedWithin(c, readTimeout+slack); !ok {
			t.Errorf("a stalled body: still open after %s", took)
		}
	})
	wg.Go(func() {
		c := rawConn(t, addr)
		io.WriteString(c, post)
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if took, ok := closedWithin(c, readTimeout+slack); !ok {
				t.Errorf("a dripping body: still open after %s", took)
			}
		}()
		for {
			select {
			case <-closed:
				return
			case <-time.After(100 * time.Millisecond):
				io.WriteString(c, " ") // well within any per-read timeout
			}
		}
	})
	wg.Go(func() {
		c := rawConn(t, addr)
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: feed\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("keep-alive request: %v %v", res, err)
			return
		}
		body, _ := io.ReadAll(res.Body)
		if string(body) != "ok\n" {
			t.Errorf("keep-alive request: body %q", body)
		}
		if took, ok := closedWithin(c, idleTimeout+slack); !ok {
			t.Errorf("an idle keep-alive connection: still open after %s", took)
		}
	})
	wg.Go(func() {
		// A websocket is exempt from both timeouts: it answers after them.
		ann := s.signUp(t, "ann")
		ws := liveConnect(t, &testServer{URL: "http://" + addr, app: s.app}, liveTransportWS, ann.Token)
		time.Sleep(readTimeout + writeTimeout)
		id := ws.subscribe("{ __typename }")
		if res, end, err := ws.event(id, 2*time.Second); err != nil || end != nil || string(res.Data) != `{"__typename":"Query"}` {
			t.Errorf("a websocket after the timeouts: %s, end %v, err %v", res.Data, end, err)
		}
	})
	wg.Wait()
}

// TestConnectionsPerAddress: a peer address holds at most
// MAX_CONNECTIONS_PER_ADDRESS connections; the next is answered 503 and
// closed, and a place freed is taken again. A trusted proxy's address
// (TRUSTED_PROXIES) is not capped.
func TestConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	const max = 4
	// served says whether a new connection is served: a refused one is
	// answered 503 before it sends anything.
	served := func(t *testing.T, addr string) (net.Conn, bool) {
		t.Helper()
		c := rawConn(t, addr)
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(testenv.Scale(300 * time.Millisecond)))
		if _, err := br.Peek(1); err == nil {
			res, err := http.ReadResponse(br, nil)
			if err != nil || res.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("a refused connection: %v %v", res, err)
			}
			return c, false
		}
		c.SetReadDeadline(time.Now().Add(testenv.Scale(5 * time.Second)))
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: feed\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("a connection within the cap: %v %v", res, err)
		}
		io.ReadAll(io.LimitReader(res.Body, 3))
		return c, true
	}
	t.Run("capped", func(t *testing.T) {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.MaxConnectionsPerAddress = max })
		addr := realServer(t, s)
		var open []net.Conn
		for i := range max {
			c, ok := served(t, addr)
			if !ok {
				t.Fatalf("connection %d of %d refused", i+1, max)
			}
			open = append(open, c)
		}
		if _, ok := served(t, addr); ok {
			t.Fatalf("connection %d of %d served", max+1, max)
		}
		open[0].Close()
		time.Sleep(100 * time.Millisecond) // the server sees the close
		if _, ok := served(t, addr); !ok {
			t.Errorf("a freed place was not taken again")
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) {
			c.MaxConnectionsPerAddress = max
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		})
		addr := realServer(t, s)
		for i := range max + 2 {
			if _, ok := served(t, addr); !ok {
				t.Fatalf("connection %d from a trusted proxy refused", i+1)
			}
		}
	})
}

// TestConnectionsPerInstance: over real TCP, the instance holds at most
// MAX_CONNECTIONS connections whatever their addresses; the next is
// answered 503 and closed, and a place freed is taken again.
func TestConnectionsPerInstance(t *testing.T) {
	t.Parallel()
	const max = 3
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.MaxConnections = max })
	addr := realServer(t, s)
	// from dials addr from local address ip and says whether the
	// connection is served.
	from := func(ip string) (net.Conn, bool) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := br.Peek(1); err == nil {
			res, err := http.ReadResponse(br, nil)
			body, _ := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != http.StatusServiceUnavailable || string(body) != "the server is at its connection limit\n" {
				t.Fatalf("a refused connection: %v %q %v", res, body, err)
			}
			return c, false
		}
		return c, true
	}
	var open []net.Conn
	for i := range max {
		c, ok := from(fmt.Sprintf("127.0.0.%d", 2+i))
		if !ok {
			t.Fatalf("connection %d of %d refused", i+1, max)
		}
		open = append(open, c)
	}
	if _, ok := from("127.0.0.9"); ok {
		t.Fatalf("connection %d of %d served", max+1, max)
	}
	open[0].Close()
	time.Sleep(100 * time.Millisecond) // the server sees the close
	if _, ok := from("127.0.0.9"); !ok {
		t.Errorf("a freed place was not taken again")
	}
}

// TestConnectionCap: MAX_CONNECTIONS is lowered to the open-file limit
// less connectionFileReserve (less half the limit under twice the
// reserve), at the edges; an unknown or infinite limit lowers nothing.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		max       int
		fileLimit uint64
		want      int
	}{
		{settings.DefaultMaxConnections, 1 << 20, settings.DefaultMaxConnections},
		{settings.DefaultMaxConnections, settings.DefaultMaxConnections + connectionFileReserve, settings.DefaultMaxConnections},
		{settings.DefaultMaxConnections, settings.DefaultMaxConnections + connectionFileReserve - 1, settings.DefaultMaxConnections - 1},
		{settings.DefaultMaxConnections, 20_000, 20_000 - connectionFileReserve},
		{settings.DefaultMaxConnections, 2 * connectionFileReserve, connectionFileReserve},
		{settings.DefaultMaxConnections, 1024, 512},
		{settings.DefaultMaxConnections, 0, settings.DefaultMaxConnections},
		{settings.DefaultMaxConnections, math.MaxUint64, settings.DefaultMaxConnections},
	} {
		if got := connectionCap(c.max, c.fileLimit); got != c.want {
			t.Errorf("connectionCap(%d, %d) = %d, want %d", c.max, c.fileLimit, got, c.want)
		}
	}
	if limit := openFileLimit(); limit == 0 {
		t.Errorf("the open-file limit is unknown")
	}
}

// TestConnectionsPerAddressGroupIPv6: the per-address cap counts IPv6
// peers by their /64: two of one /64 fill a cap of two, a third of it is
// refused, one of the next /64 is accepted (the listener over connections
// whose peer addresses the test chooses).
func TestConnectionsPerAddressGroupIPv6(t *testing.T) {
	t.Parallel()
	conns := make(chan net.Conn)
	l := newConnectionLimitListener(chanListener(conns), 100, 2, func(netip.Addr) bool { return false })
	// dial gives the listener a connection from peer and says whether
	// Accept returned it (a refused one reads the 503).
	dial := func(peer string) bool {
		t.Helper()
		server, client := net.Pipe()
		t.Cleanup(func() { client.Close() })
		go func() { conns <- peerConn{server, netip.MustParseAddrPort(peer)} }()
		accepted := make(chan net.Conn, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- c
			}
		}()
		refusal := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(client)
			refusal <- string(b)
		}()
		select {
		case <-accepted:
			return true
		case r := <-refusal:
			if r != refusedByAddress {
				t.Fatalf("%s: answered %q", peer, r)
			}
			// Accept goes on to the next connection: give it one to end.
			server, client := net.Pipe()
			t.Cleanup(func() { client.Close() })
			conns <- peerConn{server, netip.MustParseAddrPort("[2001:db8:ffff::1]:1")}
			<-accepted
			return false
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: neither accepted nor refused", peer)
			return false
		}
	}
	for _, c := range []struct {
		peer   string
		served bool
	}{
		{"[2001:db8:0:1::1]:1000", true},
		{"[2001:db8:0:1:ffff::2]:1000", true},
		{"[2001:db8:0:1::3]:2000", false},
		{"[2001:db8:0:2::1]:1000", true},
		{"192.0.2.1:1000", true},
		{"[::ffff:192.0.2.1]:1001", true},
		{"192.0.2.1:1002", false},
	} {
		if got := dial(c.peer); got != c.served {
			t.Errorf("%s: served %v, want %v", c.peer, got, c.served)
		}
	}
}

// chanListener accepts the connections sent on it.
type chanListener chan net.Conn

func (l chanListener) Accept() (net.Conn, error) { return <-l, nil }
func (l chanListener) Close() error              { return nil }
func (l chanListener) Addr() net.Addr            { return &net.TCPAddr{} }

// peerConn is a connection from the peer address it names.
type peerConn struct {
	net.Conn
	peer netip.AddrPort
}

func (c peerConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.peer) }
