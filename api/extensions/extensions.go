// Package extensions holds the gqlgen extensions of the API's /query (and
// its batch transport): what a GraphQL operation must pass before it runs
// (its token, the size of its document, its variables, its price and the
// complexity budget, @defer, the strings of its document), the automatic
// persisted queries, the bounded cache of parsed documents, the span of
// each operation, and how refusals read; and the checks of a request's
// HTTP body, GET parameters or websocket message before gqlgen reads it
// (requestcheck.go, requestformat.go). Package api installs them, in about
// the order of this file; the extensions that count or bound operations
// in flight, or their answers, stay in api, beside what they serve.
package extensions

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/go-viper/mapstructure/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"feedservice/internal/apperr"
	"feedservice/internal/apq"
	"feedservice/internal/ratelimit"
	"feedservice/internal/viewer"
)

// ---- Automatic persisted queries.

// PersistedQueries is automatic persisted queries (Apollo's protocol, as
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
type PersistedQueries struct {
	// Cache keeps the documents by their hash.
	Cache graphql.Cache[string]
}

// apqStats is where gqlgen's extension notes the hash and whether the
// document came with it (extension.GetApqStats reads it).
const apqStats = "APQ"

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = PersistedQueries{}

func (PersistedQueries) ExtensionName() string                   { return "AutomaticPersistedQuery" }
func (PersistedQueries) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters puts the document of a hash sent alone in
// place, and checks the hash of a document sent with one.
func (p PersistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
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
		doc, ok := p.Cache.Get(ctx, ext.Sha256)
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

// Keeper is the second half of PersistedQueries: registered after every
// other check of an operation, it keeps a document that came with its hash
// once the operation passed them all, when a viewer is signed in.
func (p PersistedQueries) Keeper() graphql.HandlerExtension {
	return keepPersistedQuery{cache: p.Cache}
}

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

// ---- A refused token.

// RefuseBadToken fails every operation of a request whose token was refused,
// rather than running it signed out.
type RefuseBadToken struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = RefuseBadToken{}

func (RefuseBadToken) ExtensionName() string                   { return "RefuseBadToken" }
func (RefuseBadToken) Validate(graphql.ExecutableSchema) error { return nil }
func (RefuseBadToken) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	if err := viewer.TokenError(ctx); err != nil {
		return gqlerror.WrapIfUnwrapped(err)
	}
	return nil
}

// ---- The size of a document: selections, depth, fields expanded, introspection.

// DocumentLimits refuses, before gqlgen validates it, a document with more
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
type DocumentLimits struct {
	MaxTokens     int  // the parser's token limit (MaxQueryTokens)
	MaxSelections int  // MaxQuerySelections
	MaxDepth      int  // MaxQueryDepth
	MaxFields     int  // MaxQueryFields
	Introspection bool // whether introspection is switched on
	// Kept are the documents that passed (the parsed-document cache).
	Kept interface{ Contains(key string) bool }
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = DocumentLimits{}

func (DocumentLimits) ExtensionName() string                   { return "DocumentLimits" }
func (DocumentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l DocumentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if l.Kept != nil && l.Kept.Contains(p.Query) {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, l.MaxTokens)
	if err != nil {
		return nil // gqlgen's parse answers it, with its code
	}
	if n := measureDocument(doc).selections; n > l.MaxSelections {
		return gqlerror.WrapIfUnwrapped(apperr.BadInput("the document has %d selections (fields, fragment spreads, inline fragments); at most %d are allowed (MaxQuerySelections)", n, l.MaxSelections))
	}
	for _, op := range doc.Operations {
		if err := l.checkOperation(ctx, doc.Fragments, op); err != nil {
			return gqlerror.WrapIfUnwrapped(err)
		}
	}
	return nil
}

// checkOperation measures one operation against the limits.
func (l DocumentLimits) checkOperation(ctx context.Context, fragments ast.FragmentDefinitionList, op *ast.OperationDefinition) error {
	m, err := measureOperation(ctx, fragments, op)
	switch {
	case err != nil:
		return err
	case m.introspects && !l.Introspection:
		return apperr.BadInput("introspection (__schema, __type) is switched off on this server")
	case m.depth > l.MaxDepth:
		return apperr.BadInput("the operation nests fields %d deep; at most %d are allowed (MaxQueryDepth)", m.depth, l.MaxDepth)
	case m.fields > l.MaxFields:
		return apperr.BadInput("the operation selects %s fields with its fragments expanded; at most %d are allowed (MaxQueryFields)", fieldCount(m.fields), l.MaxFields)
	}
	return nil
}

// operationMeasure is what the document limits check of an operation.
type operationMeasure struct {
	// depth is how deep its fields nest, through fragments.
	depth int
	// fields counts its fields with every fragment spread expanded: the
	// fields gqlgen's complexity walker and its executor would visit. It
	// saturates at math.MaxInt.
	fields int
	// introspects is true when it selects __schema or __type anywhere.
	introspects bool
	// visits counts the selections the walk looked at: at most the
	// selections written in the document, whatever fields says.
	visits int
}

// measureOperation measures op in one walk over its document. A named
// fragment is measured once, at its first spread, and every later spread
// adds its cached measure. So the walk visits each selection of the document
// at most once: a fragment spread twice by the one before it, sixty deep, is
// 2^60 fields expanded but only its written selections to measure. (gqlgen's
// complexity walker walks a fragment again at every spread; the limits refuse
// such an operation before that walker runs.)
//
// The walk stops with ctx's error when ctx ends. A fragment that spreads
// itself, which validation refuses before this runs, is a BAD_USER_INPUT
// error.
func measureOperation(ctx context.Context, fragments ast.FragmentDefinitionList, op *ast.OperationDefinition) (operationMeasure, error) {
	w := documentWalk{ctx: ctx, fragments: fragments, measured: map[string]selectionMeasure{}, walking: map[string]bool{}}
	m := w.selectionSet(op.SelectionSet)
	return operationMeasure{depth: m.depth, fields: m.fields, introspects: w.introspects, visits: w.visits}, w.err
}

// ctxCheckEvery is how many selections the walk visits between looks at
// its context: often enough to stop within microseconds, rarely enough to
// cost nothing.
const ctxCheckEvery = 64

// documentWalk is the state of one measureOperation.
type documentWalk struct {
	ctx         context.Context
	fragments   ast.FragmentDefinitionList
	measured    map[string]selectionMeasure // fragments measured, by name
	walking     map[string]bool             // fragments being measured: a spread of one is a cycle
	visits      int
	introspects bool
	err         error // the first error; the walk unwinds without visiting more
}

// selectionMeasure is the measure of one selection set.
type selectionMeasure struct {
	depth  int
	fields int
}

func (w *documentWalk) selectionSet(set ast.SelectionSet) selectionMeasure {
	var m selectionMeasure
	for _, sel := range set {
		if w.err != nil {
			return m
		}
		if w.visits++; w.visits%ctxCheckEvery == 0 {
			if err := w.ctx.Err(); err != nil {
				w.err = err
				return m
			}
		}
		var child selectionMeasure
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__schema" || sel.Name == "__type" {
				w.introspects = true
			}
			child = w.selectionSet(sel.SelectionSet)
			child.depth++
			child.fields = saturatingAdd(child.fields, 1)
		case *ast.InlineFragment:
			child = w.selectionSet(sel.SelectionSet)
		case *ast.FragmentSpread:
			child = w.fragment(sel.Name)
		}
		m.depth = max(m.depth, child.depth)
		m.fields = saturatingAdd(m.fields, child.fields)
	}
	return m
}

