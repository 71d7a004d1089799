package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"feedservice/api/settings"
	"feedservice/api/sockets"
	"feedservice/internal/ratelimit"
	"feedservice/internal/testenv"
)

// This file checks logOut: it revokes every token of its user, on every
// instance, and a new log-in signs in again.

const logOutDoc = `mutation { logOut }`

// logOutViewerRefused fails t unless token is refused with UNAUTHENTICATED
// on s, with a message that says it was revoked.
func logOutViewerRefused(t *testing.T, s *testServer, what, token string) {
	t.Helper()
	r := errsExpect(t, &client{s: s, Token: token}, "UNAUTHENTICATED", acctViewerDoc, nil)
	if msg := r.Errors[0].Message; !strings.Contains(msg, "revoked") {
		t.Fatalf("%s: refused with %q, want a message saying it was revoked", what, msg)
	}
}

// logOutWaitRefused waits until s refuses token: on an instance other
// than the one that served the logOut, once the invalidation message
// arrived.
func logOutWaitRefused(t *testing.T, s *testServer, token string) {
	t.Helper()
	testenv.WaitFor(t, "the logged-out token to be refused", func() bool {
		return (&client{s: s, Token: token}).do(t, acctViewerDoc, nil).Code() == "UNAUTHENTICATED"
	})
}

// logOutSignsIn fails t unless token signs in user id on s.
func logOutSignsIn(t *testing.T, s *testServer, what, token, id string) {
	t.Helper()
	if v := acctViewerOf(t, s, token); v == nil || v.ID != id {
		t.Fatalf("%s: the token signs in %+v, want user %s", what, v, id)
	}
}

// TestAuthLogOutRevokesEveryToken: alice signs up and logs in twice; a
// logOut with one token refuses all three, on the instance that served it
// at once and on a second instance (whose local tier held alice's
// version) once the invalidation message arrived; a new log-in works on
// both, and logging out again revokes it too.
func TestAuthLogOutRevokesEveryToken(t *testing.T) {
	t.Parallel()
	a := newTestServer(t, backendReal)
	b := limitsSecondInstance(t, a)
	alice := acctSignUp(t, a, "alice", "alice-password", nil)
	first := acctLogIn(t, a, "alice", "alice-password")
	second := acctLogIn(t, b, "alice", "alice-password")
	bob := a.signUp(t, "bob")
	tokens := map[string]string{"signUp's": alice.Token, "first logIn's": first.Token, "second logIn's": second.Token}
	for _, s := range []*testServer{a, b} {
		for what, token := range tokens {
			logOutSignsIn(t, s, what, token, alice.User.ID) // fills both instances' tiers
		}
	}

	var out struct{ LogOut bool }
	(&client{s: a, Token: first.Token}).mustDo(t, logOutDoc, nil, &out)
	if !out.LogOut {
		t.Fatal("logOut answered false")
	}
	for what, token := range tokens {
		logOutViewerRefused(t, a, what+" token on the same instance", token)
	}
	logOutWaitRefused(t, b, first.Token)
	for what, token := range tokens {
		logOutViewerRefused(t, b, what+" token on the second instance", token)
	}
	// A refused token acts for no one: not even a mutation runs signed out.
	errsExpect(t, &client{s: a, Token: second.Token}, "UNAUTHENTICATED", logOutDoc, nil)
	errsExpect(t, &client{s: b, Token: second.Token}, "UNAUTHENTICATED", `mutation { createPost(input: {body: "after log-out"}) { post { id } } }`, nil)

	// Bob's token was not revoked.
	logOutSignsIn(t, b, "bob's token", bob.Token, bob.ID)

	again := acctLogIn(t, b, "alice", "alice-password")
	logOutSignsIn(t, a, "a new log-in's token on the first instance", again.Token, alice.User.ID)
	logOutSignsIn(t, b, "a new log-in's token on the second instance", again.Token, alice.User.ID)
	(&client{s: b, Token: again.Token}).mustDo(t, logOutDoc, nil, &out)
	logOutViewerRefused(t, b, "the new token after a second logOut", again.Token)
	logOutWaitRefused(t, a, again.Token)
	logOutViewerRefused(t, a, "the new token after a second logOut, on the first instance", again.Token)
}

