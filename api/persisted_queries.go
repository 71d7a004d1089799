package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/go-viper/mapstructure/v2"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/internal/apperr"
	"feedservice/internal/apq"
	"feedservice/internal/viewer"
)

// persistedQueries is automatic persisted queries (Apollo's protocol, as
// gqlgen's extension.AutomaticPersistedQuery speaks it) with one change: a
// document sent with its hash is kept only after it parsed, validated and
// passed every limit, and only for a signed-in viewer. gqlgen's extension
// keeps whatever it is sent before parsing it, so anyone could fill the
// cache with comments. Signed-out clients still run documents sent in
// full; a hash alone finds what signed-in clients made known.
//
// A hash that is not known is PERSISTED_QUERY_NOT_FOUND (Apollo's client
// then sends the document), and a hash that does not match its document,
// or a malformed or unknown version of the extension, is BAD_USER_INPUT.
type persistedQueries struct {
	cache graphql.Cache[string]
}

// apqStats is where gqlgen's extension notes the hash and whether the
// document came with it (extension.GetApqStats reads it).
const apqStats = "APQ"

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = persistedQueries{}

func (persistedQueries) ExtensionName() string                   { return "AutomaticPersistedQuery" }
func (persistedQueries) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters puts the document of a hash sent alone in
// place, and checks the hash of a document sent with one.
func (p persistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Extensions["persistedQuery"] == nil {
		return nil
	}
	var ext struct {
		Sha256  string `mapstructure:"sha256Hash"`
		Version int64  `mapstructure:"version"`
	}
	if err := mapstructure.Decode(params.Extensions["persistedQuery"], &ext); err != nil {
		return gqlerror.WrapIfUnwrapped(apperr.BadInput("persisted query: invalid APQ extension data"))
	}
	if ext.Version != 1 {
		return gqlerror.WrapIfUnwrapped(apperr.BadInput("persisted query: unsupported APQ version"))
	}
	sent := params.Query != ""
	if !sent {
		doc, ok := p.cache.Get(ctx, ext.Sha256)
		if !ok {
			err := gqlerror.Errorf("PersistedQueryNotFound")
			errcode.Set(err, "PERSISTED_QUERY_NOT_FOUND")
			return err
		}
		params.Query = doc
	} else {
		sum := sha256.Sum256([]byte(params.Query))
		if hex.EncodeToString(sum[:]) != ext.Sha256 {
			return gqlerror.WrapIfUnwrapped(apperr.BadInput("persisted query: provided APQ hash does not match query"))
		}
	}
	graphql.GetOperationContext(ctx).Stats.SetExtension(apqStats, &extension.ApqStats{Hash: ext.Sha256, SentQuery: sent})
	return nil
}

// keeper is the second half of persistedQueries: registered after every
// other check of an operation, it keeps a document that came with its hash
// once the operation passed them all, when a viewer is signed in.
func (p persistedQueries) keeper() keepPersistedQuery { return keepPersistedQuery(p) }

type keepPersistedQuery struct {
	cache graphql.Cache[string]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = keepPersistedQuery{}

func (keepPersistedQuery) ExtensionName() string                   { return "KeepPersistedQuery" }
func (keepPersistedQuery) Validate(graphql.ExecutableSchema) error { return nil }

func (k keepPersistedQuery) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	stats, _ := opCtx.Stats.GetExtension(apqStats).(*extension.ApqStats)
	if stats != nil && stats.SentQuery && viewer.ID(ctx) != 0 && len(opCtx.RawQuery) <= apq.MaxDocumentBytes {
		k.cache.Add(ctx, stats.Hash, opCtx.RawQuery)
	}
	return nil
}

// persistedQueryCache is the cache of the persisted queries: Redis, shared
// by every instance, or on the embedded default a bounded LRU in this
// process (the in-process Redis would hold the same documents with no cap
// and more overhead).
func (a *app) persistedQueryCache() graphql.Cache[string] {
	limits := apq.Limits{TTL: a.cfg.PersistedQueryTTL, MaxEntries: a.cfg.PersistedQueryMaxEntries, MaxBytes: a.cfg.PersistedQueryMaxBytes}
	if a.cfg.RedisAddr == "" {
		return newBoundedLRU(limits.MaxEntries, limits.MaxBytes, limits.TTL, func(_, doc string) int { return len(doc) })
	}
	return apq.New(a.redis, a.cfg.KeyPrefix, a.log, limits)
}