// fragment measures the named fragment once and returns its cached measure
// after. An unknown fragment measures nothing (validation refuses it).
func (w *documentWalk) fragment(name string) selectionMeasure {
	if m, ok := w.measured[name]; ok {
		return m
	}
	if w.walking[name] {
		w.err = apperr.BadInput("fragment %s spreads itself", name)
		return selectionMeasure{}
	}
	def := w.fragments.ForName(name)
	if def == nil {
		w.measured[name] = selectionMeasure{}
		return selectionMeasure{}
	}
	w.walking[name] = true
	m := w.selectionSet(def.SelectionSet)
	delete(w.walking, name)
	if w.err == nil {
		w.measured[name] = m
	}
	return m
}

func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// fieldCount writes a count of fields that may have saturated.
func fieldCount(n int) string {
	if n == math.MaxInt {
		return "more than " + strconv.Itoa(math.MaxInt-1)
	}
	return strconv.Itoa(n)
}

// documentSize is what a whole parsed document holds: every operation and
// every fragment definition, used or not, as written (fragments are not
// expanded).
type documentSize struct {
	// selections counts the fields, fragment spreads and inline fragments:
	// validation compares them pairwise (OverlappingFieldsCanBeMerged), so
	// its work grows with their square.
	selections int
	// nodes counts the selections, arguments, values (each element of a
	// list or object too), directives, variable definitions and
	// definitions: the parsed tree's size (ParsedDocumentBytes).
	nodes int
}

