package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/api/sockets"
	"feedservice/internal/gqlclient"
	"feedservice/internal/serverproc"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// Graceful shutdown of a real server process: SIGTERM while clients hold
// open subscriptions and requests are in flight.

// buildServer builds the feedservice binary into a directory of the test.
func buildServer(t *testing.T) string {
	t.Helper()
	serverBinary.once.Do(func() {
		if serverBinary.dir, serverBinary.err = os.MkdirTemp("", "feedservice-api-test-"); serverBinary.err != nil {
			return
		}
		serverBinary.bin = filepath.Join(serverBinary.dir, "feedservice")
		var out bytes.Buffer
		if err := serverproc.Build(context.Background(), serverBinary.bin, &out); err != nil {
			serverBinary.err = fmt.Errorf("%v\n%s", err, &out)
		}
	})
	if serverBinary.err != nil {
		t.Fatal(serverBinary.err)
	}
	return serverBinary.bin
}

// serverBinary is the server built once for the package's tests (a build
// takes most of a minute of the two cores); TestMain removes it.
var serverBinary struct {
	once     sync.Once
	dir, bin string
	err      error
}

// startServerProcess runs bin with the environment env (the settings) on a
// free port and waits until it is ready; the test kills it at the end, and
// shows its log when it failed.
func startServerProcess(t *testing.T, bin string, env ...string) *serverproc.Process {
	t.Helper()
	log := &bytes.Buffer{}
	p, err := serverproc.Start(context.Background(), serverproc.Options{
		Bin: bin, Env: append([]string{"METRICS_ADDR="}, env...), DataDir: t.TempDir(), Log: log, Ready: 20 * time.Second,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", log)
		}
	})
	return p
}

// rawDo posts a GraphQL document to url as token, without waiting for any
// workers (the server is another process); a transport failure is returned.
func rawDo(url, token, query string, vars map[string]any) (response, error) {
	return gqlclient.New(url, nil).Post(context.Background(), token, query, vars)
}

func rawDoBody(url, token string, body io.Reader) (response, error) {
	return gqlclient.New(url, nil).PostBody(context.Background(), token, body)
}

// mustRawDo is rawDo for a document that must succeed; it decodes the data
// into out.
func mustRawDo(t *testing.T, url, token, query string, vars map[string]any, out any) {
	t.Helper()
	r, err := rawDo(url, token, query, vars)
	if err != nil || len(r.Errors) > 0 || r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, errors %+v, err %v", query, r.Status, r.Errors, err)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("decode %s: %v", r.Data, err)
		}
	}
}

const createPostMutation = `mutation($b: String!) { createPost(input: {body: $b}) { post { id createdAt } } }`

// postedOf decodes createPost's answer.
func postedOf(r response) (feedPosted, error) {
	var out struct{ CreatePost struct{ Post feedPosted } }
	if err := json.Unmarshal(r.Data, &out); err != nil || out.CreatePost.Post.ID == "" {
		return feedPosted{}, fmt.Errorf("createPost answered %s (errors %+v)", r.Data, r.Errors)
	}
	return out.CreatePost.Post, nil
}

