package feed

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

const tokenIssuer = "feedservice"

// IssueToken signs a bearer token for user id, valid for Config.TokenTTL.
func (e *Engine) IssueToken(id int64) (string, error) {
	now := e.now()
	claims := jwt.RegisteredClaims{
		Issuer:    tokenIssuer,
		Subject:   strconv.FormatInt(id, 10),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(e.cfg.TokenTTL)),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(e.cfg.TokenSecret)
}

// ParseToken checks a bearer token and returns its user id; ErrBadToken for
// a malformed, forged or expired one.
func (e *Engine) ParseToken(token string) (int64, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return e.cfg.TokenSecret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(tokenIssuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(e.now),
	)
	if err != nil {
		return 0, ErrBadToken
	}
	id, err := strconv.ParseInt(claims.Subject, 10, 64)
	if err != nil || id <= 0 {
		return 0, ErrBadToken
	}
	return id, nil
}

// ViewerFromHeader reads "Authorization: Bearer <token>". An empty header is
// signed out (0, nil); anything else that is not a valid token is ErrBadToken.
func (e *Engine) ViewerFromHeader(header string) (int64, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return 0, ErrBadToken
	}
	return e.ParseToken(strings.TrimSpace(token))
}

// bcrypt reads at most 72 bytes, and passwords may be 200 characters: hash a
// SHA-256 digest of the password instead, so every character counts.
func passwordDigest(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

func (e *Engine) hashPassword(password string) (string, error) {
	e.metrics.passwordHashes.WithLabelValues("hash").Inc()
	h, err := bcrypt.GenerateFromPassword(passwordDigest(password), e.cfg.BcryptCost)
	return string(h), err
}

// checkPassword compares in constant time for the hash's cost. With no hash
// (an unknown user) it compares against a decoy, so that the answer takes
// as long as for a known user.
func (e *Engine) checkPassword(hash, password string) bool {
	if hash == "" {
		hash = e.decoy
	}
	e.metrics.passwordHashes.WithLabelValues("compare").Inc()
	err := bcrypt.CompareHashAndPassword([]byte(hash), passwordDigest(password))
	return err == nil && hash != e.decoy
}
