package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"feedservice/internal/apperr"
	"feedservice/internal/ratelimit"
	"feedservice/internal/viewer"
)

// The names of the rate limits, in their Redis keys, logs and metrics.
const (
	limitMutations  = "mutations"  // per viewer, or per IP when signed out
	limitAuth       = "auth"       // signUp and logIn, per IP
	limitComplexity = "complexity" // operations' prices, per viewer, or per IP when signed out
)

// documentLimits refuses, before gqlgen validates it, a document with more
// than maxSelections selections written (validation's work grows with their
// square: 1,996 fields took 0.2 CPU-s), and one with an operation nested
// deeper than maxDepth fields, one that selects more than maxFields fields
// with its fragments expanded, or one that introspects the schema when
// introspection is switched off. It parses the document itself (under the
// same token limit) to measure it; gqlgen parses it again, a cost linear in
// its length, then validates it and keeps it in the cache of parsed
// documents, so a document refused here is never kept, and one found in
// that cache passed already. Its fields walk runs before gqlgen's
// complexity walk, whose cost is the fields expanded.
type documentLimits struct {
	maxTokens     int
	maxSelections int
	maxDepth      int
	maxFields     int
	introspection bool
	// kept are the documents that passed (the parsed-document cache).
	kept interface{ contains(key string) bool }
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLimits{}

func (documentLimits) ExtensionName() string                   { return "DocumentLimits" }
func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l documentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if l.kept != nil && l.kept.contains(p.Query) {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, l.maxTokens)
	if err != nil {
		return nil // gqlgen's parse answers it, with its code
	}
	if n := measureDocument(doc).selections; n > l.maxSelections {
		return gqlerror.WrapIfUnwrapped(apperr.BadInput("the document has %d selections (fields, fragment spreads, inline fragments); at most %d are allowed (MaxQuerySelections)", n, l.maxSelections))
	}
	for _, op := range doc.Operations {
		if err := l.checkOperation(ctx, doc.Fragments, op); err != nil {
			return gqlerror.WrapIfUnwrapped(err)
		}
	}
	return nil
}

// checkOperation measures one operation against the limits.
func (l documentLimits) checkOperation(ctx context.Context, fragments ast.FragmentDefinitionList, op *ast.OperationDefinition) error {
	m, err := measureOperation(ctx, fragments, op)
	switch {
	case err != nil:
		return err
	case m.introspects && !l.introspection:
		return apperr.BadInput("introspection (__schema, __type) is switched off on this server")
	case m.depth > l.maxDepth:
		return apperr.BadInput("the operation nests fields %d deep; at most %d are allowed (MaxQueryDepth)", m.depth, l.maxDepth)
	case m.fields > l.maxFields:
		return apperr.BadInput("the operation selects %s fields with its fragments expanded; at most %d are allowed (MaxQueryFields)", fieldCount(m.fields), l.maxFields)
	}
	return nil
}

// withoutSuggestions cuts from each error the "Did you mean ...?" that
// gqlparser's validation appends to an unknown field, argument, type, input
// field or enum value: it names the schema's own, which a server with
// introspection switched off keeps to itself.
func withoutSuggestions(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if i := strings.Index(e.Message, " Did you mean "); i >= 0 {
			e.Message = e.Message[:i]
		}
		return e
	}
}

