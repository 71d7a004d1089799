package api

// One client must not be able to take the service down: a server process on
// MariaDB and Redis, with its default limits, under one socket pipelining
// hundreds of expensive queries and under hundreds of concurrent signed-out
// copies of one over HTTP, keeps answering another client's probe within a
// second and keeps its memory under a bound.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"feedservice/store"

	"github.com/gorilla/websocket"

	"feedservice/internal/gqlclient"
	"feedservice/internal/testenv"
)

// The acceptance bounds of an overloaded server.
const (
	overloadProbeMax = time.Second // a probe's answer, from another address
	overloadRSSMax   = 300 << 20   // the server process's resident memory
	// overloadAnswerWait bounds how long a wave of the attack's operations
	// may take to be answered, each with data or a refusal.
	overloadAnswerWait = 90 * time.Second
	// overloadAttackFor is how long the attack goes on, in waves of n
	// operations sent at once, each wave once the last is answered.
	overloadAttackFor = 3 * time.Second
)

// Followers of followers, the costliest shape a client can ask for: a
// relation page for each entry of another.
const (
	// followersOfFollowers100x30 is followers of a celebrity's followers,
	// 100 x 30: a hundred nested pages, 9,302 as plain fields, priced
	// 81,502 as the reads they are.
	followersOfFollowers100x30 = `{ user(username: "celebrity") { followers(first: 100) { edges { node { username followers(first: 30) { edges { node { username } } } } } } } }`
	// followersOfFollowers11x30 is the most of that shape the default
	// complexity limit lets through: 11 x 30, priced 9,056.
	followersOfFollowers11x30 = `{ user(username: "celebrity") { followers(first: 11) { edges { node { username followers(first: 30) { edges { node { username } } } } } } } }`
)

// overloadQuery is the attack's i-th operation: the two shapes in turn.
func overloadQuery(i int) string {
	if i%2 == 0 {
		return followersOfFollowers11x30
	}
	return followersOfFollowers100x30
}

// probeClient speaks from local address ip (127.0.0.x): another client, to
// the per-address limits, than the attacker on 127.0.0.1.
func probeClient(ip string, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: timeout}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

// processRSS is the resident memory of process pid, in bytes.
func processRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// serverCPU is the CPU time process pid has used, user and system.
func serverCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// overloadWatch probes the server from another address every 100 ms and
// samples its resident memory, until stop is called.
type overloadWatch struct {
	mu       sync.Mutex
	probes   int
	slowest  time.Duration
	failures []string
	rssMax   int64
	cpu      time.Duration // the server's CPU time during the watch
	wall     time.Duration // the watch's
	stop     func()
}

