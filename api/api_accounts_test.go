package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
)

// This file checks accounts: signing up and in, the viewer, profiles, the
// limits of their fields, and how bearer tokens are refused.

const (
	acctSignUpDoc = `mutation($u: String!, $p: String!, $d: String) {
		signUp(input: {username: $u, password: $p, displayName: $d}) { token user { id username displayName bio } }
	}`
	acctLogInDoc         = `mutation($u: String!, $p: String!) { logIn(input: {username: $u, password: $p}) { token user { id username } } }`
	acctUpdateProfileDoc = `mutation($d: String, $b: String) { updateProfile(input: {displayName: $d, bio: $b}) { id displayName bio } }`
	acctViewerDoc        = `{ viewer { id username displayName bio } }`
)

// acctProfile is the User fields the documents above ask for.
type acctProfile struct{ ID, Username, DisplayName, Bio string }

// acctAuthPayload is the answer of signUp and logIn.
type acctAuthPayload struct {
	Token string
	User  acctProfile
}

// acctSignUp signs up with a password and an optional display name (nil
// for none) and returns the payload, failing t on any error.
func acctSignUp(t *testing.T, s *testServer, username, password string, displayName *string) acctAuthPayload {
	t.Helper()
	var out struct{ SignUp acctAuthPayload }
	s.anon().mustDo(t, acctSignUpDoc, map[string]any{"u": username, "p": password, "d": displayName}, &out)
	if out.SignUp.Token == "" || out.SignUp.User.ID == "" {
		t.Fatalf("signUp(%s) answered %+v", username, out.SignUp)
	}
	return out.SignUp
}

// acctLogIn logs in and returns the payload, failing t on any error.
func acctLogIn(t *testing.T, s *testServer, username, password string) acctAuthPayload {
	t.Helper()
	var out struct{ LogIn acctAuthPayload }
	s.anon().mustDo(t, acctLogInDoc, map[string]any{"u": username, "p": password}, &out)
	return out.LogIn
}

// acctViewerOf returns the viewer that token signs in, or nil when signed out.
func acctViewerOf(t *testing.T, s *testServer, token string) *acctProfile {
	t.Helper()
	var out struct{ Viewer *acctProfile }
	(&client{s: s, Token: token}).mustDo(t, acctViewerDoc, nil, &out)
	return out.Viewer
}

// acctUserNamed runs user(username) signed out.
func acctUserNamed(t *testing.T, s *testServer, username string) *acctProfile {
	t.Helper()
	var out struct{ User *acctProfile }
	s.anon().mustDo(t, `query($u: String!) { user(username: $u) { id username displayName bio } }`, map[string]any{"u": username}, &out)
	return out.User
}

func acctPtr(s string) *string { return &s }

func TestAccountsSignUp(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		t.Run("display name defaults to the username", func(t *testing.T) {
			p := acctSignUp(t, s, "Alice_1", "alice-password", nil)
			if p.User != (acctProfile{ID: p.User.ID, Username: "Alice_1", DisplayName: "Alice_1", Bio: ""}) {
				t.Fatalf("user = %+v", p.User)
			}
			if v := acctViewerOf(t, s, p.Token); v == nil || *v != p.User {
				t.Fatalf("the token signs in %+v, want %+v", v, p.User)
			}
		})
		t.Run("display name is trimmed", func(t *testing.T) {
			p := acctSignUp(t, s, "bob", "bob-password", acctPtr("  \tBob the Builder 🔨 \n"))
			if p.User.DisplayName != "Bob the Builder 🔨" {
				t.Fatalf("displayName = %q", p.User.DisplayName)
			}
			if u := acctUserNamed(t, s, "bob"); u == nil || u.DisplayName != "Bob the Builder 🔨" {
				t.Fatalf("stored user = %+v", u)
			}
		})
		t.Run("whitespace-only display name", func(t *testing.T) {
			errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": "carol", "p": "carol-password", "d": "   "})
		})
	})
}

func TestAccountsLogInIgnoresUsernameCase(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		signedUp := acctSignUp(t, s, "Alice", "alice-password", nil)
		for _, name := range []string{"Alice", "alice", "ALICE", "aLiCe"} {
			p := acctLogIn(t, s, name, "alice-password")
			if p.User.ID != signedUp.User.ID || p.User.Username != "Alice" {
				t.Errorf("logIn(%s) = %+v, want Alice as she signed up", name, p.User)
			}
			if v := acctViewerOf(t, s, p.Token); v == nil || v.ID != signedUp.User.ID {
				t.Errorf("the token of logIn(%s) signs in %+v", name, v)
			}
		}
	})
}

