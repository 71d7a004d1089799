package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"feedservice/api/extensions"
	"feedservice/api/sockets"
	"feedservice/dataloader"
	"feedservice/feed"
	"feedservice/graph"
	"feedservice/internal/apperr"
	"feedservice/internal/apq"
	"feedservice/internal/fastexec"
	"feedservice/internal/viewer"
	"feedservice/playground"
	"feedservice/resolvers"
	"feedservice/web"
)

// handler routes the server's endpoints: GraphQL at /query, GraphiQL at /
// (its files under /graphiql/), the React app at /app/, the site icon at
// /favicon.ico, and the health checks. GraphiQL, the app and the icon are
// embedded in the binary (playground/, web/).
func (a *app) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", withNoStore(cors{origins: a.cfg.Origins()}.handler(a.graphqlHandler())))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.engine.Ready(ctx); err != nil {
			// The backend's text (addresses, driver messages) is for the
			// log, not for whoever asks.
			a.log.WarnContext(r.Context(), "not ready", "err", err)
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /app/", withPageHeaders(appCSP, web.Handler("/app/")))
	mux.Handle("GET /favicon.ico", web.Favicon())
	if a.cfg.GraphiQL {
		mux.Handle("GET /{$}", withPageHeaders(graphiqlCSP, playground.Handler()))
		mux.Handle("GET "+playground.Prefix, withPageHeaders(graphiqlCSP, playground.Handler()))
	}
	h := withSecurityHeaders(withRequestID(mux))
	if a.tracer != nil {
		h = traceHTTP(h, a.tracer, a.cfg.TraceTrustedCallers)
	}
	return h
}

