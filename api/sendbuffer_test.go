package api

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

// sendBufferAnswer is a selection of the schema's documentation, a few
// tens of kilobytes of answer, which sendBufferQuery repeats under
// aliases.
const sendBufferAnswer = `__schema { types { name description fields { name description args { name description } } } }`

// sendBufferQuery is a document whose answer is at least bytes long,
// given the size of one sendBufferAnswer.
func sendBufferQuery(one, bytes int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range bytes/one + 1 {
		fmt.Fprintf(&b, " a%d: %s", i, sendBufferAnswer)
	}
	b.WriteString(" }")
	return b.String()
}

// serverSendQueues reads the kernel's send queues of the server's side
// of the TCP connections on 127.0.0.1:port, by the client's port: the
// bytes written to each that the client has not taken yet, and whether
// the server still holds it open (ESTABLISHED).
func serverSendQueues(t *testing.T, port int) map[int]struct {
	queued      int
	established bool
} {
	t.Helper()
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("the kernel's table of TCP sockets: %v", err)
	}
	out := map[int]struct {
		queued      int
		established bool
	}{}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		_, local, _ := strings.Cut(f[1], ":")
		_, remote, _ := strings.Cut(f[2], ":")
		lp, _ := strconv.ParseInt(local, 16, 32)
		rp, _ := strconv.ParseInt(remote, 16, 32)
		tx, _, _ := strings.Cut(f[4], ":")
		queued, _ := strconv.ParseInt(tx, 16, 64)
		if int(lp) == port {
			out[int(rp)] = struct {
				queued      int
				established bool
			}{int(queued), f[3] == "01"}
		}
	}
	return out
}

// TestSendBufferBoundsParkedAnswers: 8 signed-in connections with a 2 KB
// receive buffer ask for a large answer and stop reading. Each may park
// at most twice SOCKET_SEND_BUFFER_BYTES of it in the kernel (Linux
// doubles SO_SNDBUF for its bookkeeping), where the answer budget no
// longer counts it; the write deadline then closes the connection. With
// the system's buffer, each parked its whole answer (604,631 bytes of 606
// KB), up to 4 MiB a connection.
func TestSendBufferBoundsParkedAnswers(t *testing.T) {
	t.Parallel()
	const conns, sendBuffer = 8, 32 << 10
	bound := 2 * sendBuffer
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) {
		c.SocketSendBufferBytes = sendBuffer
		c.MinWriteTime = 500 * time.Millisecond
	})
	one := len(s.anon().do(t, "{"+sendBufferAnswer+"}", nil).Data)
	query := sendBufferQuery(one, 8*bound)
	addr := realServer(t, s)
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	body, _ := json.Marshal(map[string]any{"query": query})
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		return err
	}}
	clients := map[int]bool{}
	for i := range conns {
		user := s.signUp(t, fmt.Sprintf("parker%d", i))
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /query HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, user.Token, len(body), body)
		clients[c.LocalAddr().(*net.TCPAddr).Port] = true
	}
	// Until the server has closed every connection (its write deadline),
	// no connection's queue may pass the bound.
	most, seen := map[int]int{}, map[int]bool{}
	deadline := time.Now().Add(testenv.Scale(30 * time.Second))
	for {
		open := 0
		for client, q := range serverSendQueues(t, port) {
			if !clients[client] {
				continue
			}
			seen[client] = true
			most[client] = max(most[client], q.queued)
			if q.queued > bound {
				t.Fatalf("the server's side of connection :%d holds %d bytes of an answer of at least %d in the kernel, over the bound of %d (2 x SOCKET_SEND_BUFFER_BYTES)", client, q.queued, 8*bound, bound)
			}
			if q.established {
				open++
			}
		}
		if len(seen) == conns && open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %d of %d connections still open on the server (seen %d); most queued %v", testenv.Scale(30*time.Second), open, conns, len(seen), most)
		}
		time.Sleep(10 * time.Millisecond)
	}
	total := 0
	for _, n := range most {
		total += n
	}
	t.Logf("answer of at least %d bytes; most queued per connection %v; %d in all, bound %d", 8*bound, most, total, conns*bound)
}