// measureDocument counts doc's selections and nodes in one walk over the
// tree the parser built, whose depth the token limit bounds.
func measureDocument(doc *ast.QueryDocument) documentSize {
	var n documentSize
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		n.nodes++
		for _, child := range v.Children {
			value(child.Value)
		}
	}
	arguments := func(args ast.ArgumentList) {
		for _, a := range args {
			n.nodes++
			value(a.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			n.nodes++
			arguments(d.Arguments)
		}
	}
	var selectionSet func(set ast.SelectionSet)
	selectionSet = func(set ast.SelectionSet) {
		for _, sel := range set {
			n.selections++
			n.nodes++
			switch sel := sel.(type) {
			case *ast.Field:
				arguments(sel.Arguments)
				directives(sel.Directives)
				selectionSet(sel.SelectionSet)
			case *ast.InlineFragment:
				directives(sel.Directives)
				selectionSet(sel.SelectionSet)
			case *ast.FragmentSpread:
				directives(sel.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		n.nodes++
		for _, v := range op.VariableDefinitions {
			n.nodes++
			value(v.DefaultValue)
			directives(v.Directives)
		}
		directives(op.Directives)
		selectionSet(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n.nodes++
		directives(f.Directives)
		selectionSet(f.SelectionSet)
	}
	return n
}

// What a parsed and validated document holds in memory beside its text,
// per selection and per other node of its tree (TestParsedDocumentBytesEstimate
// measures documents of every shape within a factor of 1.5 of it; their
// text is a twentieth to a fiftieth of the whole).
const (
	parsedSelectionBytes = 300
	parsedNodeBytes      = 200
)

// ParsedDocumentBytes estimates what the parsed document doc of query holds
// in memory: its text, which it keeps, and its tree.
func ParsedDocumentBytes(query string, doc *ast.QueryDocument) int {
	n := measureDocument(doc)
	return len(query) + parsedSelectionBytes*n.selections + parsedNodeBytes*(n.nodes-n.selections)
}

// ---- Int variables, and requests that name no operation.

// The refusals below say what is wrong with a request where gqlgen's own
// words would mislead: an Int variable that is a fraction ("cannot use value
// 0 as Int") or past 32 bits (taken as a 64-bit Int, then refused by the
// argument's own bound), and an operation name missing from a document of
// several operations ("operation  not found"). The body's members of the
// wrong JSON type are refusedRequestMembers' (requestformat.go).

// IntVariables refuses, before gqlgen coerces them, the variables declared
// as Int (alone, in a list or in an input object) whose JSON number is not
// a GraphQL Int: a whole number from -2^31 to 2^31-1. It reads the document
// only when a variable holds a number that is not one (a rare request):
// from the cache of parsed documents, else parsed under the token limit.
// Its refusal is a validation error, as gqlgen's coercion errors are.
type IntVariables struct {
	MaxTokens int // the parser's token limit (MaxQueryTokens)
	// Kept is the cache of parsed documents.
	Kept interface {
		Get(ctx context.Context, key string) (*ast.QueryDocument, bool)
	}
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = &IntVariables{}

func (*IntVariables) ExtensionName() string { return "IntVariables" }
func (v *IntVariables) Validate(es graphql.ExecutableSchema) error {
	v.schema = es.Schema()
	return nil
}

func (v *IntVariables) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if !holdsNonInt(p.Variables) {
		return nil
	}
	doc, ok := v.Kept.Get(ctx, p.Query)
	if !ok {
		var err error
		if doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, v.MaxTokens); err != nil {
			return nil // gqlgen's parse answers it
		}
	}
	op := doc.Operations.ForName(p.OperationName)
	if op == nil {
		return nil // gqlgen answers it (WithOperationNames)
	}
	for _, def := range op.VariableDefinitions {
		value, ok := p.Variables[def.Variable]
		if !ok {
			continue
		}
		if msg := v.notInt(def.Type, value); msg != "" {
			err := gqlerror.ErrorPathf(ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}, "variable $%s: %s", def.Variable, msg)
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	return nil
}

// notInt says why value, of a variable of type typ, holds a number where
// typ has an Int that is not one; "" when it does not.
func (v *IntVariables) notInt(typ *ast.Type, value any) string {
	switch {
	case value == nil:
		return ""
	case typ.Elem != nil:
		list, ok := value.([]any)
		if !ok {
			return v.notInt(typ.Elem, value) // a single value stands for a list of one
		}
		for _, e := range list {
			if msg := v.notInt(typ.Elem, e); msg != "" {
				return msg
			}
		}
		return ""
	case typ.NamedType == "Int":
		return intProblem(value)
	}
	def := v.schema.Types[typ.NamedType]
	object, ok := value.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return ""
	}
	for _, f := range def.Fields {
		if msg := v.notInt(f.Type, object[f.Name]); msg != "" {
			return msg
		}
	}
	return ""
}

// intProblem says why a JSON value is not a GraphQL Int, or "" when it is
// one or is not a number (gqlgen's coercion refuses those in its words).
// The transports decode numbers as json.Number; float64 is there for a
// decoder that does not.
func intProblem(value any) string {
	var text string
	switch n := value.(type) {
	case json.Number:
		text = n.String()
	case float64:
		text = strconv.FormatFloat(n, 'f', -1, 64)
	default:
		return ""
	}
	i, err := strconv.ParseInt(text, 10, 64)
	switch {
	case err == nil && i >= math.MinInt32 && i <= math.MaxInt32:
		return ""
	case err == nil || isIntegerText(text):
		return fmt.Sprintf("%s is out of the range of Int, a 32-bit integer (%d to %d)", shortNumber(text), math.MinInt32, math.MaxInt32)
	}
	return fmt.Sprintf("%s is not an Int: an Int is a whole number, written without a fraction or an exponent", shortNumber(text))
}

// shortNumber is text, or its start and length when it is too long to echo
// back (a number may be most of a 1 MiB body).
func shortNumber(text string) string {
	const maxShown = 40
	if len(text) <= maxShown {
		return text
	}
	return fmt.Sprintf("%s… (a number of %d characters)", text[:maxShown], len(text))
}

// isIntegerText reports whether s is an optional minus sign and digits.
func isIntegerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// holdsNonInt reports whether variables hold, at any depth, a number that
// is not a GraphQL Int: only then can a variable of type Int be one.
func holdsNonInt(value any) bool {
	switch v := value.(type) {
	case map[string]any:
		for _, e := range v {
			if holdsNonInt(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holdsNonInt(e) {
				return true
			}
		}
	default:
		return intProblem(v) != ""
	}
	return false
}

// WithOperationNames replaces gqlgen's "operation X not found" (with an
// empty X when the request named none) by what is wrong: which operation
// to name, and the document's operations to name it from.
func WithOperationNames(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if !graphql.HasOperationContext(ctx) {
			return e
		}
		oc := graphql.GetOperationContext(ctx)
		if oc.Doc == nil || oc.Operation != nil || e.Message != "operation "+oc.OperationName+" not found" {
			return e
		}
		e.Message = operationNotFound(oc.OperationName, oc.Doc.Operations)
		return e
	}
}

// operationNotFound is the message for a request naming name (or none)
// where the document holds ops and none of them is the one.
func operationNotFound(name string, ops ast.OperationList) string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
		if op.Name == "" {
			names[i] = "(anonymous)"
		}
	}
	switch {
	case len(ops) == 0:
		return "the document holds no operation: send a query, mutation or subscription"
	case name == "":
		return fmt.Sprintf("the document holds %d operations (%s): say which one to run with operationName", len(ops), strings.Join(names, ", "))
	}
	return fmt.Sprintf("the document holds no operation named %q; its operations are %s", name, strings.Join(names, ", "))
}

// ---- The price of one operation (complexity).

// ComplexityLimit refuses an operation that costs more than max
// (MaxQueryComplexity), as priced by resolvers.Complexity, before it runs.
// The operations of one batch share the limit: each may cost what the ones
// before it left. It notes the operation's price in its stats
// (OperationPrice) for the complexity budget.
type ComplexityLimit struct {
	// Max bounds a query or mutation; MaxSubscription a subscription, whose
	// selection runs again on every event (MaxSubscriptionComplexity).
	Max, MaxSubscription int
	es                   graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &ComplexityLimit{}

// errComplexityLimit is gqlgen's code for a refusal by complexity, which the
// error presenter sends as BAD_USER_INPUT.
const errComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"

// complexityStats names the operation's price in its stats.
const complexityStats = "ComplexityLimit"

func (*ComplexityLimit) ExtensionName() string { return complexityStats }
func (l *ComplexityLimit) Validate(es graphql.ExecutableSchema) error {
	l.es = es
	return nil
}

func (l *ComplexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	price := complexity.Calculate(ctx, l.es, opCtx.Operation, opCtx.Variables)
	opCtx.Stats.SetExtension(complexityStats, price)
	var err *gqlerror.Error
	switch b, _ := ctx.Value(batchKey{}).(*batchSpend); {
	case opCtx.Operation.Operation == ast.Subscription && price > l.MaxSubscription:
		err = gqlerror.Errorf("the subscription costs %d, over the complexity limit of %d for a subscription (MaxSubscriptionComplexity), whose selection runs again on every event", price, l.MaxSubscription)
	case price > l.Max:
		err = gqlerror.Errorf("the operation costs %d, over the complexity limit of %d (MaxQueryComplexity)", price, l.Max)
	case b != nil && price > l.Max-b.price:
		err = gqlerror.Errorf("the operation costs %d; the operations before it in its batch cost %d of the complexity limit of %d (MaxQueryComplexity), which the whole batch shares", price, b.price, l.Max)
	case b != nil:
		b.price += price
	}
	if err != nil {
		errcode.Set(err, errComplexityLimit)
	}
	return err
}

// OperationPrice is the price ComplexityLimit noted for the operation of
// ctx, or 0.
func OperationPrice(ctx context.Context) int {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	price, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(complexityStats).(int)
	return price
}

// batchSpend is what a batch's operations have cost so far; BatchPOST puts
// it in the context of each.
type batchSpend struct{ price int }

type batchKey struct{}

// ---- @defer.

// RefuseDefer refuses an operation that would defer a fragment, before
// anything runs or is sent, on every transport and either executor.
// gqlgen's executor, which runs every document that may use @defer, writes
// each deferred field into the first answer as null (null in a non-null
// field, without an error), and the transports the server offers send
// that first answer only: the fields never come. The refusal is a
// validation error (BAD_USER_INPUT; HTTP 422, or 400 to a client that
// accepts application/graphql-response+json) whose message names @defer,
// so that a client can send the document again without it. A @defer that
// would not defer (if: false, or under a fragment @skip or @include leaves
// out) is let through: gqlgen runs its fragment inline. @stream is not a
// directive of the schema, so validation refuses it already.
type RefuseDefer struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = RefuseDefer{}

// errDeferNotSupported is the message of the refusal.
const errDeferNotSupported = "@defer is not supported: the server sends every answer in one part; " +
	"ask for the fragment without @defer (or with @defer(if: false))"

func (RefuseDefer) ExtensionName() string                   { return "RefuseDefer" }
func (RefuseDefer) Validate(graphql.ExecutableSchema) error { return nil }
func (RefuseDefer) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil || op.Doc == nil {
		return nil
	}
	seen := map[string]bool{}
	if d := activeDefer(op.Operation.SelectionSet, op.Doc.Fragments, op.Variables, seen); d != nil {
		err := gqlerror.Errorf("%s", errDeferNotSupported)
		if d.Position != nil {
			err = gqlerror.ErrorPosf(d.Position, "%s", errDeferNotSupported)
		}
		errcode.Set(err, errcode.ValidationFailed)
		return err
	}
	return nil
}

// activeDefer returns the first @defer in set, or in a fragment it spreads,
// that gqlgen's executor would act on, or nil. Its rules are gqlgen's own
// (graphql.CollectFields): a fragment left out by @skip or @include is not
// looked into, and @defer defers unless its if argument is other than
// true. seen holds the named fragments looked into already: a fragment's
// directives and contents are the same wherever it is spread.
func activeDefer(set ast.SelectionSet, fragments ast.FragmentDefinitionList, vars map[string]any, seen map[string]bool) *ast.Directive {
	for _, sel := range set {
		var inner ast.SelectionSet
		switch sel := sel.(type) {
		case *ast.Field:
			if !included(sel.Directives, vars) {
				continue
			}
			inner = sel.SelectionSet
		case *ast.InlineFragment:
			if !included(sel.Directives, vars) {
				continue
			}
			if d := deferring(sel.Directives, vars); d != nil {
				return d
			}
			inner = sel.SelectionSet
		case *ast.FragmentSpread:
			if !included(sel.Directives, vars) {
				continue
			}
			if d := deferring(sel.Directives, vars); d != nil {
				return d
			}
			if seen[sel.Name] {
				continue
			}
			seen[sel.Name] = true
			if f := fragments.ForName(sel.Name); f != nil {
				inner = f.SelectionSet
			}
		}
		if d := activeDefer(inner, fragments, vars, seen); d != nil {
			return d
		}
	}
	return nil
}

// deferring returns the @defer of directives when it defers.
func deferring(directives ast.DirectiveList, vars map[string]any) *ast.Directive {
	d := directives.ForName("defer")
	if d == nil {
		return nil
	}
	if arg := d.Arguments.ForName("if"); arg != nil {
		if v, err := arg.Value.Value(vars); err == nil {
			if on, _ := v.(bool); !on {
				return nil
			}
		}
	}
	return d
}

// included says whether @skip and @include keep a selection.
func included(directives ast.DirectiveList, vars map[string]any) bool {
	return !isTrue(directives.ForName("skip"), vars) && (directives.ForName("include") == nil || isTrue(directives.ForName("include"), vars))
}

// isTrue says whether directive d is there with an if argument that is true.
func isTrue(d *ast.Directive, vars map[string]any) bool {
	if d == nil {
		return false
	}
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return false
	}
	v, err := arg.Value.Value(vars)
	on, _ := v.(bool)
	return err == nil && on
}

