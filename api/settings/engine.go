package settings

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	feedconfig "feedservice/feed/config"
)

// Engine is the engine's configuration of these settings. The token secret
// is given apart, since it may be the one kept under the data directory
// (TOKEN_SECRET unset), and so is the tracer the server made (nil: none).
// The error is a feed mode that is none (Parse refuses it already).
func (c Settings) Engine(tokenSecret []byte, tracer trace.TracerProvider) (feedconfig.Config, error) {
	if _, err := feedconfig.ParseMode(string(c.Mode)); err != nil {
		return feedconfig.Config{}, err
	}
	e := c.Config
	e.TokenSecret, e.TracerProvider = tokenSecret, tracer
	e.StreamReplicas = streamReplicas(c.StreamReplicas)
	e.LocalCacheMaxEntries = localCacheEntries(c.LocalCacheMaxEntries)
	e.BlockResetInterval = blockResetInterval(c.BlockResetInterval)
	return e, nil
}

// RedisPool is the connection pool of the Redis client (per node on a
// cluster).
type RedisPool struct {
	Size    int
	Timeout time.Duration
}

// RedisPool is REDIS_POOL_SIZE connections for requests and fan-out work,
// and one more for each fan-out worker: its XREADGROUP BLOCK holds a pooled
// connection for the whole block, so without these, idle workers would
// take connections away from requests.
func (c Settings) RedisPool() RedisPool {
	return RedisPool{Size: c.RedisPoolSize + c.FanoutWorkers, Timeout: c.RedisPoolTimeout}
}

// streamReplicas maps STREAM_REPLICAS to the engine's setting, where 0
// means the default and a negative number waits for none.
func streamReplicas(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// blockResetInterval maps BLOCK_RESET_INTERVAL to the engine's setting,
// where 0 means the default and a negative interval resets at every block.
func blockResetInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// localCacheEntries maps LOCAL_CACHE_MAX_ENTRIES to the engine's setting,
// where 0 means the default and a negative number turns the tier off.
func localCacheEntries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
