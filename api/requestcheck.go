package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"feedservice/internal/apperr"
)

// refuseMalformedRequest refuses, with a coded error, what gqlgen's
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
// context is marked for refuseSubscriptionsByPost.
func refuseMalformedRequest(next http.Handler) http.Handler {
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
		if !isJSONText(body) {
			writeRequestError(w, http.StatusBadRequest, malformedTextMessage)
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
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), plainPost{}, true)))
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
			if !isJSONText([]byte(name)) || !isJSONText([]byte(v)) {
				return malformedTextMessage
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

const malformedTextMessage = `the request is not Unicode text: it holds bytes that are not UTF-8, or a \u escape of half a surrogate pair`

// isJSONText reports whether b is UTF-8 in which every \u escape of a
// surrogate is one of a high-low pair. It does not check that b is JSON;
// the decoder does that next.
func isJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash: not the start of an escape
			continue
		}
		u, ok := hexEscape(b[i:])
		switch {
		case !ok || u < 0xd800 || u > 0xdfff:
		case u >= 0xdc00:
			return false // a low half alone
		default:
			low, ok := hexEscape(b[i+6:])
			if !ok || low < 0xdc00 || low > 0xdfff {
				return false // a high half alone
			}
			i += 6
		}
		i += 5
	}
	return true
}

// hexEscape reads the code unit of a \uXXXX escape at the start of b.
func hexEscape(b []byte) (uint64, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	u, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return u, err == nil
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