// ---- Validation messages without the schema's names.

// WithoutSuggestions cuts from each error the "Did you mean ...?" that
// gqlparser's validation appends to an unknown field, argument, type, input
// field or enum value: it names the schema's own, which a server with
// introspection switched off keeps to itself.
func WithoutSuggestions(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if i := strings.Index(e.Message, " Did you mean "); i >= 0 {
			e.Message = e.Message[:i]
		}
		return e
	}
}

// WithoutSchemaNames rewrites, for a server with introspection switched
// off, the validation errors whose text names what the document did not
// write: a required argument or input field and its type, the type a field
// belongs to, the type a position or a fragment expects. What the client
// wrote (a field, argument, variable or fragment name) is kept, the error's
// location and code too, so the message still says what is wrong and
// where. Errors of the other rules name only the document's own words and
// pass as they are. The same goes for the errors of a variable's value.
func WithoutSchemaNames(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		switch {
		case e.Rule != "":
			e.Message = schemaFreeMessage(e.Rule, e.Message)
		case len(e.Path) > 2 && e.Path[0] == ast.PathName("variable"):
			schemaFreeVariableError(e)
		}
		return e
	}
}

// schemaFreeVariableError rewrites an error of gqlparser's variable
// coercion inside a variable's value (its path goes below the variable):
// a missing required input field is named by the path's last element, and
// a wrong type by the message. The rest of the path is what the client
// sent.
func schemaFreeVariableError(e *gqlerror.Error) {
	switch {
	case e.Message == "must be defined":
		e.Path = e.Path[:len(e.Path)-1]
		e.Message = "a required input field is missing here"
	case strings.HasPrefix(e.Message, "cannot use ") || strings.HasPrefix(e.Message, "must be a ") || strings.Contains(e.Message, " is not a valid "):
		e.Message = "this value is not of the type expected here"
	}
}