func (a *app) graphqlHandler() http.Handler {
	srv := handler.New(a.executableSchema())
	readLimit := int64(a.cfg.WebsocketMaxMessageBytes)
	srv.AddTransport(transport.Websocket{
		Implementation: sockets.Gorilla{AllowOrigin: cors{origins: a.cfg.Origins()}.allows, Metrics: a.metrics.websockets, Conns: &a.websockets, ReadLimit: readLimit,
			SubscribeRate: a.cfg.WebsocketSubscribeRate, PingRate: a.cfg.WebsocketPingRate},
		PayloadReadLimit:      &readLimit,
		InitFunc:              a.websocketInit,
		CloseFunc:             a.websocketClosed,
		InitTimeout:           a.cfg.WebsocketInit,
		PingPongInterval:      a.cfg.WebsocketPing, // graphql-transport-ws
		KeepAlivePingInterval: a.cfg.WebsocketPing, // legacy graphql-ws "ka"
	})
	srv.AddTransport(transport.Options{})
	if a.gqlgenTransports {
		srv.AddTransport(transport.GET{})
	} else {
		srv.AddTransport(extensions.GET{})
	}
	srv.AddTransport(extensions.BatchPOST{MaxOperations: a.cfg.MaxBatchOperations}) // before POST: it takes the array bodies
	if a.gqlgenTransports {
		srv.AddTransport(transport.POST{})
	} else {
		srv.AddTransport(extensions.POST{})
	}
	a.parsedDocuments = extensions.NewBoundedLRU(queryCacheSize, a.cfg.QueryCacheMaxBytes, 0, extensions.ParsedDocumentBytes)
	a.refusals = &extensions.RecentRefusals{}
	srv.SetQueryCache(a.parsedDocuments)
	srv.SetParserTokenLimit(a.cfg.MaxQueryTokens)
	if a.cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	apq := extensions.PersistedQueries{Cache: a.persistedQueryCache()}
	srv.Use(apq)
	srv.Use(extensions.RefuseBadToken{})
	srv.Use(sockets.CheckSession{Engine: a.engine})
	metrics := graphqlMetrics{a.metrics}
	srv.Use(metrics)
	var tracer trace.Tracer
	if a.tracer != nil {
		tracer = a.tracer.Tracer("feedservice/api")
		srv.Use(extensions.Tracing{Tracer: tracer})
	}
	srv.Use(extensions.DocumentLimits{MaxTokens: a.cfg.MaxQueryTokens, MaxSelections: a.cfg.MaxQuerySelections, MaxDepth: a.cfg.MaxQueryDepth,
		MaxFields: a.cfg.MaxQueryFields, Introspection: a.cfg.Introspection, Kept: a.parsedDocuments})
	srv.Use(&extensions.IntVariables{MaxTokens: a.cfg.MaxQueryTokens, Kept: a.parsedDocuments})
	srv.Use(&extensions.ComplexityLimit{Max: a.cfg.MaxQueryComplexity, MaxSubscription: a.cfg.MaxSubscriptionComplexity})
	srv.Use(extensions.RefuseDefer{}) // before anything counts the operation: it will not run
	present := extensions.WithOperationNames(resolvers.ErrorPresenter(a.log, requestID, maxRequestBodyBytes))
	if !a.cfg.Introspection {
		// Validation's "Did you mean" names the schema's fields, arguments,
		// types and enum values; gqlgen's switch covers fields only. Other
		// messages name required arguments and input fields, and types.
		srv.SetDisableSuggestion(true)
		present = extensions.WithoutSchemaNames(extensions.WithoutSuggestions(present))
	}
	srv.Use(websocketOperations{gate: a.operations, present: present})
	budget := extensions.ComplexityBudget{Limiter: a.limiter, Rate: a.cfg.ComplexityRate, Limit: limitComplexity,
		Subject: subject, NoteRetryAfter: noteRetryAfter, Present: present, Free: logOutAlone, Refused: a.refusals}
	srv.Use(sockets.SubscriptionStarts{Present: present}) // before the budget: a refused start spends nothing
	srv.Use(budget)
	srv.Use(subscriptionEvents{gate: a.operations, budget: budget, leases: &eventLeases{events: a.cfg.SubscriptionEventLease}, present: present})
	srv.Use(answerLimit{budget: a.answers, maxAnswer: a.cfg.MaxResponseBytes, present: present, metrics: a.metrics,
		errorsPerRequestByte: a.cfg.ErrorBytesPerRequestByte, errorAllowance: a.cfg.ErrorBytesAllowance})
	srv.Use(fieldHooks{metrics: &metrics, limits: &rateLimits{limiter: a.limiter, mutations: a.cfg.MutationRate, auth: a.cfg.AuthRate}, tracer: tracer})
	srv.Use(extensions.RefuseLoneSurrogates{})
	srv.Use(extensions.RefuseSubscriptionsByPost{})
	srv.Use(apq.Keeper()) // last: keeps a document that passed every check
	// Loaders per response: a query's fields share one set, and each event
	// of a long-lived subscription gets fresh ones instead of stale data,
	// made only if one of its fields loads something.
	// A query's reads also share what they learn of the viewer's own state
	// (feed.WithReadMemo); a mutation's fields change it as they go.
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if graphql.HasOperationContext(ctx) {
			if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Query {
				ctx = feed.WithReadMemo(ctx)
			}
		}
		subscription := graphql.HasOperationContext(ctx) && graphql.GetOperationContext(ctx).Operation != nil &&
			graphql.GetOperationContext(ctx).Operation.Operation == ast.Subscription
		return next(dataloader.Lazy(ctx, func() *dataloader.Loaders {
			if subscription {
				a.subscriptionLoaderSets.Add(1)
			}
			return dataloader.New(a.engine, viewer.ID(ctx), a.cfg.LoaderWait)
		}))
	})
	srv.SetErrorPresenter(withErrorBytes(present))
	srv.SetRecoverFunc(resolvers.Recover(a.log, requestID))
	return sockets.WithSession(a.withClient(a.authenticate(extensions.CodeRefusedGet(http.MaxBytesHandler(extensions.RefuseMalformedRequest(a.limitOperations(srv)), maxRequestBodyBytes)))))
}

// persistedQueryCache is the cache of the persisted queries: Redis, shared
// by every instance, or on the embedded default a bounded LRU in this
// process (the in-process Redis would hold the same documents with no cap
// and more overhead).
func (a *app) persistedQueryCache() graphql.Cache[string] {
	limits := apq.Limits{TTL: a.cfg.PersistedQueryTTL, MaxEntries: a.cfg.PersistedQueryMaxEntries, MaxBytes: a.cfg.PersistedQueryMaxBytes}
	if a.cfg.RedisAddr == "" {
		return extensions.NewBoundedLRU(limits.MaxEntries, limits.MaxBytes, limits.TTL, func(_, doc string) int { return len(doc) })
	}
	return apq.New(a.redis, a.cfg.KeyPrefix, a.log, limits)
}

