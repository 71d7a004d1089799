package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/internal/apperr"
	"feedservice/internal/fastexec"
)

// answerBudget bounds the bytes of the answers the instance holds at once,
// from the moment they are made until they are sent
// (MaxResponseBytesInFlight), and those of one client, its share
// (perAddress). A client is whom the other per-client bounds count
// (clientSubject): a signed-in user, each account apart, or a signed-out
// client's address group; so one address holds a share per account
// signed in from it, and MaxConnectionsPerAddress and the kernel's send
// buffers (SocketSendBufferBytes) bound what its connections park beyond
// that. An answer takes its bytes as it grows, in
// answerChunk steps, and gives them back once sent.
type answerBudget struct {
	max, perAddress int64

	mu        sync.Mutex
	total     int64
	byAddress map[string]int64
}

// answerChunk is the step in which an answer takes bytes from the budget:
// a lock taken at most once per chunk of its text.
const answerChunk = 64 << 10

// newAnswerBudget bounds answers to maxBytes on the instance, and a
// client (a signed-in user, or a signed-out address) to the share of them it has of the operations in flight, but
// to no less than one answer at the cap (maxAnswer).
func newAnswerBudget(maxBytes, maxAnswer, perAddressOps, totalOps int) *answerBudget {
	share := int64(maxBytes) * int64(perAddressOps) / int64(max(totalOps, 1))
	return &answerBudget{max: int64(maxBytes), perAddress: max(share, int64(maxAnswer)), byAddress: map[string]int64{}}
}

// take takes n bytes for an answer to the client address names (a
// clientSubject), or says which bound refused.
func (b *answerBudget) take(address string, n int64) (refusedBy string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.total+n > b.max:
		return gateInstance
	case b.byAddress[address]+n > b.perAddress:
		return gateAddress
	}
	b.total += n
	b.byAddress[address] += n
	return ""
}

func (b *answerBudget) give(address string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total -= n
	if b.byAddress[address] -= n; b.byAddress[address] <= 0 {
		delete(b.byAddress, address)
	}
}

// answerSpend is what one answer (an HTTP response, a batch's operations
// together; or one websocket message) has written and taken of the budget.
// The fast executor spends it as it writes text (fastexec.Limit); each
// operation's answer, once made, is counted exactly (settle).
type answerSpend struct {
	budget    *answerBudget
	address   string
	maxAnswer int64
	// errorCap bounds the bytes of the answer's errors (0: none), set by
	// limitErrors: a request may not buy an answer of errors much larger
	// than itself.
	errorCap int64

	spent      atomic.Int64 // bytes written so far
	errorBytes atomic.Int64 // bytes of the errors added so far

	mu       sync.Mutex
	taken    int64 // bytes taken from the budget
	released bool

	refusal atomic.Pointer[answerRefusal] // why the operation's answer is refused, once it is
}

func newAnswerSpend(b *answerBudget, address string, maxAnswer int) *answerSpend {
	return &answerSpend{budget: b, address: address, maxAnswer: int64(maxAnswer)}
}

var _ fastexec.Limit = (*answerSpend)(nil)

// Spend counts n bytes written, and says whether the answer may go on.
func (s *answerSpend) Spend(n int) bool {
	if s.refused() != nil {
		return false
	}
	return s.reach(s.spent.Add(int64(n)))
}

