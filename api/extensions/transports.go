package extensions

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ---- The HTTP transports: gqlgen's GET and POST, answering the data as
// the executor wrote it.

// gqlgen's transports answer with json.Marshal(response), whose data is
// JSON the executor has just written (json.RawMessage): Marshal reads it
// all again to check and compact it, a sixth of a warm feed page's CPU.
// POST and GET run an operation as gqlgen's do, and write its answer with
// WriteResponse, which copies the data as it is. What they refuse before
// an operation exists (a body or a query string that does not decode)
// they leave to gqlgen's, word for word.

// POST is gqlgen's transport.POST, answering with WriteResponse.
type POST struct{ transport.POST }

var _ graphql.Transport = POST{}

func (t POST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	params := &graphql.RawParams{}
	if err != nil {
		// gqlgen reads the same bytes and error, and words the refusal.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		t.POST.Do(w, r, exec)
		return
	}
	if err := decodeJSON(bytes.NewReader(body), params); err != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.POST.Do(w, r, exec)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	run(w, r, exec, responseContentType(r), params, false)
}

// GET is gqlgen's transport.GET, answering with WriteResponse.
type GET struct{ transport.GET }

var _ graphql.Transport = GET{}

func (t GET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	query, err := url.ParseQuery(r.URL.RawQuery)
	params := &graphql.RawParams{Query: query.Get("query"), OperationName: query.Get("operationName"), Headers: r.Header}
	if err == nil && query.Get("variables") != "" {
		err = decodeJSON(strings.NewReader(query.Get("variables")), &params.Variables)
	}
	if err == nil && query.Get("extensions") != "" {
		err = decodeJSON(strings.NewReader(query.Get("extensions")), &params.Extensions)
	}
	if err != nil {
		t.GET.Do(w, r, exec) // it words the refusal
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	run(w, r, exec, responseContentType(r), params, true)
}

// run runs the operation of params and writes its answer, as gqlgen's
// transports do once they have read the request; a GET runs queries only.
func run(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, contentType string, params *graphql.RawParams, get bool) {
	w.Header().Add("Content-Type", contentType)
	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		w.WriteHeader(statusFor(errs, contentType))
		WriteResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	if get {
		if op := opCtx.Doc.Operations.ForName(opCtx.OperationName); op.Operation != ast.Query {
			w.WriteHeader(http.StatusNotAcceptable)
			WriteResponse(w, &graphql.Response{Errors: gqlerror.List{{Message: "GET requests only allow query operations"}}})
			return
		}
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	WriteResponse(w, responses(ctx))
}

// The response's content types, as gqlgen names them.
const (
	contentTypeJSON            = "application/json"
	contentTypeGraphQLResponse = "application/graphql-response+json"
)

// responseContentType is the content type of the answer, as gqlgen's
// transports choose it by default: the first of the request's Accept that
// is JSON or a GraphQL response, JSON for none or any.
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return contentTypeJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", contentTypeJSON:
			return contentTypeJSON
		case contentTypeGraphQLResponse:
			return contentTypeGraphQLResponse
		}
	}
	return contentTypeGraphQLResponse
}

// statusFor is the status of an operation refused before it ran, as
// gqlgen's transports give it.
func statusFor(errs gqlerror.List, contentType string) int {
	if errcode.GetErrorKind(errs) != errcode.KindProtocol {
		return http.StatusOK
	}
	if contentType == contentTypeGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity
}

func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return dec.Decode(v)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// WriteResponse writes response as json.Marshal does (gqlgen's
// transports), but for its data, the JSON the executor wrote, which it
// copies as it is rather than reading it again to compact it. So a string
// of the data holds <, > and & as themselves, where Marshal writes \u003c,
// \u003e and \u0026: the same JSON. An error means the client went away.
func WriteResponse(w io.Writer, response *graphql.Response) error {
	out := make([]byte, 0, len(response.Data)+64)
	out = append(out, '{')
	member := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, '"', ':')
		out = append(out, b...)
		return nil
	}
	var err error
	if len(response.Errors) > 0 {
		err = member("errors", response.Errors)
	}
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"data":`...)
	if len(response.Data) == 0 {
		out = append(out, "null"...)
	} else {
		out = append(out, response.Data...)
	}
	if err == nil && response.Label != "" {
		err = member("label", response.Label)
	}
	if err == nil && len(response.Path) > 0 {
		err = member("path", response.Path)
	}
	if err == nil && response.HasNext != nil {
		err = member("hasNext", response.HasNext)
	}
	if err == nil && len(response.Extensions) > 0 {
		err = member("extensions", response.Extensions)
	}
	if err != nil {
		panic(err) // as gqlgen's transports do: a response is JSON the server made
	}
	out = append(out, '}')
	_, err = w.Write(out)
	return err
}