// TestShutdownGraceful sends SIGTERM to a server process while readers hold
// unreadCount subscriptions (both websocket protocols), two requests are in
// flight (their bodies half sent) and authors are posting. The in-flight
// requests finish with 200 and their data; every socket is closed with 1001
// and a reason; the process exits 0 well within shutdownGrace. Then a
// second instance starts on the same database and Redis: every post the
// first one acknowledged is in its followers' feeds and unread counts (the
// reference model, nothing lost), and no post it did not acknowledge exists
// (nothing extra).
func TestShutdownGraceful(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	bin := buildServer(t)
	// An empty database, not a copy of the migrated template the other
	// tests take (storetest.MySQL): the first server's start migrates it,
	// and the second's finds it migrated.
	dsn := testenv.MySQL(t)
	_, prefix := testenv.Redis(t)
	secret := "test-secret-test-secret-test-secret!"
	env := []string{"MYSQL_DSN=" + dsn, "REDIS_ADDR=" + testenv.RedisAddr(), "KEY_PREFIX=" + prefix,
		"TOKEN_SECRET=" + secret, "BCRYPT_COST=4",
		// Every client of the test speaks from one address.
		"MAX_OPERATIONS_PER_ADDRESS=128"}
	if mode := os.Getenv("FEED_MODE"); mode != "" {
		env = append(env, "FEED_MODE="+mode)
	}
	p := startServerProcess(t, bin, env...)

	m := feedNewModel()
	type user struct{ name, id, token string }
	signUp := func(name string) user {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		mustRawDo(t, p.URL, "", `mutation($u: String!, $p: String!) { signUp(input: {username: $u, password: $p}) { token user { id } } }`,
			map[string]any{"u": name, "p": "password-" + name}, &out)
		m.SignUp(out.SignUp.User.ID, name)
		return user{name, out.SignUp.User.ID, out.SignUp.Token}
	}
	authors := []user{signUp("author0"), signUp("author1"), signUp("author2")}
	readers := []user{signUp("reader0"), signUp("reader1"), signUp("reader2")}
	for i, r := range readers {
		for j, a := range authors {
			if j == i { // each reader follows two of the three authors
				continue
			}
			mustRawDo(t, p.URL, r.token, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": a.id}, nil)
			m.Follow(r.id, a.id)
		}
	}
	procServer := &testServer{URL: p.URL}
	var conns []*liveConn
	for i, r := range readers {
		// An inbox for each reader, so that the fan-out (not a rebuild) is
		// what must bring the posts in push and hybrid modes.
		mustRawDo(t, p.URL, r.token, `{ feed(first: 5) { edges { cursor } } }`, nil, nil)
		proto := liveTransportWS
		if i == 1 {
			proto = liveLegacyWS
		}
		c := liveConnect(t, procServer, proto, r.token)
		c.autoPong.Store(true)
		if n := c.firstCount(c.subscribe(liveUnreadSub), 3*time.Second, r.name+" before the burst"); n != 0 {
			t.Fatalf("%s: first unreadCount %d, want 0", r.name, n)
		}
		conns = append(conns, c)
	}

	// Two requests in flight: their headers and half their bodies sent.
	type answer struct {
		r   response
		err error
	}
	inflight := func(token, query string, vars map[string]any) (*io.PipeWriter, []byte, chan answer) {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		pr, pw := io.Pipe()
		done := make(chan answer, 1)
		go func() {
			r, err := rawDoBody(p.URL, token, pr)
			done <- answer{r, err}
		}()
		pw.Write(body[:len(body)/2])
		return pw, body[len(body)/2:], done
	}
	postPipe, postRest, postDone := inflight(authors[0].token, createPostMutation, map[string]any{"b": "in flight at SIGTERM"})
	feedPipe, feedRest, feedDone := inflight(readers[0].token, `{ feed(first: 5) { edges { cursor } } }`, nil)

	// A burst of posts by every author, up to the moment of the SIGTERM and
	// past it (those after it are refused at the door).
	type attempt struct {
		author user
		body   string
		posted feedPosted
		err    error
	}
	var (
		mu       sync.Mutex
		attempts []attempt
		burst    sync.WaitGroup
		stop     = make(chan struct{})
	)
	for _, a := range authors {
		burst.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("burst %s %d", a.name, i)
				r, err := rawDo(p.URL, a.token, createPostMutation, map[string]any{"b": body})
				at := attempt{author: a, body: body, err: err}
				if err == nil {
					at.posted, at.err = postedOf(r)
				}
				mu.Lock()
				attempts = append(attempts, at)
				mu.Unlock()
				if err != nil {
					return // the server stopped accepting
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	sigterm := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Every socket hears 1001 with a reason.
	for i, c := range conns {
		code, text, ok := c.closeStatus(5 * time.Second)
		if !ok || code != sockets.CloseGoingAway || text == "" {
			t.Fatalf("%s's socket (%s): closed %v with %d %q, want 1001 and a reason", readers[i].name, c.proto, ok, code, text)
		}
	}
	// The in-flight requests finish, after the SIGTERM, with their data.
	postPipe.Write(postRest)
	postPipe.Close()
	feedPipe.Write(feedRest)
	feedPipe.Close()
	pa, fa := <-postDone, <-feedDone
	if pa.err != nil || pa.r.Status != http.StatusOK {
		t.Fatalf("in-flight createPost: status %d, err %v", pa.r.Status, pa.err)
	}
	inFlightPost, err := postedOf(pa.r)
	if err != nil {
		t.Fatalf("in-flight createPost: %v", err)
	}
	if fa.err != nil || fa.r.Status != http.StatusOK || len(fa.r.Errors) > 0 || !bytes.Contains(fa.r.Data, []byte(`"edges"`)) {
		t.Fatalf("in-flight feed read: status %d, data %s, errors %+v, err %v", fa.r.Status, fa.r.Data, fa.r.Errors, fa.err)
	}
	close(stop)
	burst.Wait()

	select {
	case <-p.Exited():
	case <-time.After(shutdownGrace):
		t.Fatalf("server still running %s after SIGTERM", shutdownGrace)
	}
	if p.Err() != nil {
		t.Fatalf("server exited with %v after SIGTERM, want 0", p.Err())
	}
	t.Logf("server exited %s after SIGTERM; %d posts attempted in the burst", time.Since(sigterm).Round(time.Millisecond), len(attempts))

	// Acknowledged posts go in the model in the order of their ids, which is
	// the server's order.
	acked := []feedPosted{inFlightPost}
	ackedBy := map[string]string{inFlightPost.ID: authors[0].id}
	refused := 0
	for _, a := range attempts {
		if a.err != nil {
			refused++
			continue
		}
		acked = append(acked, a.posted)
		ackedBy[a.posted.ID] = a.author.id
	}
	if refused > len(authors) {
		t.Fatalf("%d burst posts failed; only the one per author sent after the door closed may", refused)
	}
	sortPostedByTime(acked)
	for _, a := range acked {
		m.AddPost(ackedBy[a.ID], a.ID, a.CreatedAt)
	}

	// A second instance delivers whatever the first left behind.
	s2 := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MySQLDSN, c.KeyPrefix, c.RedisAddr, c.TokenSecret = dsn, prefix, testenv.RedisAddr(), []byte(secret)
	})
	w := &feedWorld{t: t, s: s2, m: m, users: map[string]*client{}}
	for _, a := range authors {
		// Nothing extra: each author's timeline is exactly what was acknowledged.
		var out struct {
			Node struct {
				Timeline struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
		}
		c := &client{s: s2, Token: a.token, ID: a.id, Name: a.name}
		c.mustDo(t, `query($id: ID!) { node(id: $id) { ... on User { timeline(first: 100) { edges { node { id } } } } } }`, map[string]any{"id": a.id}, &out)
		want := m.LivePosts(a.id)
		if got := len(out.Node.Timeline.Edges); got != len(want) {
			t.Fatalf("%s's timeline holds %d posts, %d were acknowledged", a.name, got, len(want))
		}
		for _, e := range out.Node.Timeline.Edges {
			if ackedBy[e.Node.ID] != a.id {
				t.Fatalf("%s's timeline holds post %s, which the server never acknowledged", a.name, e.Node.ID)
			}
		}
	}
	for _, r := range readers {
		c := &client{s: s2, Token: r.token, ID: r.id, Name: r.name}
		w.users[r.id] = c
		w.check(c, 7)
		if got, want := feedUnread(t, c), m.Unread(r.id); got != want {
			t.Fatalf("%s's unreadCount is %d after the restart, the model says %d", r.name, got, want)
		}
		// And a reconnecting subscriber starts from that value.
		live := liveConnect(t, s2, liveTransportWS, r.token)
		if n := live.firstCount(live.subscribe(liveUnreadSub), 3*time.Second, r.name+" after the restart"); n != m.Unread(r.id) {
			t.Fatalf("%s: unreadCount subscription on the second instance starts at %d, the model says %d", r.name, n, m.Unread(r.id))
		}
	}
}

// sortPostedByTime orders posts by creation, oldest first: by id, as ids
// are time-ordered.
func sortPostedByTime(ps []feedPosted) {
	ids := make(map[string]int64, len(ps))
	for _, p := range ps {
		_, ids[p.ID], _ = models.ParseNodeID(p.ID)
	}
	slices.SortFunc(ps, func(a, b feedPosted) int { return cmp.Compare(ids[a.ID], ids[b.ID]) })
}