// TestAuthLogOutEdges: logOut signed out is UNAUTHENTICATED; a token that
// carries a version its user never had (a forged one from the future, a
// negative one) is refused; a token without a version (issued before
// versions existed) is valid until its user logs out. Each backend.
func TestAuthLogOutEdges(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		const secret = "test-secret-test-secret-test-secret!" // newTestServer's
		errsExpect(t, s.anon(), "UNAUTHENTICATED", logOutDoc, nil)
		alice := s.signUp(t, "alice")
		sub := acctSubjectOf(t, alice.Token)
		forge := func(version any) string {
			claims := jwt.MapClaims{"iss": "feedservice", "sub": sub, "exp": time.Now().Add(time.Hour).Unix()}
			if version != nil {
				claims["tv"] = version
			}
			token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
			if err != nil {
				t.Fatal(err)
			}
			return token
		}
		unversioned := forge(nil)
		logOutSignsIn(t, s, "a token without a version", unversioned, alice.ID)
		logOutSignsIn(t, s, "a token of version 0", forge(0), alice.ID)
		logOutViewerRefused(t, s, "a token of version 1, before any logOut", forge(1))
		errsExpect(t, errsWithAuth(s, "Bearer "+forge(-1)), "UNAUTHENTICATED", acctViewerDoc, nil)
		errsExpect(t, errsWithAuth(s, "Bearer "+forge("1")), "UNAUTHENTICATED", acctViewerDoc, nil)

		alice.mustDo(t, logOutDoc, nil, nil)
		logOutViewerRefused(t, s, "a token without a version, after logOut", unversioned)
		logOutViewerRefused(t, s, "a token of version 0, after logOut", forge(0))
		logOutSignsIn(t, s, "a token of version 1, after one logOut", forge(1), alice.ID)
	})
}

// logOutOnSocket runs a query or mutation on socket c and returns its
// result; closed is true when the socket closed before it answered.
func logOutOnSocket(t *testing.T, c *liveConn, doc string) (res liveResult, end *liveMsg, closed bool) {
	t.Helper()
	c.ids++
	id := strconv.Itoa(c.ids)
	payload, _ := json.Marshal(map[string]any{"query": doc})
	typ := "subscribe"
	if c.proto == liveLegacyWS {
		typ = "start"
	}
	if err := c.send(liveMsg{Type: typ, ID: id, Payload: payload}); err != nil {
		if _, _, ok := c.closeStatus(5 * time.Second); ok {
			return res, nil, true // the server's close frame came first
		}
		t.Fatalf("send %s on the socket: %v", doc, err)
	}
	res, end, err := c.event(id, 5*time.Second)
	if err != nil {
		if _, _, ok := c.closeStatus(time.Second); ok {
			return res, nil, true
		}
		t.Fatalf("%s on the socket: %v (queued %v)", doc, err, c.queued())
	}
	return res, end, false
}

// logOutSocketRefuses fails t unless doc, sent on socket c after its
// token was revoked, is refused with UNAUTHENTICATED or finds the socket
// closed with 4403: it never answers as the viewer.
func logOutSocketRefuses(t *testing.T, c *liveConn, what, doc string) {
	t.Helper()
	res, end, closed := logOutOnSocket(t, c, doc)
	if closed {
		c.expectClose(sockets.CloseForbidden, time.Second)
		return
	}
	if code := liveErrorCode(res, end); code != "UNAUTHENTICATED" {
		t.Fatalf("%s: %s on the socket of a revoked token answered %s (end %v), want UNAUTHENTICATED or a 4403 close", what, doc, res.Data, end)
	}
}

// logOutPostCount is user's postCount, read signed out.
func logOutPostCount(t *testing.T, s *testServer, username string) int {
	t.Helper()
	var out struct{ User struct{ PostCount int } }
	s.anon().mustDo(t, `query($u: String!) { user(username: $u) { postCount } }`, map[string]any{"u": username}, &out)
	return out.User.PostCount
}

