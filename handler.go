package main

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
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/dataloader"
	"feedservice/feed"
	"feedservice/graph"
	"feedservice/resolvers"
)

// handler routes the server's endpoints: GraphQL at /query, GraphiQL at /,
// and the health checks.
func (a *app) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", a.graphqlHandler())
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.engine.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.engine.Ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	if a.cfg.GraphiQL {
		mux.Handle("GET /{$}", playground.Handler("Feed service", "/query"))
	}
	return withRequestID(mux)
}

func (a *app) graphqlHandler() http.Handler {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Engine: a.engine}})
	srv := handler.New(schema)
	srv.AddTransport(transport.Websocket{
		Implementation:   gorillaWebsocket{AllowedOrigins: splitList(a.cfg.AllowedOrigins)},
		InitFunc:         a.websocketInit,
		InitTimeout:      WebsocketInitTimeout,
		PingPongInterval: WebsocketPingInterval,
	})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](QueryCacheSize))
	if a.cfg.GraphiQL {
		srv.Use(extension.Introspection{})
	}
	srv.Use(refuseBadToken{})
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(dataloader.With(ctx, dataloader.New(a.engine, feed.ViewerID(ctx))))
	})
	srv.SetErrorPresenter(resolvers.ErrorPresenter(a.log, requestID, MaxRequestBodyBytes))
	srv.SetRecoverFunc(resolvers.Recover(a.log, requestID))
	return a.authenticate(http.MaxBytesHandler(srv, MaxRequestBodyBytes))
}

// authenticate reads the bearer token of an HTTP request into its context.
func (a *app) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if id, err := a.engine.ViewerFromHeader(r.Header.Get("Authorization")); err != nil {
			ctx = feed.WithBadToken(ctx, err)
		} else if id != 0 {
			ctx = feed.WithViewer(ctx, id)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// websocketInit reads the bearer token from connection_init's payload
// ({"Authorization": "Bearer <token>"}); a bad one refuses the connection.
func (a *app) websocketInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	header := payload.Authorization()
	if header == "" {
		header = payload.GetString("authorization")
	}
	id, err := a.engine.ViewerFromHeader(header)
	if err != nil {
		return ctx, nil, err
	}
	if id != 0 {
		ctx = feed.WithViewer(ctx, id)
	}
	return ctx, nil, nil
}

// refuseBadToken fails every operation of a request whose token was refused,
// rather than running it signed out.
type refuseBadToken struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = refuseBadToken{}

func (refuseBadToken) ExtensionName() string                   { return "RefuseBadToken" }
func (refuseBadToken) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseBadToken) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	if err := feed.TokenError(ctx); err != nil {
		return gqlerror.WrapIfUnwrapped(err)
	}
	return nil
}

type requestIDKey struct{}

// withRequestID gives each request an id (the client's X-Request-ID, or a
// new one), echoed in the response and written in every log line about it.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if id == "" || len(id) > 64 {
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
