package feed

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"feedservice/feed/apperr"
	"feedservice/store"
)

const tokenIssuer = "feedservice"

// tokenClaims are a token's claims: the registered ones, and the token
// version of its user when it was issued (models.User.TokenVersion). A
// token issued before versions existed has none, which reads as 0.
type tokenClaims struct {
	jwt.RegisteredClaims
	TokenVersion int64 `json:"tv,omitempty"`
}

// IssueToken signs a bearer token for user id at tokenVersion, the
// user's current token version, valid for Config.TokenTTL.
func (e *Engine) IssueToken(id, tokenVersion int64) (string, error) {
	now := e.now()
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   strconv.FormatInt(id, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(e.cfg.TokenTTL)),
		},
		TokenVersion: tokenVersion,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(e.cfg.TokenSecret)
}

// ParseToken checks a bearer token's signature and expiry and returns its
// user id and token version; ErrBadToken for a malformed, forged or
// expired one. It does not say whether the token was revoked: see
// checkTokenVersion.
func (e *Engine) ParseToken(token string) (id, tokenVersion int64, err error) {
	var claims tokenClaims
	_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return e.cfg.TokenSecret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(tokenIssuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(e.now),
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

// ViewerFromHeader reads "Authorization: Bearer <token>". An empty header is
// signed out (0, nil); a token that is not valid is ErrBadToken, and one
// its user revoked (by logging out) is ErrRevokedToken.
func (e *Engine) ViewerFromHeader(ctx context.Context, header string) (int64, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return 0, apperr.ErrBadToken
	}
	id, version, err := e.ParseToken(strings.TrimSpace(token))
	if err != nil {
		return 0, err
	}
	if err := e.checkTokenVersion(ctx, id, version); err != nil {
		return 0, err
	}
	return id, nil
}

// checkTokenVersion answers ErrRevokedToken unless version is user id's
// current token version. The version is read as the user is, through the
// tiers: this instance's local copy (no I/O on a warm request), the Redis
// copy, MySQL's primary on a miss. A log-out drops the local copies on
// every instance by message, so another instance refuses a revoked token
// once the message arrives, and within LocalCacheTTL if it missed it.
func (e *Engine) checkTokenVersion(ctx context.Context, id, version int64) error {
	byID, err := e.cache.UsersByID(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("check the token version of user %d: %w", id, err)
	}
	u := byID[id]
	if u == nil || u.TokenVersion != version {
		return apperr.ErrRevokedToken
	}
	return nil
}

// LogOut revokes every token of the viewer, on every instance: it moves
// their token version up, refreshes the copies that carry it and drops
// the local ones here and, by message, elsewhere.
func (e *Engine) LogOut(ctx context.Context, viewerID int64) error {
	_, err := e.store.RevokeTokens(ctx, viewerID, e.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.ErrUnauthenticated
	}
	if err != nil {
		return err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
	return nil
}

// bcrypt reads at most 72 bytes, and passwords may be 200 characters: hash a
// SHA-256 digest of the password instead, so every character counts.
func passwordDigest(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

func (e *Engine) hashPassword(password string) (string, error) {
	e.metrics.PasswordHashes.WithLabelValues("hash").Inc()
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
	e.metrics.PasswordHashes.WithLabelValues("compare").Inc()
	err := bcrypt.CompareHashAndPassword([]byte(hash), passwordDigest(password))
	return err == nil && hash != e.decoy
}