// reach takes from the budget what an answer of total bytes needs, or
// notes its refusal.
func (s *answerSpend) reach(total int64) bool {
	if total > s.maxAnswer {
		s.refuse(answerSize, apperr.New(apperr.CodeResponseTooLarge, "the answer is larger than %d bytes (MaxResponseBytes); ask for fewer fields, fewer ids or smaller pages in one request", s.maxAnswer))
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.taken < total && !s.released {
		if refusedBy := s.budget.take(s.address, answerChunk); refusedBy != "" {
			s.refuse(answerBytesLimit(refusedBy), s.budget.refusal(refusedBy))
			return false
		}
		s.taken += answerChunk
	}
	return true
}

// spendError counts an error of n bytes added to the answer: past the
// answer's errorCap the answer is refused with RESPONSE_TOO_LARGE, and the
// error's bytes count toward MaxResponseBytes and the budget as they are
// added, not only once the answer is made.
func (s *answerSpend) spendError(n int64) {
	if total := s.errorBytes.Add(n); s.errorCap > 0 && total > s.errorCap {
		s.refuse(answerErrors, apperr.New(apperr.CodeResponseTooLarge, "the answer's errors pass %d bytes (ERROR_BYTES_PER_REQUEST_BYTE times the request's bytes, plus ERROR_BYTES_ALLOWANCE); send fewer failing fields in one request", s.errorCap))
		return
	}
	s.Spend(int(n))
}

// answerRefusal is why an answer is refused, and the bound that did, in
// metrics.
type answerRefusal struct {
	err   *apperr.Error
	limit string
}

// Which bound refused an answer, in metrics.
const (
	answerSize         = "size"           // MaxResponseBytes
	answerErrors       = "errors"         // ErrorBytesPerRequestByte and ErrorBytesAllowance
	answerBytesAddress = "address_bytes"  // a client's share of MaxResponseBytesInFlight (a signed-in user's, or a signed-out address's)
	answerBytesTotal   = "instance_bytes" // MaxResponseBytesInFlight
)

// answerBytesLimit is the bound, in metrics, of the budget's refusal
// refusedBy (gateAddress or gateInstance).
func answerBytesLimit(refusedBy string) string {
	if refusedBy == gateAddress {
		return answerBytesAddress
	}
	return answerBytesTotal
}

func (s *answerSpend) refuse(limit string, err *apperr.Error) {
	s.refusal.CompareAndSwap(nil, &answerRefusal{err: err, limit: limit})
}

// refused is the error of the answer's refusal, or nil.
func (s *answerSpend) refused() *apperr.Error {
	if r := s.refusal.Load(); r != nil {
		return r.err
	}
	return nil
}

// settle counts an operation's answer of size bytes exactly, in place of
// what the executor spent making it since before (spent when it began).
func (s *answerSpend) settle(before, size int64) bool {
	total := before + size
	s.spent.Store(total)
	return s.reach(total)
}

// release gives back what the answer took of the budget: it has been sent.
func (s *answerSpend) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget.give(s.address, s.taken)
	s.taken, s.released = 0, true
}

// refusal is the error of an answer refused by the named bound.
func (b *answerBudget) refusal(refusedBy string) *apperr.Error {
	msg := fmt.Sprintf("the server holds as many bytes of answers as it may at once (MaxResponseBytesInFlight, %d); retry later", b.max)
	if refusedBy == gateAddress {
		msg = fmt.Sprintf("answers to one client (a signed-in user, or an address when signed out) may hold at most %d bytes at once (MaxResponseBytesInFlight's share of a client); retry when they have been read", b.perAddress)
	}
	return &apperr.Error{Code: apperr.CodeRateLimited, Message: msg, RetryAfter: operationRetryAfter}
}

type answerSpendKey struct{}

// answerLimit is the extension that bounds each operation's answer: it
// hands the answer's spend to the executor (the fast one stops writing
// text past it), counts the answer it made exactly, and answers one past
// the cap (RESPONSE_TOO_LARGE) or past the budget (RATE_LIMITED) with that
// error alone, before a byte of it is sent. An HTTP request's operations
// share its spend (limitOperations), given back once its answer is
// written. Each answer of a websocket operation (a query's one, or a
// subscription's per event) has its own, given back once the transport has
// written it: when it asks for the operation's next answer, which it does
// only then (heldAnswer). So a client that does not read its socket holds
// its answers' bytes, and is refused past its share.
type answerLimit struct {
	budget    *answerBudget
	maxAnswer int
	// errorsPerRequestByte and errorAllowance bound the errors of a
	// websocket answer as limitOperations bounds an HTTP request's.
	errorsPerRequestByte, errorAllowance int
	present                              graphql.ErrorPresenterFunc
	metrics                              *serverMetrics
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = answerLimit{}

func (answerLimit) ExtensionName() string                   { return "AnswerLimit" }
func (answerLimit) Validate(graphql.ExecutableSchema) error { return nil }

// heldAnswer is the spend of a websocket operation's last answer, held
// until the transport has written it.
type heldAnswer struct{ spend atomic.Pointer[answerSpend] }

func (h *heldAnswer) hold(s *answerSpend) {
	if old := h.spend.Swap(s); old != nil {
		old.release()
	}
}

type heldAnswerKey struct{}

func (l answerLimit) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if _, ok := ctx.Value(answerSpendKey{}).(*answerSpend); ok {
		return next(ctx) // HTTP: limitOperations holds the request's spend
	}
	held := &heldAnswer{}
	responses := next(context.WithValue(ctx, heldAnswerKey{}, held))
	// The transport asks for the next answer once it has written the last
	// (gqlgen's websocket writes it in between), and for one more at the
	// end, which is nil: the last answer's bytes are given back then.
	return func(ctx context.Context) *graphql.Response {
		held.hold(nil)
		return responses(ctx)
	}
}