func TestAccountsUsernamesAreUniqueIgnoringCase(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		acctSignUp(t, s, "alice", "alice-password", nil)
		for _, name := range []string{"alice", "Alice", "ALICE"} {
			errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": name, "p": "impostor-password"})
		}
		// The first alice keeps her account and password.
		acctLogIn(t, s, "alice", "alice-password")
		errsExpect(t, s.anon(), "UNAUTHENTICATED", acctLogInDoc, map[string]any{"u": "Alice", "p": "impostor-password"})
	})
}

func TestAccountsViewer(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		var out struct{ Viewer *acctProfile }
		s.anon().mustDo(t, acctViewerDoc, nil, &out)
		if out.Viewer != nil {
			t.Fatalf("signed out, viewer = %+v", out.Viewer)
		}
		alice := s.signUp(t, "alice")
		s.signUp(t, "bob")
		if v := acctViewerOf(t, s, alice.Token); v == nil || v.ID != alice.ID || v.Username != "alice" {
			t.Fatalf("signed in as alice, viewer = %+v", v)
		}
	})
}

func TestAccountsUserByUsername(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "Alice")
		for _, name := range []string{"Alice", "alice", "ALICE"} {
			if u := acctUserNamed(t, s, name); u == nil || u.ID != alice.ID || u.Username != "Alice" {
				t.Errorf("user(%s) = %+v", name, u)
			}
		}
		for _, name := range []string{"bob", "Alic", "Alice_", ""} {
			if u := acctUserNamed(t, s, name); u != nil {
				t.Errorf("user(%q) = %+v, want null", name, u)
			}
		}
	})
}

func TestAccountsUpdateProfile(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		update := func(t *testing.T, vars map[string]any, want acctProfile) {
			t.Helper()
			var out struct{ UpdateProfile acctProfile }
			alice.mustDo(t, acctUpdateProfileDoc, vars, &out)
			want.ID = alice.ID
			if out.UpdateProfile != want {
				t.Fatalf("updateProfile(%v) = %+v, want %+v", vars, out.UpdateProfile, want)
			}
			if stored := acctUserNamed(t, s, "alice"); *stored != (acctProfile{alice.ID, "alice", want.DisplayName, want.Bio}) {
				t.Fatalf("stored after updateProfile(%v): %+v", vars, stored)
			}
		}
		t.Run("both", func(t *testing.T) {
			update(t, map[string]any{"d": "  Alice A. ", "b": "Likes ☕ and 🚲."}, acctProfile{DisplayName: "Alice A.", Bio: "Likes ☕ and 🚲."})
		})
		t.Run("display name only keeps the bio", func(t *testing.T) {
			update(t, map[string]any{"d": "Ally"}, acctProfile{DisplayName: "Ally", Bio: "Likes ☕ and 🚲."})
		})
		t.Run("bio only keeps the display name", func(t *testing.T) {
			update(t, map[string]any{"b": "New bio"}, acctProfile{DisplayName: "Ally", Bio: "New bio"})
		})
		t.Run("the same values again", func(t *testing.T) {
			update(t, map[string]any{"d": "Ally", "b": "New bio"}, acctProfile{DisplayName: "Ally", Bio: "New bio"})
		})
		t.Run("nothing", func(t *testing.T) {
			update(t, map[string]any{}, acctProfile{DisplayName: "Ally", Bio: "New bio"})
		})
		t.Run("empty bio clears it", func(t *testing.T) {
			update(t, map[string]any{"b": ""}, acctProfile{DisplayName: "Ally", Bio: ""})
		})
		t.Run("whitespace-only display name", func(t *testing.T) {
			errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"d": " \t "})
		})
		t.Run("signed out", func(t *testing.T) {
			errsExpect(t, s.anon(), "UNAUTHENTICATED", acctUpdateProfileDoc, map[string]any{"b": "hacked"})
			if u := acctUserNamed(t, s, "alice"); u.Bio != "" {
				t.Fatalf("bio = %q after a signed-out update", u.Bio)
			}
		})
	})
}

