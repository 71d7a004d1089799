package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/crypto/bcrypt"

	"feedservice/internal/apperr"
)

var testSecret = []byte("a test secret of thirty-two bytes")

// clock is a settable clock for Tokens.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func mustIssue(t *testing.T, tokens *Tokens, id, version int64) string {
	t.Helper()
	token, err := tokens.Issue(id, version)
	if err != nil {
		t.Fatalf("Issue(%d, %d): %v", id, version, err)
	}
	return token
}

// signed signs claims with secret as method, for tokens Issue would never make.
func signed(t *testing.T, method jwt.SigningMethod, secret any, claims jwt.Claims) string {
	t.Helper()
	token, err := jwt.NewWithClaims(method, claims).SignedString(secret)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return token
}

func wantBadToken(t *testing.T, tokens *Tokens, what, token string) {
	t.Helper()
	id, version, err := tokens.Parse(token)
	if !errors.Is(err, apperr.ErrBadToken) {
		t.Errorf("%s: Parse = (%d, %d, %v), want apperr.ErrBadToken", what, id, version, err)
	}
	if id != 0 || version != 0 {
		t.Errorf("%s: Parse gave id %d and version %d with its error, want zeros", what, id, version)
	}
}

func TestIssuedTokenParsesToItsUserAndVersion(t *testing.T) {
	c := newClock()
	tokens := NewTokens(testSecret, time.Hour, c.now)
	for _, tc := range []struct{ id, version int64 }{{1, 0}, {42, 7}, {1<<53 + 1, 1 << 40}} {
		id, version, err := tokens.Parse(mustIssue(t, tokens, tc.id, tc.version))
		if err != nil || id != tc.id || version != tc.version {
			t.Errorf("Parse(Issue(%d, %d)) = (%d, %d, %v)", tc.id, tc.version, id, version, err)
		}
	}
}

// A token lives exactly its TTL by the clock it was given: valid up to its
// expiry, refused from then on.
func TestTokenExpiresAfterItsTTL(t *testing.T) {
	c := newClock()
	tokens := NewTokens(testSecret, time.Hour, c.now)
	token := mustIssue(t, tokens, 5, 1)

	c.t = c.t.Add(time.Hour - time.Second)
	if id, _, err := tokens.Parse(token); err != nil || id != 5 {
		t.Fatalf("a second before expiry: Parse = (%d, %v), want user 5", id, err)
	}
	c.t = c.t.Add(time.Second)
	wantBadToken(t, tokens, "at expiry", token)
	c.t = c.t.Add(24 * time.Hour)
	wantBadToken(t, tokens, "a day after expiry", token)
}

func TestForgedTokensAreRefused(t *testing.T) {
	c := newClock()
	tokens := NewTokens(testSecret, time.Hour, c.now)
	other := NewTokens([]byte("another secret"), time.Hour, c.now)
	wantBadToken(t, tokens, "signed with another secret", mustIssue(t, other, 5, 0))

	// The payload of user 5's token swapped for user 6's, the signature kept.
	genuine := strings.Split(mustIssue(t, tokens, 5, 0), ".")
	forged := strings.Split(mustIssue(t, other, 6, 0), ".")
	wantBadToken(t, tokens, "another user's payload", genuine[0]+"."+forged[1]+"."+genuine[2])

	claims := jwt.RegisteredClaims{
		Issuer:    tokenIssuer,
		Subject:   "5",
		ExpiresAt: jwt.NewNumericDate(c.t.Add(time.Hour)),
	}
	wantBadToken(t, tokens, "alg none", signed(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims))
	// The right secret under another algorithm: only HS256 is accepted.
	wantBadToken(t, tokens, "HS512", signed(t, jwt.SigningMethodHS512, testSecret, claims))
}

func TestMalformedTokensAreRefused(t *testing.T) {
	tokens := NewTokens(testSecret, time.Hour, newClock().now)
	for _, token := range []string{"", "x", "a.b.c", "..", "Bearer " + mustIssue(t, tokens, 5, 0)} {
		wantBadToken(t, tokens, "token "+token, token)
	}
}

// Tokens signed with the right secret and algorithm whose claims Issue would
// never write are refused all the same.
func TestTokensWithBadClaimsAreRefused(t *testing.T) {
	c := newClock()
	tokens := NewTokens(testSecret, time.Hour, c.now)
	exp := jwt.NewNumericDate(c.t.Add(time.Hour))
	for what, claims := range map[string]jwt.Claims{
		"another issuer":         jwt.RegisteredClaims{Issuer: "someone", Subject: "5", ExpiresAt: exp},
		"no issuer":              jwt.RegisteredClaims{Subject: "5", ExpiresAt: exp},
		"no expiry":              jwt.RegisteredClaims{Issuer: tokenIssuer, Subject: "5"},
		"no subject":             jwt.RegisteredClaims{Issuer: tokenIssuer, ExpiresAt: exp},
		"a subject not a number": jwt.RegisteredClaims{Issuer: tokenIssuer, Subject: "alice", ExpiresAt: exp},
		"user 0":                 jwt.RegisteredClaims{Issuer: tokenIssuer, Subject: "0", ExpiresAt: exp},
		"a negative user":        jwt.RegisteredClaims{Issuer: tokenIssuer, Subject: "-5", ExpiresAt: exp},
		"a negative version": tokenClaims{
			RegisteredClaims: jwt.RegisteredClaims{Issuer: tokenIssuer, Subject: "5", ExpiresAt: exp},
			TokenVersion:     -1,
		},
	} {
		wantBadToken(t, tokens, what, signed(t, jwt.SigningMethodHS256, testSecret, claims))
	}
}