func (l answerLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	spend, ok := ctx.Value(answerSpendKey{}).(*answerSpend)
	if !ok {
		spend = newAnswerSpend(l.budget, subject(ctx), l.maxAnswer)
		spend.errorCap = errorCap(operationBytes(ctx), l.errorsPerRequestByte, l.errorAllowance)
		if held, ok := ctx.Value(heldAnswerKey{}).(*heldAnswer); ok {
			defer held.hold(spend)
		} else {
			defer spend.release()
		}
		ctx = context.WithValue(ctx, answerSpendKey{}, spend)
	}
	before := spend.spent.Load()
	resp := next(fastexec.WithLimit(ctx, spend))
	if resp == nil {
		return nil
	}
	if spend.refused() == nil && spend.settle(before, responseBytes(resp)) {
		return resp
	}
	refusal := spend.refused()
	l.metrics.answersRefused.WithLabelValues(spend.refusal.Load().limit).Inc()
	if refusal.Code == apperr.CodeRateLimited {
		noteRetryAfter(ctx, refusal.RetryAfterSeconds())
	}
	out := &graphql.Response{Errors: gqlerror.List{l.present(ctx, refusal)}}
	// The refusal is this operation's: the next of a batch may fit in
	// what is left.
	spend.refusal.Store(nil)
	spend.settle(before, responseBytes(out))
	return out
}

// errorCap is the most bytes of errors an answer to a request of
// requestBytes may hold: perRequestByte times it, plus allowance.
func errorCap(requestBytes int64, perRequestByte, allowance int) int64 {
	return requestBytes*int64(perRequestByte) + int64(allowance)
}

// operationBytes is what the client sent for the operation of ctx: its
// document and its variables, as JSON.
func operationBytes(ctx context.Context) int64 {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	op := graphql.GetOperationContext(ctx)
	vars, _ := json.Marshal(op.Variables)
	return int64(len(op.RawQuery) + len(op.OperationName) + len(vars))
}

// withErrorBytes counts each error presented into its answer's spend
// (answerSpend.spendError), as it is added.
func withErrorBytes(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if spend, ok := ctx.Value(answerSpendKey{}).(*answerSpend); ok {
			b, _ := json.Marshal(e)
			spend.spendError(int64(len(b)))
		}
		return e
	}
}

// responseBytes is the size of resp as the transport writes it
// (json.Marshal, which escapes <, >, & and the line and paragraph
// separators in the data, already written as JSON).
func responseBytes(resp *graphql.Response) int64 {
	shell := *resp
	shell.Data = nil
	b, _ := json.Marshal(&shell)
	if resp.Data == nil {
		return int64(len(b))
	}
	n := int64(len(b)-len("null")) + int64(len(resp.Data))
	for _, c := range []string{"<", ">", "&"} {
		n += int64(len(`\u003c`)-len(c)) * int64(bytes.Count(resp.Data, []byte(c)))
	}
	for _, c := range []string{"\u2028", "\u2029"} {
		n += int64(len(`\u2028`)-len(c)) * int64(bytes.Count(resp.Data, []byte(c)))
	}
	return n
}

// answerWriter sends an HTTP request's answer: at its first byte the
// answer is made, so the request's place among the operations in flight
// is given back (leave), and from then on sending it may take
// minWriteTime and a second per minWriteRate bytes, past which the
// connection is closed; never past latest, WriteTimeout after the request
// was read (the server counts it from its headers).
type answerWriter struct {
	http.ResponseWriter
	leave        func()
	minWriteTime time.Duration
	minWriteRate int
	latest       time.Time

	started time.Time
	written int64
}

func (w *answerWriter) start() {
	if w.started.IsZero() {
		w.started = time.Now()
		w.leave()
	}
}

func (w *answerWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.start()
	w.written += int64(len(b))
	bound := w.minWriteTime + time.Duration(float64(w.written)/float64(w.minWriteRate)*float64(time.Second))
	// Without a deadline to set (a recorder in tests) the server's own
	// WriteTimeout bounds it.
	deadline := w.started.Add(bound)
	if deadline.After(w.latest) {
		deadline = w.latest
	}
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(deadline)
	return w.ResponseWriter.Write(b)
}

func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