// schemaFreeMessage is the message of a validation error of rule without
// the schema's names; msg when it has none of them.
func schemaFreeMessage(rule, msg string) string {
	written := firstQuoted(msg) // the first name in gqlparser's messages is the document's
	// gqlgen swaps some rules for variants without "Did you mean".
	switch strings.TrimSuffix(rule, "WithoutSuggestions") {
	case "FieldsOnCorrectType":
		return fmt.Sprintf("Cannot query field %q here.", written)
	case "KnownArgumentNames":
		if strings.Contains(msg, " on directive ") {
			return msg
		}
		return fmt.Sprintf("Unknown argument %q on this field.", written)
	case "ProvidedRequiredArguments":
		return "A required argument is missing here."
	case "ValuesOfCorrectType":
		switch {
		case strings.Contains(msg, "was not provided"):
			return "A required input field is missing here."
		case strings.HasPrefix(msg, `Field "`) && strings.Contains(msg, " is not defined by type "):
			return fmt.Sprintf("Input field %q is not defined here.", written)
		}
		return "This value is not of the type expected here."
	case "VariablesInAllowedPosition":
		return fmt.Sprintf("Variable %q is not of the type expected here.", written)
	case "ScalarLeafs":
		if strings.Contains(msg, "must not have a selection") {
			return fmt.Sprintf("Field %q must not have a selection of subfields.", written)
		}
		return fmt.Sprintf("Field %q must have a selection of subfields.", written)
	case "PossibleFragmentSpreads":
		if strings.HasPrefix(msg, `Fragment "`) {
			return fmt.Sprintf("Fragment %q cannot be spread here: its type can never match.", written)
		}
		return "This fragment cannot be spread here: its type can never match."
	case "FragmentsOnCompositeTypes":
		return "A fragment's type condition must be an object, interface or union type."
	case "VariablesAreInputTypes":
		return fmt.Sprintf("Variable %q must be of an input type.", written)
	case "OverlappingFieldsCanBeMerged":
		return fmt.Sprintf("Fields %q conflict: one response name selects different fields, arguments or types; give them different aliases.", written)
	}
	return msg
}