func TestAuthWrongPasswordAndUnknownUserLookTheSame(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		acctSignUp(t, s, "alice", "alice-password", nil)
		wrongPassword := errsExpect(t, s.anon(), "UNAUTHENTICATED", acctLogInDoc, map[string]any{"u": "alice", "p": "not-her-password"})
		unknownUser := errsExpect(t, s.anon(), "UNAUTHENTICATED", acctLogInDoc, map[string]any{"u": "nobody", "p": "alice-password"})
		if len(wrongPassword.Errors) != 1 || len(unknownUser.Errors) != 1 || wrongPassword.Errors[0].Message != unknownUser.Errors[0].Message {
			t.Fatalf("wrong password: %+v\nunknown user: %+v\nwant the same single error", wrongPassword.Errors, unknownUser.Errors)
		}
	})
}

// acctForgeToken signs claims for user sub (the subject of a token the server
// issued) with secret, expiring at exp.
func acctForgeToken(t *testing.T, method jwt.SigningMethod, secret any, issuer, sub string, exp time.Time) string {
	t.Helper()
	claims := jwt.RegisteredClaims{
		Issuer:    issuer,
		Subject:   sub,
		IssuedAt:  jwt.NewNumericDate(exp.Add(-time.Hour)),
		ExpiresAt: jwt.NewNumericDate(exp),
	}
	token, err := jwt.NewWithClaims(method, claims).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// acctSubjectOf reads the subject of a token without checking it.
func acctSubjectOf(t *testing.T, token string) string {
	t.Helper()
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
		t.Fatalf("the server's token is not a JWT: %v", err)
	}
	return claims.Subject
}

func TestAuthBadTokensAreRefusedNotSignedOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		const secret = "test-secret-test-secret-test-secret!" // newTestServer's
		alice := s.signUp(t, "alice")
		sub := acctSubjectOf(t, alice.Token)
		later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Minute)

		// The forging itself is right: with the server's secret it signs alice in.
		genuine := acctForgeToken(t, jwt.SigningMethodHS256, []byte(secret), "feedservice", sub, later)
		if v := acctViewerOf(t, s, genuine); v == nil || v.ID != alice.ID {
			t.Fatalf("a token forged with the server's own secret signs in %+v, want alice", v)
		}

		headers := map[string]string{
			"malformed":            "Bearer not-a-token",
			"three junk parts":     "Bearer aaa.bbb.ccc",
			"tampered signature":   "Bearer " + alice.Token + "x",
			"another secret":       "Bearer " + acctForgeToken(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-another!"), "feedservice", sub, later),
			"expired":              "Bearer " + acctForgeToken(t, jwt.SigningMethodHS256, []byte(secret), "feedservice", sub, earlier),
			"another issuer":       "Bearer " + acctForgeToken(t, jwt.SigningMethodHS256, []byte(secret), "someone-else", sub, later),
			"unsigned (alg none)":  "Bearer " + acctForgeToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "feedservice", sub, later),
			"Basic scheme":         "Basic YWxpY2U6YWxpY2UtcGFzc3dvcmQ=",
			"Token scheme":         "Token " + alice.Token,
			"no scheme":            alice.Token,
			"scheme without token": "Bearer",
		}
		operations := map[string]struct {
			doc  string
			vars map[string]any
		}{
			"viewer":   {`{ viewer { id } }`, nil},
			"user":     {`{ user(username: "alice") { id } }`, nil},
			"node":     {errsNodeDoc, map[string]any{"id": alice.ID}},
			"logIn":    {acctLogInDoc, map[string]any{"u": "alice", "p": "password-alice"}},
			"signUp":   {acctSignUpDoc, map[string]any{"u": "mallory", "p": "mallory-password"}},
			"typename": {`{ __typename }`, nil},
		}
		for what, header := range headers {
			for name, op := range operations {
				t.Run(what+"/"+name, func(t *testing.T) {
					r := errsExpect(t, errsWithAuth(s, header), "UNAUTHENTICATED", op.doc, op.vars)
					if len(r.Data) != 0 && string(r.Data) != "null" {
						t.Fatalf("data %s alongside the refusal", r.Data)
					}
				})
			}
		}
		if acctUserNamed(t, s, "mallory") != nil {
			t.Fatal("a signUp with a refused token was carried out")
		}
	})
}

func TestAuthTokenLifetimeIsTokenTTL(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.TokenTTL = 90 * time.Second })
	alice := s.signUp(t, "alice")
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(alice.Token, &claims); err != nil || claims.ExpiresAt == nil || claims.IssuedAt == nil {
		t.Fatalf("the token has no lifetime: %v %+v", err, claims)
	}
	if ttl := claims.ExpiresAt.Sub(claims.IssuedAt.Time); ttl != 90*time.Second {
		t.Fatalf("token lifetime %s, want the configured 90s", ttl)
	}
}