// withNoStore marks every answer of /query as one no cache may keep: they
// are a viewer's own data, and a GET (automatic persisted queries send
// their hashes by GET) is otherwise cacheable by its URL, by the browser
// and by any proxy on the way. POST answers carry it too: one rule for
// every answer.
func withNoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		next.ServeHTTP(w, r)
	})
}

// executableSchema is the GraphQL schema's executor: the fast one, which
// runs fieldHooks on the fields it observes only (and gqlgen's for what it
// does not run: subscriptions, @defer), or gqlgen's for every operation.
func (a *app) executableSchema() graphql.ExecutableSchema {
	cfg := graph.Config{Resolvers: a.resolvers, Complexity: resolvers.Complexity()}
	if a.gqlgenExecutor {
		return graph.NewExecutableSchema(cfg)
	}
	return graph.NewFastExecutableSchema(cfg, fastexec.Options{ObservedFields: fieldHooksObserve})
}

// authenticate reads the bearer token of an HTTP request into its context.
func (a *app) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if id, err := a.viewerOf(ctx, r.Header.Get("Authorization")); err != nil {
			ctx = viewer.WithBadToken(ctx, err)
		} else if id != 0 {
			ctx = viewer.With(ctx, id)
		}
		ctx = viewer.WithOperatorHeader(ctx, r.Header.Get("X-Operator-Token"), a.cfg.OperatorToken)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// websocketInit reads the bearer token from connection_init's payload
// ({"Authorization": "Bearer <token>"}). Every subscription needs a viewer,
// so a missing token closes the socket with 4401 and a bad one with 4403.
// The socket keeps the token's session, which a logOut ends
// (api/sockets).
func (a *app) websocketInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	header := payload.Authorization()
	if header == "" {
		header = payload.GetString("authorization")
	}
	refuse := func(code int, reason string, err error) (context.Context, *transport.InitPayload, error) {
		ctx = transport.WithWebsocketCloseCode(ctx, code)
		return transport.AppendCloseReason(ctx, reason), nil, err
	}
	if header == "" {
		return refuse(sockets.CloseUnauthorized, "Unauthorized", apperr.ErrUnauthenticated)
	}
	session, err := a.sessionOf(ctx, header)
	if err != nil {
		return refuse(sockets.CloseForbidden, "Forbidden", err)
	}
	s := sockets.SessionOf(ctx) // sockets.WithSession's, filled by Accept
	if s == nil || !s.Accepted() {
		return refuse(sockets.CloseForbidden, "Forbidden", apperr.New(apperr.CodeInternal, "a websocket accepted outside the GraphQL handler"))
	}
	ctx = viewer.With(ctx, session.User)
	viewerCtx := ctx
	if !a.sockets.Open(s, session, func() { viewer.Revoke(viewerCtx) }) {
		return refuse(sockets.CloseTooManyRequests, "Too many connections", apperr.RateLimited("at most %d live connections per user", maxConnectionsPerUser))
	}
	ctx = withSocketOperations(ctx, a.cfg.MaxOperationsPerSocket)
	return resolvers.WithSubscriptionLimit(ctx, maxSubscriptionsPerConnection), nil, nil
}

// websocketClosed frees the connection's place in its user's count.
func (a *app) websocketClosed(ctx context.Context, _ int) {
	if s := sockets.SessionOf(ctx); s != nil && s.User != 0 {
		a.sockets.Close(s)
	}
}

type requestIDKey struct{}

// withRequestID gives each request an id (the client's X-Request-ID when it
// is valid, or a new one), echoed in the response and written in every log
// line about it.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !validRequestID(id) {
			buf := make([]byte, 8)
			rand.Read(buf)
			id = hex.EncodeToString(buf)
		}
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// viewerOf reads "Authorization: Bearer <token>" into the user it acts
// for. An empty header is signed out (0, nil); a header of another scheme
// or a token that is not valid is apperr.ErrBadToken, and a token its user
// revoked (by logging out) apperr.ErrRevokedToken.
func (a *app) viewerOf(ctx context.Context, header string) (int64, error) {
	s, err := a.sessionOf(ctx, header)
	return s.User, err
}

// sessionOf is viewerOf with the token's version, for a websocket, which
// keeps its session and checks it again before each operation.
func (a *app) sessionOf(ctx context.Context, header string) (feed.Session, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return feed.Session{}, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return feed.Session{}, apperr.ErrBadToken
	}
	return a.engine.SessionOf(ctx, strings.TrimSpace(token))
}