// complexityLimit refuses an operation that costs more than max
// (MaxQueryComplexity), as priced by resolvers.Complexity, before it runs.
// The operations of one batch share the limit: each may cost what the ones
// before it left. It notes the operation's price in its stats
// (operationPrice) for the complexity budget.
type complexityLimit struct {
	max int
	es  graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &complexityLimit{}

// errComplexityLimit is gqlgen's code for a refusal by complexity, which the
// error presenter sends as BAD_USER_INPUT.
const errComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"

// complexityStats names the operation's price in its stats.
const complexityStats = "ComplexityLimit"

func (*complexityLimit) ExtensionName() string { return complexityStats }
func (l *complexityLimit) Validate(es graphql.ExecutableSchema) error {
	l.es = es
	return nil
}

func (l *complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	price := complexity.Calculate(ctx, l.es, opCtx.Operation, opCtx.Variables)
	opCtx.Stats.SetExtension(complexityStats, price)
	var err *gqlerror.Error
	switch b, _ := ctx.Value(batchKey{}).(*batchSpend); {
	case price > l.max:
		err = gqlerror.Errorf("the operation costs %d, over the complexity limit of %d (MaxQueryComplexity)", price, l.max)
	case b != nil && price > l.max-b.price:
		err = gqlerror.Errorf("the operation costs %d; the operations before it in its batch cost %d of the complexity limit of %d (MaxQueryComplexity), which the whole batch shares", price, b.price, l.max)
	case b != nil:
		b.price += price
	}
	if err != nil {
		errcode.Set(err, errComplexityLimit)
	}
	return err
}

// operationPrice is the price complexityLimit noted for the operation of
// ctx, or 0.
func operationPrice(ctx context.Context) int {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	price, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(complexityStats).(int)
	return price
}

// batchSpend is what a batch's operations have cost so far; batchPOST puts
// it in the context of each.
type batchSpend struct{ price int }

type batchKey struct{}

// complexityBudget spends each operation's price (complexityLimit's) from
// a budget in Redis, the viewer's or, signed out, the client address's
// (COMPLEXITY_RATE), before it runs; past it the operation is answered
// RATE_LIMITED with retryAfter alone. An operation costing more than the
// whole budget spends all of it.
//
// The budget is a GCRA in Redis, spent through ratelimit.Limiter.Allow, which
// spends one action at a rate: an operation of price p spends one action
// at the rate of count/p per period. A GCRA keeps one time per subject
// (when its budget is whole again) and each action moves it on by
// period/rate, while the burst (the rate itself) always allows up to one
// period ahead: so this spends p/count of the period, the operation's share
// of the budget, from the one budget every price shares. Rounding the rate
// down charges at most count/(count/p rounded down) times the price: 3% more
// for an operation at the complexity limit under the default budget.
type complexityBudget struct {
	limiter *ratelimit.Limiter
	rate    ratelimit.Rate
	present graphql.ErrorPresenterFunc
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = complexityBudget{}

func (complexityBudget) ExtensionName() string                   { return "ComplexityBudget" }
func (complexityBudget) Validate(graphql.ExecutableSchema) error { return nil }

func (b complexityBudget) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	price := operationPrice(ctx)
	if b.rate.Off() || price <= 0 {
		return next(ctx)
	}
	share := ratelimit.Rate{Count: b.rate.Count / min(price, b.rate.Count), Period: b.rate.Period}
	var refusal *apperr.Error
	if err := b.limiter.Allow(ctx, limitComplexity, share, budgetSubject(ctx)); !errors.As(err, &refusal) {
		return next(ctx) // allowed, by Redis's budget or, while Redis fails, this instance's
	}
	refusal = &apperr.Error{Code: refusal.Code, RetryAfter: refusal.RetryAfter,
		Message: fmt.Sprintf("too much work asked: at most %d of complexity per %s (COMPLEXITY_RATE), and this operation costs %d; retry later", b.rate.Count, b.rate.Period, price)}
	noteRetryAfter(ctx, refusal.RetryAfterSeconds())
	return refusedOperation(ctx, b.present, refusal)
}

// budgetSubject is whose budget an operation spends: its viewer's, or the
// client address's when signed out.
func budgetSubject(ctx context.Context) string {
	if viewer := viewer.ID(ctx); viewer != 0 {
		return "user:" + strconv.FormatInt(viewer, 10)
	}
	return "ip:" + clientAddress(ctx)
}

// rateLimits spends each mutation field from a budget in Redis: signUp and
// logIn from the client IP's auth budget, every other mutation from the
// viewer's mutation budget (the client IP's when signed out). A refused
// field answers RATE_LIMITED with extensions.retryAfter; the rest of the
// operation runs as usual. It runs inside fieldHooks.
type rateLimits struct {
	limiter   *ratelimit.Limiter
	mutations ratelimit.Rate
	auth      ratelimit.Rate
}

// limitField spends the budget of a mutation field, then runs it.
func (l rateLimits) limitField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Object != "Mutation" {
		return next(ctx)
	}
	var err error
	switch viewer := viewer.ID(ctx); {
	case fc.Field.Name == "signUp" || fc.Field.Name == "logIn":
		err = l.limiter.Allow(ctx, limitAuth, l.auth, "ip:"+clientAddress(ctx))
	case viewer != 0:
		err = l.limiter.Allow(ctx, limitMutations, l.mutations, "user:"+strconv.FormatInt(viewer, 10))
	default:
		err = l.limiter.Allow(ctx, limitMutations, l.mutations, "ip:"+clientAddress(ctx))
	}
	if err != nil {
		var refusal *apperr.Error
		if errors.As(err, &refusal) {
			noteRetryAfter(ctx, refusal.RetryAfterSeconds())
		}
		return nil, err
	}
	return next(ctx)
}

