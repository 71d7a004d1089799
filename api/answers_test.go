package api

// Tests of the bounds on answers: the cap on one answer's bytes
// (MaxResponseBytes) at its edge on both executors, the budget of the
// answers held at once (MaxResponseBytesInFlight), and the sending of an
// answer to a client that does not read: its place among the operations
// in flight given back once the answer is made, its connection closed
// after the time its size allows (MinWriteTime, MinWriteRate), and a fresh
// address and a signed-in client served while 8 addresses hang on 16 such
// answers each.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

// bigAnswerQuery asks for one post's body n times: with a body of 500
// emoji (2,000 bytes) an answer of about n x 2 KB, for a price of 1 + 6n.
func bigAnswerQuery(n int) string {
	var q strings.Builder
	q.WriteString(`query($id: ID!) { node(id: $id) { ... on Post {`)
	for i := range n {
		fmt.Fprintf(&q, " b%d: body", i)
	}
	q.WriteString(" } } }")
	return q.String()
}

// longPost creates a post of 500 emoji by c and returns its id.
func longPost(t *testing.T, c *client) string {
	t.Helper()
	var out struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	c.mustDo(t, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`,
		map[string]any{"b": strings.Repeat("😀", 500)}, &out)
	return out.CreatePost.Post.ID
}

// serveAgain serves s's app anew, with the settings it has now, at s.URL.
func serveAgain(t *testing.T, s *testServer) {
	t.Helper()
	hs := httptest.NewServer(s.app.handler())
	t.Cleanup(hs.Close)
	s.URL = hs.URL
}

// postBody posts query with vars signed out and returns the status and body.
func postBody(t *testing.T, url, query string, vars map[string]any) (int, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	res, err := http.Post(url+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, raw
}

// An answer of exactly MaxResponseBytes is sent whole; at one byte less
// the same answer is refused whole with RESPONSE_TOO_LARGE, a complete
// JSON answer with no data, on both executors; and a batch's answers
// count together.
func TestResponseCapAtItsEdge(t *testing.T) {
	t.Parallel()
	for _, executor := range []string{"fast", "gqlgen"} {
		t.Run(executor, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, backendReal)
			s.app.gqlgenExecutor = executor == "gqlgen"
			serveAgain(t, s)
			ann := s.signUp(t, "ann")
			vars := map[string]any{"id": longPost(t, ann)}
			q := bigAnswerQuery(20)
			status, whole := postBody(t, s.URL, q, vars)
			if status != http.StatusOK || !bytes.Contains(whole, []byte(`"b19":"😀`)) {
				t.Fatalf("status %d, answer %.200s", status, whole)
			}
			size := len(whole)

			s.app.cfg.MaxResponseBytes = size
			serveAgain(t, s)
			if _, got := postBody(t, s.URL, q, vars); !bytes.Equal(got, whole) {
				t.Fatalf("at the cap: %d bytes %.300s, want the %d of the answer", len(got), got, size)
			}

			s.app.cfg.MaxResponseBytes = size - 1
			serveAgain(t, s)
			status, got := postBody(t, s.URL, q, vars)
			var r response
			if err := json.Unmarshal(got, &r); err != nil {
				t.Fatalf("one byte over: status %d, not JSON: %.200s", status, got)
			}
			if r.Code() != "RESPONSE_TOO_LARGE" || !strings.Contains(r.Errors[0].Message, "MaxResponseBytes") || (len(r.Data) > 0 && string(r.Data) != "null") {
				t.Fatalf("one byte over: status %d, %.300s", status, got)
			}
			expectSample(t, scrape(t, s), "graphql_answers_refused_total", map[string]string{"limit": answerSize}, 1)

			// Two operations of a batch each under the cap but over it
			// together: the second is refused, and a small third runs.
			s.app.cfg.MaxResponseBytes = size + size/2
			serveAgain(t, s)
			op := map[string]any{"query": q, "variables": vars}
			body, _ := json.Marshal([]any{op, op, map[string]any{"query": "{ __typename }"}})
			res, err := http.Post(s.URL+"/query", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var batch []response
			if err := json.NewDecoder(res.Body).Decode(&batch); err != nil || len(batch) != 3 {
				t.Fatalf("batch: %v %+v", err, batch)
			}
			if len(batch[0].Errors) > 0 || batch[1].Code() != "RESPONSE_TOO_LARGE" || len(batch[2].Errors) > 0 || !strings.Contains(string(batch[2].Data), "Query") {
				t.Fatalf("batch: %v / %v / %v %s", batch[0].Errors, batch[1].Errors, batch[2].Errors, batch[2].Data)
			}
		})
	}
}