// firstQuoted is the text between the first two double quotes of msg, or
// "". GraphQL names hold no quotes.
func firstQuoted(msg string) string {
	_, rest, ok := strings.Cut(msg, `"`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// ---- The complexity budget, in Redis.

// ComplexityBudget spends each operation's price (ComplexityLimit's) from
// a budget in Redis, the viewer's or, signed out, the client address's
// (COMPLEXITY_RATE), before it runs (a subscription as it starts); past it the operation is answered
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
type ComplexityBudget struct {
	Limiter *ratelimit.Limiter
	Rate    ratelimit.Rate // COMPLEXITY_RATE
	// Limit names the budget's limit in the limiter's keys and metrics.
	Limit string
	// Subject is whose budget an operation spends: its viewer's, or its
	// client address's.
	Subject func(ctx context.Context) string
	// NoteRetryAfter notes a refusal's retryAfter for the HTTP answer.
	NoteRetryAfter func(ctx context.Context, seconds int)
	Present        graphql.ErrorPresenterFunc
	// Free, if set, says whether the operation of ctx spends nothing.
	Free func(ctx context.Context) bool
	// Refused, if set, lets a query run while its price is spent (see
	// InterceptOperation), unless its subject was refused lately; nil
	// spends every price before the operation runs.
	Refused *RecentRefusals
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = ComplexityBudget{}

func (ComplexityBudget) ExtensionName() string                   { return "ComplexityBudget" }
func (ComplexityBudget) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext spends a subscription's price as it starts, in
// the socket's reader: the websocket transport runs a subscription in a
// goroutine of its own, whose context the client's complete cancels, so
// spent there a subscribe-and-complete loop went through unpaid. Its
// events pay again, each (the server's subscriptionEvents).
func (b ComplexityBudget) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil || op.Operation.Operation != ast.Subscription {
		return nil
	}
	price, _ := op.Stats.GetExtension(complexityStats).(int)
	refusal := b.Spend(ctx, price)
	if refusal == nil {
		return nil
	}
	refusal.Message = fmt.Sprintf("too much work asked: at most %d of complexity per %s (COMPLEXITY_RATE), and this subscription costs %d as it starts and again for each event; retry later", b.Rate.Count, b.Rate.Period, price)
	return b.Present(graphql.WithOperationContext(ctx, op), refusal)
}

// InterceptOperation spends the operation's price before it runs; a query
// runs while its price is spent, when Refused is set and its subject was
// not refused lately (RecentRefusals): the call to Redis is then off the
// answer's path, and a query refused so still answers RATE_LIMITED alone,
// its work thrown away. A query has nothing to undo; a mutation waits. A
// subject refused once waits again for every price until its retryAfter
// has passed, so what a client past its budget makes run for nothing is
// bounded by the operations it may have in flight at once
// (MAX_OPERATIONS_PER_VIEWER), once per refusal.
func (b ComplexityBudget) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	price := OperationPrice(ctx)
	if b.Rate.Off() || price <= 0 || (b.Free != nil && b.Free(ctx)) || isSubscription(ctx) {
		return next(ctx)
	}
	if b.Refused == nil || !isQuery(ctx) || b.Refused.Lately(b.Subject(ctx)) {
		if refusal := b.Spend(ctx, price); refusal != nil {
			return b.refuse(ctx, price, refusal)
		}
		return next(ctx)
	}
	spent := make(chan *apperr.Error, 1)
	go func() { spent <- b.Spend(ctx, price) }()
	h := next(ctx)
	var refused graphql.ResponseHandler
	first := true
	return func(ctx context.Context) *graphql.Response {
		if !first {
			if refused != nil {
				return refused(ctx)
			}
			return h(ctx)
		}
		first = false
		resp := h(ctx)
		if refusal := <-spent; refusal != nil {
			refused = b.refuse(ctx, price, refusal)
			return refused(ctx)
		}
		return resp
	}
}

// refuse answers an operation of price that its budget refused, and
// notes the refusal's retryAfter.
func (b ComplexityBudget) refuse(ctx context.Context, price int, refusal *apperr.Error) graphql.ResponseHandler {
	refusal.Message = fmt.Sprintf("too much work asked: at most %d of complexity per %s (COMPLEXITY_RATE), and this operation costs %d; retry later", b.Rate.Count, b.Rate.Period, price)
	b.NoteRetryAfter(ctx, refusal.RetryAfterSeconds())
	if b.Refused != nil {
		b.Refused.Note(b.Subject(ctx), time.Duration(refusal.RetryAfterSeconds())*time.Second)
	}
	return RefusedOperation(ctx, b.Present, refusal)
}

// isQuery says whether the operation of ctx is a query.
func isQuery(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Query
}

// RecentRefusals are the subjects a ComplexityBudget refused lately, each
// until its refusal's retryAfter has passed (at least a second), at most
// MaxRecentRefusals at once: past that every subject counts as refused
// lately, and every price is spent before its operation runs, until the
// ones that passed are let go.
type RecentRefusals struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// MaxRecentRefusals bounds the subjects RecentRefusals keeps (about 100
// bytes each).
const MaxRecentRefusals = 100_000

// Note records that subject was refused, for retryAfter from now.
func (r *RecentRefusals) Note(subject string, retryAfter time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.until == nil {
		r.until = map[string]time.Time{}
	}
	now := time.Now()
	if len(r.until) >= MaxRecentRefusals {
		for s, t := range r.until {
			if !t.After(now) {
				delete(r.until, s)
			}
		}
		if len(r.until) >= MaxRecentRefusals {
			return // every subject counts as refused lately
		}
	}
	r.until[subject] = now.Add(max(retryAfter, time.Second))
}

// Lately says whether subject was refused and its retryAfter has not
// passed; true for every subject while MaxRecentRefusals are kept.
func (r *RecentRefusals) Lately(subject string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.until) >= MaxRecentRefusals {
		return true
	}
	t, ok := r.until[subject]
	if ok && !t.After(time.Now()) {
		delete(r.until, subject)
		return false
	}
	return ok
}