func watchOverload(t *testing.T, url string, pid int) *overloadWatch {
	w := &overloadWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	probe := gqlclient.New(url, probeClient("127.0.0.2", 5*overloadProbeMax))
	wg.Go(func() {
		for ctx.Err() == nil {
			start := time.Now()
			r, err := probe.Post(ctx, "", `{ user(username: "alice") { id username } }`, nil)
			took := time.Since(start)
			if ctx.Err() != nil {
				return
			}
			w.mu.Lock()
			w.probes++
			w.slowest = max(w.slowest, took)
			if err == nil {
				err = r.Err()
			}
			if err != nil || took > testenv.Scale(overloadProbeMax) {
				w.failures = append(w.failures, fmt.Sprintf("after %v: %v", took.Round(time.Millisecond), err))
			}
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	wg.Go(func() {
		for ctx.Err() == nil {
			if rss, err := processRSS(pid); err == nil {
				w.mu.Lock()
				w.rssMax = max(w.rssMax, rss)
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	cpu0, _ := serverCPU(pid)
	started := time.Now()
	w.stop = func() {
		cancel()
		wg.Wait()
		cpu1, _ := serverCPU(pid)
		w.cpu = cpu1 - cpu0
		w.wall = time.Since(started)
	}
	return w
}

// overloadAnswers are the answers an attacking operation may get: data, a
// refusal by price (BAD_USER_INPUT) or by the bounds on operations in
// flight and the complexity budget (RATE_LIMITED, over HTTP with 429 or
// 503 when refused at the door).
var overloadAnswers = []string{"data", "BAD_USER_INPUT", "RATE_LIMITED",
	"BAD_USER_INPUT (HTTP 200)", "RATE_LIMITED (HTTP 200)", "RATE_LIMITED (HTTP 429)", "RATE_LIMITED (HTTP 503)"}

// check stops the watch and fails t when a probe failed or was slow, or
// memory went past the bound.
func (w *overloadWatch) check(t *testing.T, what string) {
	t.Helper()
	w.stop()
	t.Logf("%s: %d probes, slowest %v; server RSS at most %d MB, CPU %v in %v", what, w.probes, w.slowest.Round(time.Millisecond), w.rssMax>>20,
		w.cpu, w.wall.Round(time.Millisecond))
	if w.probes == 0 || len(w.failures) > 0 {
		t.Errorf("%s: %d of %d probes failed or took over %v: %q", what, len(w.failures), w.probes, testenv.Scale(overloadProbeMax), w.failures)
	}
	if w.rssMax > overloadRSSMax {
		t.Errorf("%s: server RSS reached %d MB, over %d MB", what, w.rssMax>>20, overloadRSSMax>>20)
	}
}

// overloadTally counts how the attack's operations were answered.
type overloadTally struct {
	mu    sync.Mutex
	codes map[string]int // "data", or the first error's code, or the transport failure
}

func (o *overloadTally) add(what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.codes == nil {
		o.codes = map[string]int{}
	}
	o.codes[what]++
}

// check fails t when an operation got another answer than overloadAnswers.
func (o *overloadTally) check(t *testing.T, what string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for answer, n := range o.codes {
		if !slices.Contains(overloadAnswers, answer) {
			t.Errorf("%s: %d operations answered %q", what, n, answer)
		}
	}
}

func (o *overloadTally) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprint(o.codes)
}

// TestOverloadOneClientCannotStopTheService runs a server process with its
// default limits on a graph of followers (a celebrity everyone follows,
// each user followed by about 30) and attacks it from 127.0.0.1 while a
// probe from 127.0.0.2 asks for one user every 100 ms: every probe must be
// answered within overloadProbeMax (stretched by testenv.Scale on a busy
// machine) and the server's RSS must stay under
// overloadRSSMax. Every operation of the attack must be answered, with
// data or with a coded refusal.
func TestOverloadOneClientCannotStopTheService(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	bin := buildServer(t)
	seeder := newTestServer(t, backendReal)
	if err := seed(context.Background(), seeder.app.engine, seeder.app.store, store.EventsPending, seedSize{users: 40, followsEach: 30}, io.Discard); err != nil {
		t.Fatal(err)
	}
	cfg := seeder.app.cfg
	env := []string{"MYSQL_DSN=" + cfg.MySQLDSN, "REDIS_ADDR=" + cfg.RedisAddr, "KEY_PREFIX=" + cfg.KeyPrefix,
		"TOKEN_SECRET=" + string(cfg.TokenSecret), "BCRYPT_COST=4", "FANOUT_WORKERS=1", "DISPATCH=false"}
	if len(cfg.MySQLReplicaDSNs) > 0 {
		env = append(env, "MYSQL_REPLICA_DSNS="+strings.Join(cfg.MySQLReplicaDSNs, ","))
	}
	p := startServerProcess(t, bin, env...)
	var login struct{ LogIn struct{ Token string } }
	mustRawDo(t, p.URL, "", `mutation { logIn(input: {username: "demo_000", password: "`+SeedPassword+`"}) { token } }`, nil, &login)

	t.Run("one socket pipelines 300", func(t *testing.T) {
		watch := watchOverload(t, p.URL, p.Pid())
		tally := pipelineOverSocket(t, p.URL, login.LogIn.Token, 300)
		watch.check(t, "300 pipelined over one socket")
		t.Logf("answers: %v", tally)
		tally.check(t, "300 pipelined over one socket")
	})
	t.Run("250 concurrent signed-out requests", func(t *testing.T) {
		watch := watchOverload(t, p.URL, p.Pid())
		tally := concurrentPosts(t, p.URL, 250)
		watch.check(t, "250 concurrent over HTTP")
		t.Logf("answers: %v", tally)
		tally.check(t, "250 concurrent over HTTP")
	})
}

// pipelineOverSocket sends waves of n subscribe messages of overloadQuery
// at once on one graphql-transport-ws socket signed in with token, each
// wave once every operation of the last is answered (complete, or error),
// for overloadAttackFor; a wave not answered within overloadAnswerWait
// fails t.
func pipelineOverSocket(t *testing.T, url, token string, n int) *overloadTally {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{gqlclient.Protocol}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(url, "http")+"/query", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(m any) {
		conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := conn.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	tally := &overloadTally{}
	for start, wave := time.Now(), 0; time.Since(start) < overloadAttackFor; wave++ {
		for i := range n {
			send(map[string]any{"type": "subscribe", "id": fmt.Sprint(wave, "-", i), "payload": map[string]any{"query": overloadQuery(i)}})
		}
		if !answerWave(t, conn, n, tally, send) {
			break
		}
	}
	return tally
}

// answerWave reads the answers of a wave of n operations into tally, and
// reports whether all came within overloadAnswerWait.
func answerWave(t *testing.T, conn *websocket.Conn, n int, tally *overloadTally, send func(any)) bool {
	t.Helper()
	outcome := map[string]string{}
	conn.SetReadDeadline(time.Now().Add(overloadAnswerWait))
	for done := 0; done < n; {
		var m gqlclient.Message
		if err := conn.ReadJSON(&m); err != nil {
			t.Errorf("%d of %d operations answered within %v: %v", done, n, overloadAnswerWait, err)
			return false
		}
		switch m.Type {
		case "ping":
			send(map[string]string{"type": "pong"})
		case "next":
			var p struct {
				Errors []gqlclient.Error
			}
			json.Unmarshal(m.Payload, &p)
			if len(p.Errors) > 0 {
				outcome[m.ID] = p.Errors[0].Code()
			} else {
				outcome[m.ID] = "data"
			}
		case "error":
			var errs []gqlclient.Error
			json.Unmarshal(m.Payload, &errs)
			code := "error"
			if len(errs) > 0 {
				code = errs[0].Code()
			}
			tally.add(code)
			done++
		case "complete":
			tally.add(outcome[m.ID])
			done++
		}
	}
	return true
}

// concurrentPosts sends waves of n signed-out requests of overloadQuery at
// once over n connections, each wave once the last is answered, for
// overloadAttackFor; a request not answered within overloadAnswerWait fails
// t.
func concurrentPosts(t *testing.T, url string, n int) *overloadTally {
	t.Helper()
	hc := &http.Client{Timeout: overloadAnswerWait, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer hc.CloseIdleConnections()
	c := gqlclient.New(url, hc)
	tally := &overloadTally{}
	for start := time.Now(); time.Since(start) < overloadAttackFor; {
		if !postWave(t, c, n, tally) {
			break
		}
	}
	return tally
}

// postWave sends one wave of n requests and reports whether all were
// answered.
func postWave(t *testing.T, c *gqlclient.Client, n int, tally *overloadTally) bool {
	t.Helper()
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := range n {
		wg.Go(func() {
			r, err := c.Post(context.Background(), "", overloadQuery(i), nil)
			switch {
			case err != nil:
				tally.add("transport: " + err.Error())
				return
			case len(r.Errors) > 0:
				tally.add(fmt.Sprintf("%s (HTTP %d)", r.Code(), r.Status))
			default:
				tally.add("data")
			}
			answered.Add(1)
		})
	}
	wg.Wait()
	if int(answered.Load()) != n {
		t.Errorf("%d of %d requests answered: %v", answered.Load(), n, tally)
		return false
	}
	return true
}