func TestLimitsUsernameLength(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		for n := feedconfig.MinUsernameChars; n <= feedconfig.MaxUsernameChars; n += feedconfig.MaxUsernameChars - feedconfig.MinUsernameChars {
			name := strings.Repeat("u", n)
			if p := acctSignUp(t, s, name, "long-enough-password", nil); p.User.Username != name {
				t.Errorf("a username of %d characters came back as %q", n, p.User.Username)
			}
		}
		for _, n := range []int{feedconfig.MinUsernameChars - 1, feedconfig.MaxUsernameChars + 1} {
			errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": strings.Repeat("v", n), "p": "long-enough-password"})
		}
	})
}

func TestLimitsUsernameCharacters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		acctSignUp(t, s, "Al_1ce_09", "long-enough-password", nil)
		for _, name := range []string{"al ice", "al-ice", "ålice", "alice!", "al.ice", " alice", "alice\n", ""} {
			errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": name, "p": "long-enough-password"})
		}
	})
}

func TestLimitsPasswordLength(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		// Counted in characters: "é" is two bytes.
		for i, char := range []string{"p", "é"} {
			for _, n := range []int{feedconfig.MinPasswordChars, feedconfig.MaxPasswordChars} {
				name := fmt.Sprintf("user%d_%d", i, n)
				password := strings.Repeat(char, n)
				acctSignUp(t, s, name, password, nil)
				acctLogIn(t, s, name, password)
			}
			for _, n := range []int{feedconfig.MinPasswordChars - 1, feedconfig.MaxPasswordChars + 1} {
				errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": "refused", "p": strings.Repeat(char, n)})
			}
		}
	})
}

func TestLimitsEveryCharacterOfThePasswordCounts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		password := strings.Repeat("abcdefghij", feedconfig.MaxPasswordChars/10)
		acctSignUp(t, s, "alice", password, nil)
		acctLogIn(t, s, "alice", password)
		// Differs in the 150th character only, far past bcrypt's 72 bytes.
		other := []byte(password)
		other[149] = 'X'
		errsExpect(t, s.anon(), "UNAUTHENTICATED", acctLogInDoc, map[string]any{"u": "alice", "p": string(other)})
		errsExpect(t, s.anon(), "UNAUTHENTICATED", acctLogInDoc, map[string]any{"u": "alice", "p": password[:feedconfig.MaxPasswordChars-1]})
	})
}

func TestLimitsDisplayName(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		// Counted in code points after trimming: "é" is 2 bytes, "🙂" 4.
		for i, char := range []string{"d", "é", "🙂"} {
			atLimit := strings.Repeat(char, feedconfig.MaxDisplayNameChars)
			t.Run("signUp "+char, func(t *testing.T) {
				p := acctSignUp(t, s, fmt.Sprintf("user%d", i), "long-enough-password", acctPtr("  "+atLimit+" "))
				if p.User.DisplayName != atLimit {
					t.Fatalf("displayName = %q", p.User.DisplayName)
				}
				errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": "refused", "p": "long-enough-password", "d": atLimit + char})
			})
			t.Run("updateProfile "+char, func(t *testing.T) {
				var out struct{ UpdateProfile acctProfile }
				alice.mustDo(t, acctUpdateProfileDoc, map[string]any{"d": atLimit + "\n"}, &out)
				if out.UpdateProfile.DisplayName != atLimit {
					t.Fatalf("displayName = %q", out.UpdateProfile.DisplayName)
				}
				errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"d": atLimit + char})
			})
		}
	})
}

func TestLimitsBio(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		for _, char := range []string{"b", "é", "🙂"} {
			t.Run(char, func(t *testing.T) {
				atLimit := strings.Repeat(char, feedconfig.MaxBioChars)
				var out struct{ UpdateProfile acctProfile }
				alice.mustDo(t, acctUpdateProfileDoc, map[string]any{"b": atLimit}, &out)
				if out.UpdateProfile.Bio != atLimit {
					t.Fatalf("a bio of %d %q came back as %d bytes", feedconfig.MaxBioChars, char, len(out.UpdateProfile.Bio))
				}
				errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"b": atLimit + char})
				if u := acctUserNamed(t, s, "alice"); u.Bio != atLimit {
					t.Fatalf("a refused bio changed the stored one")
				}
			})
		}
	})
}