// TestAuthLogOutClosesSockets: a logOut over HTTP on instance A closes
// every websocket of its user with 4403, on A (both subprotocols, the
// legacy one after a connection_error) and on a second instance B sharing
// MySQL and Redis, where one ran a subscription; another user's socket
// stays open and answers.
func TestAuthLogOutClosesSockets(t *testing.T) {
	t.Parallel()
	a := newTestServer(t, backendReal)
	b := limitsSecondInstance(t, a)
	alice := a.signUp(t, "alice")
	bob := a.signUp(t, "bob")
	conns := map[string]*liveConn{
		"on A, " + liveTransportWS: liveConnect(t, a, liveTransportWS, alice.Token),
		"on A, " + liveLegacyWS:    liveConnect(t, a, liveLegacyWS, alice.Token),
		"on B, " + liveTransportWS: liveConnect(t, b, liveTransportWS, alice.Token),
	}
	for what, c := range conns {
		if res, end, closed := logOutOnSocket(t, c, acctViewerDoc); closed || end != nil || !strings.Contains(string(res.Data), alice.ID) {
			t.Fatalf("%s: before logOut the viewer query answered %s (end %v, closed %v)", what, res.Data, end, closed)
		}
	}
	onB := conns["on B, "+liveTransportWS]
	unread := onB.subscribe(liveUnreadSub)
	if n := onB.firstCount(unread, 5*time.Second, "before logOut"); n != 0 {
		t.Fatalf("unreadCount %d before logOut, want 0", n)
	}
	bobs := liveConnect(t, b, liveTransportWS, bob.Token)

	alice.mustDo(t, logOutDoc, nil, nil)
	for what, c := range conns {
		if c.proto == liveLegacyWS {
			if m, err := c.take(5*time.Second, liveOfType("connection_error")); err != nil {
				t.Fatalf("%s: no connection_error before the close: %v (queued %v)", what, err, c.queued())
			} else if !strings.Contains(string(m.Payload), "revoked") {
				t.Fatalf("%s: connection_error %s does not say the token was revoked", what, m.Payload)
			}
		}
		got, text, ok := c.closeStatus(5 * time.Second)
		if !ok || got != sockets.CloseForbidden {
			t.Fatalf("%s: after logOut the socket is open %v / closed with %d %q, want closed with %d (queued %v)", what, !ok, got, text, sockets.CloseForbidden, c.queued())
		}
	}
	if res, end, closed := logOutOnSocket(t, bobs, acctViewerDoc); closed || end != nil || !strings.Contains(string(res.Data), bob.ID) {
		t.Fatalf("bob's socket after alice's logOut: %s (end %v, closed %v)", res.Data, end, closed)
	}
}