// isSubscription says whether the operation of ctx is a subscription.
func isSubscription(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}

// Spend spends price from the budget of ctx's client, or says when it can
// be spent (a RATE_LIMITED error whose message the caller writes).
func (b ComplexityBudget) Spend(ctx context.Context, price int) *apperr.Error {
	_, refusal := b.Lease(ctx, price, 1)
	return refusal
}

// Lease spends the price of up to n operations (at least one) from the
// budget of ctx's client at once, as many as it holds, in one call to
// Redis (ratelimit.Limiter.AllowAtMost): leased is how many, or 0 and a
// RATE_LIMITED error (whose message the caller writes) when it holds not
// one, the refusal Spend would give. An off budget or a free price leases
// all n; a context that ended before Redis answered leases none, and is
// no refusal.
func (b ComplexityBudget) Lease(ctx context.Context, price, n int) (leased int, refusal *apperr.Error) {
	n = max(n, 1)
	if b.Rate.Off() || price <= 0 {
		return n, nil
	}
	share := ratelimit.Rate{Count: b.Rate.Count / min(price, b.Rate.Count), Period: b.Rate.Period}
	leased, err := b.Limiter.AllowAtMost(ctx, b.Limit, share, b.Subject(ctx), n)
	if errors.As(err, &refusal) {
		return 0, &apperr.Error{Code: refusal.Code, RetryAfter: refusal.RetryAfter}
	}
	return leased, nil // by Redis's budget or, while Redis fails, this instance's
}

// ---- The strings of a document; subscriptions by POST.

// RefuseLoneSurrogates refuses a document with a string literal holding a
// \u escape of half a surrogate pair ("\udc00"), which the GraphQL lexer
// would turn into U+FFFD: the same rule as for the JSON around it, for the
// documents of every transport, websockets included.
type RefuseLoneSurrogates struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = RefuseLoneSurrogates{}

func (RefuseLoneSurrogates) ExtensionName() string                   { return "RefuseLoneSurrogates" }
func (RefuseLoneSurrogates) Validate(graphql.ExecutableSchema) error { return nil }
func (RefuseLoneSurrogates) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if documentStringsValid(p.Query) {
		return nil
	}
	// A parse failure: the error presenter sends BAD_USER_INPUT.
	return &gqlerror.Error{Message: MalformedTextMessage, Extensions: map[string]any{"code": errcode.ParseFailed}}
}

