package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"feedservice/api/extensions"
	"feedservice/internal/apperr"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// operationRetryAfter is what a client refused for operations in flight is
// told to wait: operations take milliseconds, so a place is soon free.
const operationRetryAfter = time.Second

// operationGate bounds the operations running at once: on the instance
// (MaxOperationsInFlight), of one signed-in viewer (MaxOperationsPerViewer)
// and, signed out, from one client address group
// (MaxOperationsPerAddress; an IPv6 /64 or an IPv4 address). A viewer's
// operations do not count against their address: anonymous traffic from
// an address (a NAT's, a carrier's) cannot lock its signed-in users out.
// An HTTP request to /query holds one place once its body is read, while
// it is parsed and run, until its answer is made (a batch runs its
// operations one after the other): not while the answer is sent, which
// answerWriter bounds by its size, so a client that does not read holds no
// place. A client that drips its body holds none either (READ_TIMEOUT
// bounds it) and cannot fill the instance's places that way. A query or
// mutation sent over a websocket holds one while it runs, and one of its
// socket's (socketOperations); so does each event of a subscription while
// its selection runs (subscriptionEvents).
//
// Past a bound the request or operation is refused at once, with
// RATE_LIMITED and a retryAfter of operationRetryAfter, rather than queued:
// a queue holds memory and goroutines for work its client may have given
// up on and hides the overload from it, where a refusal costs nothing and
// every client already handles RATE_LIMITED. (Each query sent over one
// websocket used to run at once in a goroutine of its own: 300 pipelined
// ones held 2.5 GB.)
type operationGate struct {
	maxTotal, maxPerAddress, maxPerViewer int
	metrics                               *serverMetrics

	mu        sync.Mutex
	total     int
	bySubject map[string]int
}

// Which bound refused an operation, in metrics.
const (
	gateInstance = "instance"
	gateAddress  = "address"
	gateViewer   = "viewer"
	gateSocket   = "socket"
)

// enter takes a place for an operation of ctx's client (clientSubject), or
// says which bound refused it.
func (g *operationGate) enter(ctx context.Context) (leave func(), refusedBy string) {
	subject, signedIn := clientSubject(ctx)
	limit, bound := g.maxPerAddress, gateAddress
	if signedIn {
		limit, bound = g.maxPerViewer, gateViewer
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.total >= g.maxTotal:
		return nil, gateInstance
	case g.bySubject[subject] >= limit:
		return nil, bound
	}
	if g.bySubject == nil {
		g.bySubject = map[string]int{}
	}
	g.total++
	g.bySubject[subject]++
	g.metrics.operationsInFlight.Inc()
	var once sync.Once
	return func() { once.Do(func() { g.leave(subject) }) }, ""
}

func (g *operationGate) leave(subject string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.bySubject[subject]--; g.bySubject[subject] <= 0 {
		delete(g.bySubject, subject)
	}
	g.metrics.operationsInFlight.Dec()
}

// refusal is the error of an operation refused by the named bound.
func (g *operationGate) refusal(refusedBy string, perSocket int) *apperr.Error {
	g.metrics.operationsRefused.WithLabelValues(refusedBy).Inc()
	var msg string
	switch refusedBy {
	case gateInstance:
		msg = fmt.Sprintf("the server is busy: it runs at most %d operations at once (MaxOperationsInFlight); retry later", g.maxTotal)
	case gateAddress:
		msg = fmt.Sprintf("at most %d operations may run at once from one address when signed out (MaxOperationsPerAddress); retry when one has answered, or sign in", g.maxPerAddress)
	case gateViewer:
		msg = fmt.Sprintf("at most %d operations may run at once for one signed-in user (MaxOperationsPerViewer); retry when one has answered", g.maxPerViewer)
	default:
		msg = fmt.Sprintf("at most %d queries and mutations may run at once on one websocket (MaxOperationsPerSocket); retry when one has answered", perSocket)
	}
	return &apperr.Error{Code: apperr.CodeRateLimited, Message: msg, RetryAfter: operationRetryAfter}
}