// The answers held at once are bounded on the instance and, to its share,
// per address; a refusal is RATE_LIMITED naming the setting, and the bytes
// come back once the answer is sent.
func TestAnswerBytesInFlight(t *testing.T) {
	t.Parallel()
	// 1 MiB on the instance; an address may hold 4 of 16 operations' share,
	// 256 KiB, and so never less than one answer at the cap (128 KiB here).
	b := newAnswerBudget(1<<20, 128<<10, 4, 16)
	if b.perAddress != 256<<10 {
		t.Fatalf("an address's share is %d", b.perAddress)
	}
	if small := newAnswerBudget(1<<20, 512<<10, 1, 16); small.perAddress != 512<<10 {
		t.Fatalf("a share below one answer at the cap: %d", small.perAddress)
	}
	spend := func(address string, n int) (*answerSpend, bool) {
		s := newAnswerSpend(b, address, 128<<10)
		return s, s.Spend(n)
	}
	a1, ok1 := spend("10.0.0.1", 100<<10)
	a2, ok2 := spend("10.0.0.1", 100<<10)
	if !ok1 || !ok2 {
		t.Fatal("two answers within an address's share refused")
	}
	a3, ok := spend("10.0.0.1", 100<<10)
	if ok || a3.refused().Code != "RATE_LIMITED" || !strings.Contains(a3.refused().Message, "MaxResponseBytesInFlight") {
		t.Fatalf("a third past the address's share: %v %+v", ok, a3.refused())
	}
	var held []*answerSpend
	for i := range 6 {
		s, ok := spend(fmt.Sprintf("10.0.1.%d", i), 100<<10)
		if !ok {
			t.Fatalf("address %d refused with %d bytes held", i, b.total)
		}
		held = append(held, s)
	}
	if s, ok := spend("10.0.2.1", 100<<10); ok || s.refused().Code != "RATE_LIMITED" {
		t.Fatalf("past the instance's bound (%d held): %v", b.total, ok)
	}
	if b.total > b.max {
		t.Fatalf("%d held, over %d", b.total, b.max)
	}
	if tooLarge, ok := spend("10.0.3.1", 128<<10+1); ok || tooLarge.refused().Code != "RESPONSE_TOO_LARGE" {
		t.Fatalf("one byte past the cap: %v", ok)
	}
	for _, s := range append(held, a1, a2, a3) {
		s.release()
	}
	if b.total != 0 || len(b.byAddress) != 0 {
		t.Fatalf("after every answer was sent: %d held, %v", b.total, b.byAddress)
	}
	if _, ok := spend("10.0.2.1", 100<<10); !ok {
		t.Fatal("refused once the others were sent")
	}
}

// smallBuffers shrinks the send buffer of every connection it accepts, so
// that an answer of a few hundred KB to a client that does not read stays
// in the server's hands, as a larger one does on a real network.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// serveSmallBuffers serves s's app, with the settings it has now, at s.URL
// through smallBuffers.
func serveSmallBuffers(t *testing.T, s *testServer) {
	t.Helper()
	hs := httptest.NewUnstartedServer(s.app.handler())
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.CloseClientConnections)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
}

// sendNoRead sends query from local address ip on a connection with a
// small receive buffer, and never reads the answer; it returns the
// connection.
func sendNoRead(t *testing.T, url, ip, query string, vars map[string]any) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatalf("dial from %s: %v", ip, err)
	}
	t.Cleanup(func() { conn.Close() })
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return conn
}

// A client that does not read its answer holds no place among the
// operations in flight once the answer is made: with one place per
// address, the next request from its address is served at once. Its
// connection is closed once the answer's time is up (MinWriteTime and its
// bytes at MinWriteRate), with the answer not sent whole.
func TestNonReadingClientReleasesItsPlace(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MaxOperationsPerAddress, c.MaxOperationsInFlight = 1, 2
		c.MinWriteTime, c.MinWriteRate = 300*time.Millisecond, 1<<20
	})
	ann := s.signUp(t, "ann")
	vars := map[string]any{"id": longPost(t, ann)}
	serveSmallBuffers(t, s)
	q := bigAnswerQuery(98) // about 196 KB: 0.3 s + 0.19 s to send
	sent := time.Now()
	conn := sendNoRead(t, s.URL, "127.0.0.2", q, vars)
	// Its status line arrives once the answer is made (the rest stuck in
	// the small buffers), and the address's place is free by then. Reading
	// the status first keeps the next request from racing ahead of it.
	conn.SetReadDeadline(time.Now().Add(testenv.Scale(10 * time.Second)))
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, status); err != nil || string(status) != "HTTP/1.1 200" {
		t.Fatalf("the first answer's status: %q, %v", status, err)
	}
	if waited := time.Since(sent); waited > testenv.Scale(5*time.Second) {
		t.Fatalf("the first answer was made after %v", waited)
	}
	if _, r := rawPost(t, s, "127.0.0.2", "", `{ __typename }`); r.Err() != nil {
		t.Fatalf("the same address while its first answer is unread: %v", r.Err())
	}
	// Past its bound the connection is closed: what is read then ends
	// before the whole answer, in EOF or a reset, not a timeout.
	time.Sleep(time.Second)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open %v after the answer was sent (%d bytes read: %.600q)", time.Since(sent), len(got), got)
	}
	if bytes.Contains(got, []byte(`"b97":`)) {
		t.Fatalf("the whole answer was sent (%d bytes)", len(got))
	}
}