// documentStringsValid reports whether every string literal of a GraphQL
// document passes IsJSONText, whose escapes are those of GraphQL strings.
// Comments and block strings, which have no escapes but \""", are skipped.
// It does not check that doc parses; the parser does that next.
func documentStringsValid(doc string) bool {
	for i := 0; i < len(doc); i++ {
		switch {
		case doc[i] == '#':
			for i < len(doc) && doc[i] != '\n' && doc[i] != '\r' {
				i++
			}
		case strings.HasPrefix(doc[i:], `"""`):
			i += 3
			for i < len(doc) && !strings.HasPrefix(doc[i:], `"""`) {
				if strings.HasPrefix(doc[i:], `\"""`) {
					i += 3
				}
				i++
			}
			i += 2
		case doc[i] == '"':
			start := i + 1
			for i = start; i < len(doc) && doc[i] != '"' && doc[i] != '\n'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			if !IsJSONText([]byte(doc[start:min(i, len(doc))])) {
				return false
			}
		}
	}
	return true
}

// plainPost marks the context of a GraphQL request sent by HTTP POST.
type plainPost struct{}

// WithPlainPost marks ctx as that of a GraphQL request sent by HTTP POST
// (not in a batch), for RefuseSubscriptionsByPost.
func WithPlainPost(ctx context.Context) context.Context {
	return context.WithValue(ctx, plainPost{}, true)
}

// RefuseSubscriptionsByPost refuses a subscription sent by HTTP POST: gqlgen
// would answer with its first event, and feedItemAdded has none until a post
// arrives, so the request would hang, holding a Redis subscription, past
// the cap on websockets. (GET refuses every operation but a query.)
type RefuseSubscriptionsByPost struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = RefuseSubscriptionsByPost{}

func (RefuseSubscriptionsByPost) ExtensionName() string                   { return "RefuseSubscriptionsByPost" }
func (RefuseSubscriptionsByPost) Validate(graphql.ExecutableSchema) error { return nil }
func (RefuseSubscriptionsByPost) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if byPost, _ := ctx.Value(plainPost{}).(bool); !byPost || op.Operation == nil || op.Operation.Operation != ast.Subscription {
		return nil
	}
	err := apperr.BadInput("a subscription runs over a websocket (graphql-transport-ws), not by POST")
	return &gqlerror.Error{Err: err, Message: err.Error()}
}

// ---- Batches: several operations in one POST.

// BatchPOST is the transport of batched operations: a POST whose JSON body
// is an array of GraphQL requests (what Apollo's BatchHttpLink sends). It
// answers an array of results in the same order, each operation run as if
// it came alone (its own extensions, dataloaders and errors), but for the
// complexity limit, which the batch's operations share (ComplexityLimit).
// A batch of more than MaxOperations (MaxBatchOperations), or none, is
// refused whole.
type BatchPOST struct {
	MaxOperations int
}

var _ graphql.Transport = BatchPOST{}

// Supports peeks at the body for the opening bracket of an array, leaving
// the body whole for whichever transport reads it.
func (BatchPOST) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "" || r.Body == nil {
		return false
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return false
	}
	body := bufio.NewReader(r.Body)
	r.Body = struct {
		io.Reader
		io.Closer
	}{body, r.Body}
	for n := 1; n <= body.Size(); n++ {
		peek, err := body.Peek(n)
		if err != nil {
			return false
		}
		switch peek[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

func (t BatchPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	var batch []*graphql.RawParams
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&batch); err != nil {
		// The presenter words it without echoing the body back.
		w.WriteHeader(http.StatusBadRequest)
		WriteJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("batch body: %v", err)}))
		return
	}
	if len(batch) == 0 || len(batch) > t.MaxOperations {
		w.WriteHeader(http.StatusBadRequest)
		refusal := apperr.BadInput("a batch holds 1 to %d operations (MaxBatchOperations); this one holds %d", t.MaxOperations, len(batch))
		WriteJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.WrapIfUnwrapped(refusal)}))
		return
	}
	results := make([]*graphql.Response, len(batch))
	ctx = context.WithValue(ctx, batchKey{}, &batchSpend{}) // they share the complexity limit
	for i, params := range batch {
		if params == nil {
			params = &graphql.RawParams{}
		}
		params.Headers = r.Header
		start := graphql.Now()
		params.ReadTime = graphql.TraceTiming{Start: start, End: start}
		opCtx, errs := exec.CreateOperationContext(ctx, params)
		if errs != nil {
			results[i] = exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
			continue
		}
		responses, opCtxCtx := exec.DispatchOperation(ctx, opCtx)
		results[i] = responses(opCtxCtx)
	}
	writeResponses(w, results)
}

// writeResponses writes a batch's results, an array of WriteResponse's
// answers.
func writeResponses(w io.Writer, results []*graphql.Response) {
	var out bytes.Buffer
	out.WriteByte('[')
	for i, res := range results {
		if i > 0 {
			out.WriteByte(',')
		}
		WriteResponse(&out, res)
	}
	out.WriteString("]\n")
	w.Write(out.Bytes())
}

// WriteJSON writes v as JSON to w; an error means the client went away,
// and nobody is left to tell.
func WriteJSON(w io.Writer, v any) {
	json.NewEncoder(w).Encode(v)
}

// RefusedOperation answers an operation refused before it ran with err
// alone, as present words it.
func RefusedOperation(ctx context.Context, present graphql.ErrorPresenterFunc, err error) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{present(ctx, err)}})
}