type clientKey struct{}

// clientInfo is what the HTTP layer knows of who sent a request.
type clientInfo struct {
	address    string // the client's address group (addressGroup)
	mu         sync.Mutex
	retryAfter int // the longest wait, in seconds, a refusal in the response asked for
}

// withClient notes the client's IP for the rate limits, and answers the
// longest retryAfter of a rate-limited response in a Retry-After header.
func (a *app) withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &clientInfo{address: addressGroup(a.clientIP(r))}
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r) // a websocket hijacks the writer; its errors carry retryAfter
			return
		}
		next.ServeHTTP(&retryAfterWriter{ResponseWriter: w, client: c}, r)
	})
}

// clientIP is the address the request came from. Behind trusted proxies
// (TRUSTED_PROXIES) it is the last address of X-Forwarded-For that is not
// one of them: each proxy appends who it heard from, so the addresses to
// the right of the nearest untrusted one were written by trusted proxies,
// and anything left of it may be forged by the client.
func (a *app) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !a.cfg.IsTrustedProxy(addr) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: trust nothing left of it
		}
		addr = hop.Unmap()
		if !a.cfg.IsTrustedProxy(addr) {
			break
		}
	}
	return addr.String()
}

// clientAddress is the address group of the client of ctx, the key of
// every per-address limit.
func clientAddress(ctx context.Context) string {
	if c, ok := ctx.Value(clientKey{}).(*clientInfo); ok {
		return c.address
	}
	return "unknown"
}

// addressPrefix is the network every per-address limit counts as one
// client: an IPv4 address alone, and an IPv6 address's /64, which is one
// subscriber's network (it may hand out any of 2^64 addresses at will).
func addressPrefix(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	if addr.Is4() {
		return netip.PrefixFrom(addr, 32)
	}
	p, _ := addr.WithZone("").Prefix(64)
	return p
}

// addressGroup is the key of the client address ip in the per-address
// limits: the IPv4 address, or the IPv6 /64 as a prefix ("2001:db8::/64");
// text that is no address is its own key.
func addressGroup(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if p := addressPrefix(addr); p.Addr().Is6() {
		return p.String()
	}
	return addr.Unmap().String()
}

func noteRetryAfter(ctx context.Context, seconds int) {
	if c, ok := ctx.Value(clientKey{}).(*clientInfo); ok {
		c.mu.Lock()
		c.retryAfter = max(c.retryAfter, seconds)
		c.mu.Unlock()
	}
}

// retryAfterWriter adds the Retry-After header as the response starts,
// which is after every operation of it has run.
type retryAfterWriter struct {
	http.ResponseWriter
	client  *clientInfo
	started bool
}

func (w *retryAfterWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.client.mu.Lock()
	seconds := w.client.retryAfter
	w.client.mu.Unlock()
	if seconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
	}
}

func (w *retryAfterWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *retryAfterWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
