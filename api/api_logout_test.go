package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

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
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(10*time.Second))
	defer cancel()
	if err := b.app.engine.SyncInvalidations(ctx); err != nil {
		t.Fatal(err)
	}
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
	if err := a.app.engine.SyncInvalidations(ctx); err != nil {
		t.Fatal(err)
	}
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
