package feed

import "time"

// Limits of the public API. Each is checked at its edge by a test.
const (
	DefaultPageSize     = 20  // entries of a connection page when neither first nor last is given
	MaxPageSize         = 100 // the largest first or last
	MaxPostChars        = 500 // a post body's length after trimming, in Unicode code points
	MinUsernameChars    = 3
	MaxUsernameChars    = 30
	MinPasswordChars    = 10
	MaxPasswordChars    = 200
	MaxDisplayNameChars = 50
	MaxBioChars         = 300
	MaxReposters        = 10  // reposters listed on one feed entry
	MaxNodesPerRequest  = 100 // ids one nodes() call may ask for
)

// Config holds the engine's settings; the server fills it from flags and
// the environment.
type Config struct {
	// KeyPrefix starts every Redis key, so that tests and tenants can share a server.
	KeyPrefix string
	// TokenSecret signs bearer tokens (HS256).
	TokenSecret []byte
	// TokenTTL is how long a bearer token stays valid.
	TokenTTL time.Duration
	// BcryptCost is the work factor of password hashes.
	BcryptCost int
	// NodeID is this instance's part of every id it makes (0-31); negative
	// means lease a free one from Redis.
	NodeID int
}

// Defaults of Config.
const (
	DefaultTokenTTL   = 30 * 24 * time.Hour
	DefaultBcryptCost = 10
)
