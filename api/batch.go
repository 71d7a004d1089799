package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"feedservice/internal/apperr"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// batchPOST is the transport of batched operations: a POST whose JSON body
// is an array of GraphQL requests (what Apollo's BatchHttpLink sends). It
// answers an array of results in the same order, each operation run as if
// it came alone (its own extensions, dataloaders and errors), but for the
// complexity limit, which the batch's operations share (complexityLimit).
// A batch of more than maxOperations, or none, is refused whole.
type batchPOST struct {
	maxOperations int
}

var _ graphql.Transport = batchPOST{}

// Supports peeks at the body for the opening bracket of an array, leaving
// the body whole for whichever transport reads it.
func (batchPOST) Supports(r *http.Request) bool {
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

func (t batchPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	var batch []*graphql.RawParams
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&batch); err != nil {
		// The presenter words it without echoing the body back.
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("batch body: %v", err)}))
		return
	}
	if len(batch) == 0 || len(batch) > t.maxOperations {
		w.WriteHeader(http.StatusBadRequest)
		refusal := apperr.BadInput("a batch holds 1 to %d operations (MaxBatchOperations); this one holds %d", t.maxOperations, len(batch))
		writeJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.WrapIfUnwrapped(refusal)}))
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
	writeJSON(w, results)
}

// writeJSON writes v; an error means the client went away, and nobody is
// left to tell.
func writeJSON(w io.Writer, v any) {
	json.NewEncoder(w).Encode(v)
}