// limitOperations holds a place of the gate for each HTTP request to
// /query whose body has been read (extensions.RefuseMalformedRequest reads it
// first) until its answer is made, refused with 503 when the instance is
// full and 429 when the client's address is, in the shape of a GraphQL
// response and before the document is parsed. It gives the request its
// answer's spend of the answer budget (answerLimit), given back once the
// answer is sent, and sends the answer under its size's deadline
// (answerWriter). Websocket upgrades and CORS preflights pass: a
// websocket's operations are held one by one (socketOperations).
func (a *app) limitOperations(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now() // the request is read
		leave, refusedBy := a.operations.enter(r.Context())
		if refusedBy != "" {
			status := http.StatusTooManyRequests
			if refusedBy == gateInstance {
				status = http.StatusServiceUnavailable
			}
			writeRefusal(w, status, a.operations.refusal(refusedBy, 0))
			return
		}
		defer leave()
		spend := newAnswerSpend(a.answers, subject(r.Context()), a.cfg.MaxResponseBytes)
		spend.errorCap = errorCap(max(r.ContentLength, int64(len(r.URL.RawQuery))), a.cfg.ErrorBytesPerRequestByte, a.cfg.ErrorBytesAllowance)
		defer spend.release()
		r = r.WithContext(context.WithValue(r.Context(), answerSpendKey{}, spend))
		next.ServeHTTP(&answerWriter{ResponseWriter: w, leave: leave, minWriteTime: a.cfg.MinWriteTime, minWriteRate: a.cfg.MinWriteRate,
			latest: start.Add(a.cfg.WriteTimeout)}, r)
	})
}

// writeRefusal answers a request refused before GraphQL reads it, in the
// shape of a GraphQL response, with the code, retryAfter and Retry-After
// header of any rate-limited answer.
func writeRefusal(w http.ResponseWriter, status int, refusal *apperr.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(refusal.RetryAfterSeconds()))
	w.WriteHeader(status)
	extensions.WriteJSON(w, map[string]any{"errors": []map[string]any{{
		"message":    refusal.Message,
		"extensions": map[string]any{"code": string(refusal.Code), "retryAfter": refusal.RetryAfterSeconds()},
	}}})
}

// socketOperations counts the queries and mutations running on one
// websocket, at most max.
type socketOperations struct {
	max     int
	running atomic.Int64
}

type socketOperationsKey struct{}

// withSocketOperations gives a websocket's context its count.
func withSocketOperations(ctx context.Context, max int) context.Context {
	return context.WithValue(ctx, socketOperationsKey{}, &socketOperations{max: max})
}

// websocketOperations is the extension that holds a place of the gate, and
// one of the socket's, for each query and mutation sent over a websocket
// while it runs; a refused one is answered with the refusal alone. HTTP
// requests were held whole by limitOperations.
type websocketOperations struct {
	gate    *operationGate
	present graphql.ErrorPresenterFunc
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = websocketOperations{}

func (websocketOperations) ExtensionName() string                   { return "WebsocketOperations" }
func (websocketOperations) Validate(graphql.ExecutableSchema) error { return nil }

func (w websocketOperations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	socket, ok := ctx.Value(socketOperationsKey{}).(*socketOperations)
	if op := graphql.GetOperationContext(ctx).Operation; !ok || op == nil || op.Operation == ast.Subscription {
		return next(ctx)
	}
	if socket.running.Add(1) > int64(socket.max) {
		socket.running.Add(-1)
		return extensions.RefusedOperation(ctx, w.present, w.gate.refusal(gateSocket, socket.max))
	}
	leave, refusedBy := w.gate.enter(ctx)
	if refusedBy != "" {
		socket.running.Add(-1)
		return extensions.RefusedOperation(ctx, w.present, w.gate.refusal(refusedBy, socket.max))
	}
	var once sync.Once
	done := func() {
		leave()
		socket.running.Add(-1)
	}
	responses := next(ctx)
	// A query or mutation runs in its first response; the second is the end.
	return func(ctx context.Context) *graphql.Response {
		defer once.Do(done)
		return responses(ctx)
	}
}
