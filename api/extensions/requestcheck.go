package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"feedservice/internal/apperr"
)

// RefuseMalformedRequest refuses, with a coded error, what gqlgen's
// transports would refuse without a code or decode lossily:
//   - a request whose text is not Unicode: a POST body or GET parameter with
//     bytes that are not UTF-8, or a JSON string with an unpaired surrogate
//     escape (\udc00). Go's JSON decoder would replace either with U+FFFD,
//     and a post would be stored other than it was sent;
//   - a POST body over the limit of the MaxBytesReader around it (413);
//   - a GET query string that is not URL-encoded, or whose variables or
//     extensions are not a JSON object;
//   - a method, Content-Type or JSON body no transport takes, or a request
//     whose variables (or another member) are of the wrong JSON type
//     (requestformat.go).
//
// Websocket upgrades pass: their messages are read later. A POST request's
// context is marked for RefuseSubscriptionsByPost.
func RefuseMalformedRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet {
			if msg := checkGetParams(r.URL.RawQuery); msg != "" {
				writeRequestError(w, http.StatusBadRequest, msg)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		for _, refused := range []func(*http.Request) (int, string){refusedMethod, refusedContentType} {
			if status, msg := refused(r); msg != "" {
				writeRequestError(w, status, msg)
				return
			}
		}
		if r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeRequestError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit))
				return
			}
			writeRequestError(w, http.StatusBadRequest, "the request body could not be read")
			return
		}
		if !IsJSONText(body) {
			writeRequestError(w, http.StatusBadRequest, MalformedTextMessage)
			return
		}
		for _, refused := range []func([]byte) string{refusedJSON, refusedRequestMembers} {
			if msg := refused(body); msg != "" && r.Method == http.MethodPost {
				writeRequestError(w, http.StatusBadRequest, msg)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r.WithContext(WithPlainPost(r.Context())))
	})
}

// checkGetParams returns why the query string of a GET request cannot be a
// GraphQL request, or "".
func checkGetParams(rawQuery string) string {
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "the query string is not URL-encoded: " + err.Error()
	}
	for name, vs := range values {
		for _, v := range vs {
			if !IsJSONText([]byte(name)) || !IsJSONText([]byte(v)) {
				return MalformedTextMessage
			}
		}
	}
	for _, name := range []string{"variables", "extensions"} {
		var object map[string]any
		if v := values.Get(name); v != "" && json.Unmarshal([]byte(v), &object) != nil {
			return "the " + name + " parameter must be a JSON object"
		}
	}
	return ""
}

// writeRequestError answers a request refused before GraphQL reads it, in
// the shape of a GraphQL response and with the code every error carries.
func writeRequestError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message":    message,
		"extensions": map[string]any{"code": string(apperr.CodeBadUserInput)},
	}}})
}

// CodeRefusedGet gives gqlgen's refusal of a mutation or subscription sent
// by GET, written past the error presenter, the code every error carries.
// Every other answer passes through as it is written.
func CodeRefusedGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&refusedGetWriter{ResponseWriter: w}, r)
	})
}

// refusedGetWriter writes its own answer in place of gqlgen's 406.
type refusedGetWriter struct {
	http.ResponseWriter
	refused bool
}

func (w *refusedGetWriter) WriteHeader(code int) {
	if code != http.StatusNotAcceptable {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(http.StatusMethodNotAllowed)
	json.NewEncoder(w.ResponseWriter).Encode(map[string]any{"errors": []map[string]any{{
		"message":    "a GET request may only run a query: send mutations with POST, subscriptions over a websocket",
		"extensions": map[string]any{"code": string(apperr.CodeBadUserInput)},
	}}})
}

func (w *refusedGetWriter) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil // gqlgen's own text of the refusal
	}
	return w.ResponseWriter.Write(b)
}

func (w *refusedGetWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