// A token issued before token versions existed carries none and reads as
// version 0, so that it stays valid until its user's version moves.
func TestTokenWithoutVersionReadsAsZero(t *testing.T) {
	c := newClock()
	tokens := NewTokens(testSecret, time.Hour, c.now)
	token := signed(t, jwt.SigningMethodHS256, testSecret, jwt.RegisteredClaims{
		Issuer: tokenIssuer, Subject: "5", ExpiresAt: jwt.NewNumericDate(c.t.Add(time.Hour)),
	})
	id, version, err := tokens.Parse(token)
	if err != nil || id != 5 || version != 0 {
		t.Fatalf("Parse = (%d, %d, %v), want (5, 0, nil)", id, version, err)
	}
}

func newPasswords(t *testing.T, cost int) (*Passwords, *prometheus.CounterVec) {
	t.Helper()
	uses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bcrypt_runs_total"}, []string{"op"})
	p, err := NewPasswords(cost, uses)
	if err != nil {
		t.Fatalf("NewPasswords(%d): %v", cost, err)
	}
	return p, uses
}

func count(t *testing.T, uses *prometheus.CounterVec, op string) float64 {
	t.Helper()
	var m dto.Metric
	if err := uses.WithLabelValues(op).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func mustHash(t *testing.T, p *Passwords, password string) string {
	t.Helper()
	h, err := p.Hash(password)
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}
	return h
}

func TestPasswordMatchesOnlyItsHash(t *testing.T) {
	p, _ := newPasswords(t, bcrypt.MinCost)
	hash := mustHash(t, p, "correct horse battery")
	if !p.Check(hash, "correct horse battery") {
		t.Error("the right password does not match its hash")
	}
	for _, wrong := range []string{"", "correct horse batter", "Correct horse battery", "correct horse battery "} {
		if p.Check(hash, wrong) {
			t.Errorf("%q matches the hash of another password", wrong)
		}
	}
	if again := mustHash(t, p, "correct horse battery"); again == hash {
		t.Error("two hashes of one password are equal: no salt")
	}
}

// bcrypt reads 72 bytes at most; passwords may be longer, and each of their
// characters must count.
func TestLongPasswordsDifferingPast72BytesAreTold(t *testing.T) {
	p, _ := newPasswords(t, bcrypt.MinCost)
	long := strings.Repeat("a", 100)
	hash := mustHash(t, p, long+"1")
	if !p.Check(hash, long+"1") {
		t.Fatal("a long password does not match its hash")
	}
	if p.Check(hash, long+"2") {
		t.Error("a password differing only in its 101st byte matches")
	}
}

func TestHashUsesTheConfiguredCost(t *testing.T) {
	for _, cost := range []int{bcrypt.MinCost, bcrypt.MinCost + 1} {
		p, _ := newPasswords(t, cost)
		got, err := bcrypt.Cost([]byte(mustHash(t, p, "some password")))
		if err != nil || got != cost {
			t.Errorf("cost %d: the hash's cost is %d (%v)", cost, got, err)
		}
	}
	uses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bcrypt_runs_total"}, []string{"op"})
	if _, err := NewPasswords(bcrypt.MaxCost+1, uses); err == nil {
		t.Errorf("NewPasswords(%d) succeeded, want an error for a cost bcrypt refuses", bcrypt.MaxCost+1)
	}
}

// An unknown user (no hash) never matches, not even with the decoy's own
// password, and costs one bcrypt comparison like a known user.
func TestUnknownUserComparesAgainstTheDecoy(t *testing.T) {
	p, uses := newPasswords(t, bcrypt.MinCost)
	hashes, compares := count(t, uses, "hash"), count(t, uses, "compare")
	if hashes != 1 {
		t.Errorf("NewPasswords ran bcrypt's hash %v times, want 1 (the decoy)", hashes)
	}
	for _, password := range []string{"", "anything", "decoy password, never valid"} {
		if p.Check("", password) {
			t.Errorf("an unknown user matches password %q", password)
		}
	}
	if got := count(t, uses, "compare") - compares; got != 3 {
		t.Errorf("three checks of unknown users ran %v bcrypt comparisons, want 3", got)
	}
	if got := count(t, uses, "hash"); got != hashes {
		t.Errorf("checks of unknown users ran bcrypt's hash %v more times, want none", got-hashes)
	}
	if p.Check(p.decoy, "decoy password, never valid") {
		t.Error("the decoy's hash, given as a user's, matches")
	}
}