// TestLimitsProfileControlCharacters: bios follow the rule of post bodies,
// display names a stricter one. Of the controls a bio takes line feed and
// tab, a display name none; the characters on either side of the refused
// ranges pass in both: "~" (U+007E) below DEL, and no-break space (U+00A0)
// above the C1 range. A display name refuses the bidirectional formatting
// characters, each of them, and takes the characters beside their ranges.
// A refused text changes nothing, and its message names the character.
func TestLimitsProfileControlCharacters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		refused := map[string]string{
			"NUL": "a\x00b", "U+001F": "a\x1fb", "carriage return": "a\rb", "escape": "\x1b[31mred", "DEL": "a\x7fb",
			"C1 U+0080": "a\u0080b", "C1 U+0085": "a\u0085b", "C1 U+009F": "a\u009fb",
		}
		// Refused in display names only: one line, and no reordering.
		nameRefused := []rune{'\n', '\t', 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c}
		taken := map[string]string{"U+007E": "a~b", "U+00A0": "a\u00a0b", "U+0020": "a b"}
		// Beside the bidirectional ranges: U+2029 and U+202F, U+2065 and
		// U+206A, U+200D and U+2010, U+061B and U+061D.
		nameTaken := map[string]string{"U+2029": "a\u2029b", "U+202F": "a\u202fb", "U+2065": "a\u2065b", "U+206A": "a\u206ab",
			"U+200D": "a\u200db", "U+2010": "a\u2010b", "U+061B": "a\u061bb", "U+061D": "a\u061db", "Hebrew": "\u05e9\u05dc\u05d5\u05dd"}
		bioTaken := map[string]string{"line feed": "a\nb", "tab": "a\tb", "U+202E": "a\u202eb"}
		n := 0
		for name, text := range refused {
			t.Run("refused "+name, func(t *testing.T) {
				n++
				errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": fmt.Sprintf("ctl%d", n), "p": "long-enough-password", "d": text})
				before := acctUserNamed(t, s, "alice")
				errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"d": text})
				errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"b": text})
				if after := acctUserNamed(t, s, "alice"); *after != *before {
					t.Fatalf("a refused profile changed it: %+v, was %+v", after, before)
				}
			})
		}
		for _, char := range nameRefused {
			t.Run(fmt.Sprintf("refused in a name %U", char), func(t *testing.T) {
				n++
				text := "evil" + string(char) + "name"
				r := errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": fmt.Sprintf("ctl%d", n), "p": "long-enough-password", "d": text})
				if msg := r.Errors[0].Message; !strings.Contains(msg, "display name") || !strings.Contains(msg, fmt.Sprintf("%U", char)) {
					t.Fatalf("refused with %q, want a message naming the display name and %U", msg, char)
				}
				before := acctUserNamed(t, s, "alice")
				errsExpect(t, alice, "BAD_USER_INPUT", acctUpdateProfileDoc, map[string]any{"d": text})
				if after := acctUserNamed(t, s, "alice"); *after != *before {
					t.Fatalf("a refused display name changed the profile: %+v, was %+v", after, before)
				}
			})
		}
		for name, text := range bioTaken {
			t.Run("taken in a bio "+name, func(t *testing.T) {
				var out struct{ UpdateProfile acctProfile }
				alice.mustDo(t, acctUpdateProfileDoc, map[string]any{"b": text}, &out)
				if out.UpdateProfile.Bio != text {
					t.Fatalf("updateProfile stored the bio % x, sent % x", out.UpdateProfile.Bio, text)
				}
			})
		}
		for name, text := range taken {
			t.Run("taken "+name, func(t *testing.T) {
				n++
				if p := acctSignUp(t, s, fmt.Sprintf("ctl%d", n), "long-enough-password", acctPtr(text)); p.User.DisplayName != text {
					t.Fatalf("signUp displayName % x, sent % x", p.User.DisplayName, text)
				}
				var out struct{ UpdateProfile acctProfile }
				alice.mustDo(t, acctUpdateProfileDoc, map[string]any{"d": text, "b": text}, &out)
				if out.UpdateProfile.DisplayName != text || out.UpdateProfile.Bio != text {
					t.Fatalf("updateProfile stored % x and % x, sent % x", out.UpdateProfile.DisplayName, out.UpdateProfile.Bio, text)
				}
			})
		}
		for name, text := range nameTaken {
			t.Run("taken in a name "+name, func(t *testing.T) {
				n++
				if p := acctSignUp(t, s, fmt.Sprintf("ctl%d", n), "long-enough-password", acctPtr(text)); p.User.DisplayName != text {
					t.Fatalf("signUp displayName % x, sent % x", p.User.DisplayName, text)
				}
			})
		}
	})
}
