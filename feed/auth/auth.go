// Package auth signs and checks bearer tokens, and hashes and checks
// passwords.
package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"feedservice/internal/apperr"
)

const tokenIssuer = "feedservice"

// tokenClaims are a token's claims: the registered ones, and the token
// version of its user when it was issued (models.User.TokenVersion). A
// token issued before versions existed has none, which reads as 0.
type tokenClaims struct {
	jwt.RegisteredClaims
	TokenVersion int64 `json:"tv,omitempty"`
}

// Tokens signs and checks bearer tokens (HS256).
type Tokens struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
}

// NewTokens signs with secret tokens valid for ttl, by the clock now.
func NewTokens(secret []byte, ttl time.Duration, now func() time.Time) *Tokens {
	return &Tokens{secret: secret, ttl: ttl, now: now}
}

// Issue signs a bearer token for user id at tokenVersion, the user's
// current token version.
func (t *Tokens) Issue(id, tokenVersion int64) (string, error) {
	now := t.now()
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   strconv.FormatInt(id, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.ttl)),
		},
		TokenVersion: tokenVersion,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
}

// Parse checks a bearer token's signature and expiry and returns its user
// id and token version; apperr.ErrBadToken for a malformed, forged or
// expired one. It does not say whether the token was revoked: that is the
// user's current token version's to say.
func (t *Tokens) Parse(token string) (id, tokenVersion int64, err error) {
	var claims tokenClaims
	_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(tokenIssuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return 0, 0, apperr.ErrBadToken
	}
	id, err = strconv.ParseInt(claims.Subject, 10, 64)
	if err != nil || id <= 0 || claims.TokenVersion < 0 {
		return 0, 0, apperr.ErrBadToken
	}
	return id, claims.TokenVersion, nil
}

// Passwords hashes and checks passwords with bcrypt.
type Passwords struct {
	cost  int
	decoy string // a hash no password matches, for unknown users
	uses  *prometheus.CounterVec
}

// NewPasswords hashes at cost, counting each bcrypt run in uses (by
// "hash" or "compare"). It makes the decoy now, not at the first unknown
// user's log-in, which would otherwise take two bcrypt runs and stand out.
func NewPasswords(cost int, uses *prometheus.CounterVec) (*Passwords, error) {
	p := &Passwords{cost: cost, uses: uses}
	decoy, err := p.Hash("decoy password, never valid")
	if err != nil {
		return nil, fmt.Errorf("bcrypt decoy: %w", err)
	}
	p.decoy = decoy
	return p, nil
}

// bcrypt reads at most 72 bytes, and passwords may be 200 characters: hash a
// SHA-256 digest of the password instead, so every character counts.
func passwordDigest(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// Hash is password's bcrypt hash.
func (p *Passwords) Hash(password string) (string, error) {
	p.uses.WithLabelValues("hash").Inc()
	h, err := bcrypt.GenerateFromPassword(passwordDigest(password), p.cost)
	return string(h), err
}

// Check compares in constant time for the hash's cost. With no hash (an
// unknown user) it compares against a decoy, so that the answer takes as
// long as for a known user.
func (p *Passwords) Check(hash, password string) bool {
	if hash == "" {
		hash = p.decoy
	}
	p.uses.WithLabelValues("compare").Inc()
	err := bcrypt.CompareHashAndPassword([]byte(hash), passwordDigest(password))
	return err == nil && hash != p.decoy
}