// TestAuthLogOutSocketRunsNothingAfter: once logOut over HTTP answered,
// nothing sent on a socket opened with the revoked token runs as its
// viewer. On the instance that served logOut a query, a createPost and a
// logIn sent at once are each refused (UNAUTHENTICATED) or find the socket
// closed (4403). On an instance that never hears the log-out's message (its
// hub is not running), an operation is refused as soon as its HTTP
// requests refuse the token, and the socket is closed then with 4403.
func TestAuthLogOutSocketRunsNothingAfter(t *testing.T) {
	t.Parallel()
	a := newTestServer(t, backendReal)
	deaf := logOutDeafInstance(t, a)
	alice := a.signUp(t, "alice")
	onA := liveConnect(t, a, liveTransportWS, alice.Token)
	onDeaf := liveConnect(t, deaf, liveTransportWS, alice.Token)
	for what, c := range map[string]*liveConn{"on A": onA, "on the deaf instance": onDeaf} {
		if res, end, closed := logOutOnSocket(t, c, acctViewerDoc); closed || end != nil || !strings.Contains(string(res.Data), alice.ID) {
			t.Fatalf("%s: before logOut the viewer query answered %s (end %v, closed %v)", what, res.Data, end, closed)
		}
	}

	alice.mustDo(t, logOutDoc, nil, nil)
	logOutSocketRefuses(t, onA, "on A", acctViewerDoc)
	logOutSocketRefuses(t, onA, "on A", `mutation { createPost(input: {body: "after log-out"}) { post { id } } }`)
	logOutSocketRefuses(t, onA, "on A", `mutation { logIn(input: {username: "alice", password: "password-alice"}) { token } }`)
	if n := logOutPostCount(t, a, "alice"); n != 0 {
		t.Fatalf("a createPost sent on the socket after logOut made %d posts", n)
	}

	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for {
		r := (&client{s: deaf, Token: alice.Token}).do(t, acctViewerDoc, nil)
		if r.Code() == "UNAUTHENTICATED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deaf instance still accepts the revoked token over HTTP: %s", r.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	logOutSocketRefuses(t, onDeaf, "on the deaf instance", acctViewerDoc)
	onDeaf.expectClose(sockets.CloseForbidden, 5*time.Second)
}

// logOutDeafInstance starts a second instance of a's deployment whose
// engine is not started: it answers requests but hears no message of the
// others (as one whose pub/sub connection lost them), so only its local
// tier's bound tells it of a log-out.
func logOutDeafInstance(t *testing.T, a *testServer) *testServer {
	t.Helper()
	cfg := a.app.cfg
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	opened, err := openApp(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(opened.handler())
	t.Cleanup(func() {
		hs.Close()
		opened.close()
	})
	return &testServer{app: opened, URL: hs.URL}
}

// TestAuthLogOutThenMoreFields: in one mutation, the fields after logOut
// do not run as the revoked viewer: createPost and a second logOut fail
// with UNAUTHENTICATED (and no post is made), over HTTP and on a socket,
// and so does logIn (the request's own token was revoked); the fields up
// to logOut ran. (The refused fields are non-null, so data is null.)
func TestAuthLogOutThenMoreFields(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	const doc = `mutation {
		before: updateProfile(input: {bio: "before"}) { bio }
		out: logOut
		post: createPost(input: {body: "after log-out"}) { post { id } }
		again: logOut
		in: logIn(input: {username: "NAME", password: "password-NAME"}) { token }
	}`
	check := func(t *testing.T, what string, user *client, data json.RawMessage, errs []gqlError) {
		t.Helper()
		if strings.Contains(string(data), `"post":{`) || strings.Contains(string(data), `"token"`) {
			t.Fatalf("%s: fields after logOut ran: %s", what, data)
		}
		refused := map[string]bool{}
		for _, e := range errs {
			if e.Extensions["code"] == "UNAUTHENTICATED" && len(e.Path) == 1 {
				refused[fmt.Sprint(e.Path[0])] = true
			} else {
				t.Errorf("%s: unexpected error %+v", what, e)
			}
		}
		for _, field := range []string{"post", "again", "in"} {
			if !refused[field] {
				t.Fatalf("%s: %s after logOut was not refused with UNAUTHENTICATED: %+v", what, field, errs)
			}
		}
		if p := acctUserNamed(t, s, user.Name); p == nil || p.Bio != "before" {
			t.Fatalf("%s: the updateProfile before logOut did not run: %+v", what, p)
		}
		logOutViewerRefused(t, s, what+": the token after the mutation", user.Token)
		if n := logOutPostCount(t, s, user.Name); n != 0 {
			t.Fatalf("%s: createPost after logOut made %d posts", what, n)
		}
	}
	t.Run("http", func(t *testing.T) {
		alice := s.signUp(t, "alice")
		r := alice.do(t, strings.ReplaceAll(doc, "NAME", alice.Name), nil)
		check(t, "over HTTP", alice, r.Data, r.Errors)
	})
	t.Run("batch", func(t *testing.T) {
		dave := s.signUp(t, "dave")
		body, _ := json.Marshal([]map[string]any{
			{"query": logOutDoc},
			{"query": `mutation { createPost(input: {body: "after log-out"}) { post { id } } }`},
			{"query": acctViewerDoc},
		})
		res, raw := limitsPost(t, s, dave.Token, nil, body)
		var results []response
		if err := json.Unmarshal(raw, &results); err != nil || res.StatusCode != http.StatusOK || len(results) != 3 {
			t.Fatalf("status %d, body %s: %v", res.StatusCode, raw, err)
		}
		if !strings.Contains(string(results[0].Data), `"logOut":true`) {
			t.Fatalf("the batch's logOut answered %s %+v", results[0].Data, results[0].Errors)
		}
		for i, what := range []string{"", "createPost", "the viewer query"} {
			if i > 0 && results[i].Code() != "UNAUTHENTICATED" {
				t.Fatalf("%s after logOut in one batch answered %s %+v, want UNAUTHENTICATED", what, results[i].Data, results[i].Errors)
			}
		}
		if n := logOutPostCount(t, s, "dave"); n != 0 {
			t.Fatalf("createPost after logOut in one batch made %d posts", n)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		carol := s.signUp(t, "carol")
		c := liveConnect(t, s, liveTransportWS, carol.Token)
		res, end, closed := logOutOnSocket(t, c, strings.ReplaceAll(doc, "NAME", carol.Name))
		if closed || end != nil {
			t.Fatalf("the mutation on the socket got no answer (end %v, closed %v)", end, closed)
		}
		check(t, "on a socket", carol, res.Data, res.Errors)
		c.expectClose(sockets.CloseForbidden, 5*time.Second)
	})
}

// TestAuthLogOutLostMessages: an instance whose hub lost messages (it
// reconnected: the engine then calls MayHaveLoggedOut) closes with 4403
// the sockets of users who logged out meanwhile, without waiting for an
// operation on them, and keeps the others open.
func TestAuthLogOutLostMessages(t *testing.T) {
	t.Parallel()
	a := newTestServer(t, backendReal)
	deaf := logOutDeafInstance(t, a)
	alice := a.signUp(t, "alice")
	bob := a.signUp(t, "bob")
	alices := liveConnect(t, deaf, liveTransportWS, alice.Token)
	bobs := liveConnect(t, deaf, liveTransportWS, bob.Token)

	alice.mustDo(t, logOutDoc, nil, nil)
	deaf.app.sockets.MayHaveLoggedOut()
	alices.expectClose(sockets.CloseForbidden, 5*time.Second)
	if res, end, closed := logOutOnSocket(t, bobs, acctViewerDoc); closed || end != nil || !strings.Contains(string(res.Data), bob.ID) {
		t.Fatalf("bob's socket after alice's logOut: %s (end %v, closed %v)", res.Data, end, closed)
	}
}

// TestAuthLogOutNotRefusedByTheBudgetsItRevokes: a thief's token spends
// its user's mutation budget with markFeedRead batches and then their
// complexity budget; the owner's logOut, with a token of their own, still
// runs (the budgets are per user, so it was refused with RATE_LIMITED),
// and the thief's token is refused after it.
func TestAuthLogOutNotRefusedByTheBudgetsItRevokes(t *testing.T) {
	t.Parallel()
	const mutations = 3
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MutationRate = ratelimit.Rate{Count: mutations, Period: time.Hour}
		c.ComplexityRate = ratelimit.Rate{Count: 100, Period: time.Hour}
	})
	acctSignUp(t, s, "alice", "alice-password", nil)
	thief := &client{s: s, Token: acctLogIn(t, s, "alice", "alice-password").Token}
	owner := &client{s: s, Token: acctLogIn(t, s, "alice", "alice-password").Token}
	const batch = `mutation { a: markFeedRead { unreadCount } b: markFeedRead { unreadCount } }`
	for i := 0; thief.do(t, batch, nil).Code() != "RATE_LIMITED"; i++ {
		if i > mutations {
			t.Fatalf("%d markFeedRead batches ran under a budget of %d mutations", i+1, mutations)
		}
	}
	if r := owner.do(t, `mutation { markFeedRead { unreadCount } }`, nil); r.Code() != "RATE_LIMITED" {
		t.Fatalf("the owner's markFeedRead after the thief's batches: %+v, want RATE_LIMITED (one budget per user)", r.Errors)
	}
	// At a price of 1, as logOut's, so that the budget has no unit left.
	for i := 0; thief.do(t, `{ __typename }`, nil).Code() != "RATE_LIMITED"; i++ {
		if i > 100 {
			t.Fatalf("%d queries of price 1 ran under a complexity budget of 100", i+1)
		}
	}
	var out struct{ LogOut bool }
	owner.mustDo(t, logOutDoc, nil, &out)
	if !out.LogOut {
		t.Fatal("logOut answered false")
	}
	logOutViewerRefused(t, s, "the thief's token after the owner's logOut", thief.Token)
	// logOut beside another field is an ordinary mutation, and pays.
	again := &client{s: s, Token: acctLogIn(t, s, "alice", "alice-password").Token}
	if r := again.do(t, `mutation { markFeedRead { unreadCount } logOut }`, nil); r.Code() != "RATE_LIMITED" {
		t.Errorf("logOut beside markFeedRead, budgets spent: %+v, want RATE_LIMITED", r.Errors)
	}
}