// Eight addresses (127.0.0.2-9) each send 16 requests whose answers they
// never read, on the default bounds of operations in flight: a fresh
// address and a signed-in client are served within 2 s all the same (stretched by
// testenv.Scale on a busy machine), and
// the answers held stay within their budget.
func TestNonReadersCannotFillTheInstance(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MaxOperationsPerAddress, c.MaxOperationsInFlight = settings.DefaultMaxOperationsPerAddress, settings.DefaultMaxOperationsInFlight
		c.MinWriteTime = time.Minute // they hang for the whole test
	})
	ann := s.signUp(t, "ann")
	vars := map[string]any{"id": longPost(t, ann)}
	serveSmallBuffers(t, s)
	q := bigAnswerQuery(98)
	var wg sync.WaitGroup
	for a := 2; a <= 9; a++ {
		for range 16 {
			wg.Go(func() { sendNoRead(t, s.URL, fmt.Sprintf("127.0.0.%d", a), q, vars) })
		}
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // let them be run and stuck
	for _, probe := range []struct {
		ip, token, query, want string
	}{
		{"127.0.0.10", "", `{ __typename }`, "Query"},
		{"127.0.0.11", ann.Token, `{ viewer { username } }`, "ann"},
	} {
		start := time.Now()
		_, r := rawPost(t, s, probe.ip, probe.token, probe.query)
		if r.Err() != nil || !strings.Contains(string(r.Data), probe.want) {
			t.Errorf("%s: %v %s", probe.ip, r.Err(), r.Data)
		}
		if took := time.Since(start); took > testenv.Scale(2*time.Second) {
			t.Errorf("%s served after %v", probe.ip, took)
		}
	}
	s.app.answers.mu.Lock()
	held, limit := s.app.answers.total, s.app.answers.max
	s.app.answers.mu.Unlock()
	if held > limit {
		t.Errorf("answers hold %d bytes, over %d", held, limit)
	}
	t.Logf("answers held: %d bytes (pid %d)", held, os.Getpid())
}

// A signed-in client that sends 40 queries of about 196 KB answers over
// one websocket and never reads holds their bytes until they are written:
// past its share of MaxResponseBytesInFlight the next are refused with
// RATE_LIMITED, the bytes held stay within the share, and they are all
// given back once the socket closes. (Each answer's bytes were given back
// once it was made: none was refused, and RSS grew with every answer
// waiting for the socket.)
func TestNonReadingSocketHoldsItsShare(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MaxOperationsPerSocket, c.MaxOperationsPerViewer = 64, 64 // the queries run; the bytes are what is bounded
		c.MaxOperationsPerAddress, c.MaxOperationsInFlight = settings.DefaultMaxOperationsPerAddress, settings.DefaultMaxOperationsInFlight
		c.MaxResponseBytes, c.MaxResponseBytesInFlight = 1<<20, 32<<20 // a share of 1 MiB
	})
	ann := s.signUp(t, "ann")
	vars := map[string]any{"id": longPost(t, ann)}
	serveSmallBuffers(t, s)
	d := websocket.Dialer{Subprotocols: []string{liveTransportWS}, HandshakeTimeout: testenv.Scale(5 * time.Second),
		NetDial: func(network, addr string) (net.Conn, error) {
			nd := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
			}}
			return nd.Dial(network, addr)
		}}
	ws, _, err := d.Dial(liveWSURL(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	initPayload, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + ann.Token})
	if err := ws.WriteJSON(liveMsg{Type: "connection_init", Payload: initPayload}); err != nil {
		t.Fatal(err)
	}
	if _, ack, err := ws.ReadMessage(); err != nil || !strings.Contains(string(ack), "connection_ack") {
		t.Fatalf("no ack: %s %v", ack, err)
	}
	payload, _ := json.Marshal(map[string]any{"query": bigAnswerQuery(98), "variables": vars})
	for i := range 40 {
		if err := ws.WriteJSON(liveMsg{Type: "subscribe", ID: fmt.Sprint(i), Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	share := s.app.answers.perAddress
	held := func() (total, subject int64) {
		s.app.answers.mu.Lock()
		defer s.app.answers.mu.Unlock()
		return s.app.answers.total, s.app.answers.byAddress["user:"+liveUserID(t, ann.Token)]
	}
	for deadline := time.Now().Add(testenv.Scale(10 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
		refused, _ := sample(scrape(t, s), "graphql_answers_refused_total", map[string]string{"limit": answerBytesAddress})
		_, mine := held()
		if mine > share {
			t.Fatalf("the socket's answers hold %d bytes, over the share of %d", mine, share)
		}
		if refused > 0 {
			t.Logf("refused past the share (%d bytes), holding %d", share, mine)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer refused within %s; the socket's answers hold %d bytes of a share of %d", testenv.Scale(10*time.Second), mine, share)
		}
	}
	ws.Close()
	for deadline := time.Now().Add(testenv.Scale(10 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
		if total, _ := held(); total == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d bytes of answers still held after the socket closed", total)
		}
	}
}
