package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
)

// The refusals below answer, with a code and what is wrong, requests that
// gqlgen would refuse as "transport not supported" (a method or a
// Content-Type no transport takes) or as a body "of at most 1048576 bytes"
// (JSON that does not parse). refuseMalformedRequest calls them.

// refusedMethod is the status and message for a request to /query by a
// method that no transport takes, or 0 and "".
func refusedMethod(r *http.Request) (int, string) {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodOptions:
		return 0, ""
	}
	return http.StatusMethodNotAllowed, fmt.Sprintf("%s is not a way to send a GraphQL request: POST a JSON body (Content-Type: application/json), GET a query with ?query=, or open a websocket", r.Method)
}

// refusedContentType is the status and message for a POST whose body is
// not declared as JSON, or 0 and "". curl's -d sends
// application/x-www-form-urlencoded unless told otherwise.
func refusedContentType(r *http.Request) (int, string) {
	if r.Method != http.MethodPost {
		return 0, ""
	}
	declared := r.Header.Get("Content-Type")
	if mediaType, _, err := mime.ParseMediaType(declared); err == nil && mediaType == "application/json" {
		return 0, ""
	}
	if declared == "" {
		declared = "none"
	} else {
		declared = fmt.Sprintf("%q", declared)
	}
	return http.StatusUnsupportedMediaType, "a POST to /query must have Content-Type: application/json (this one has " + declared + "); with curl, add -H 'Content-Type: application/json'"
}

// refusedJSON is the message for a POST body that is not a JSON object (one
// operation) or array (a batch), or "".
func refusedJSON(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return `the request body is empty: send a JSON GraphQL request such as {"query": "{ viewer { id } }"}`
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return fmt.Sprintf("the request body is not well-formed JSON: %v (at byte %d of %d)", syntax, syntax.Offset, len(trimmed))
		}
		return fmt.Sprintf("the request body is not well-formed JSON: %v", err)
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		return "the request body must be a JSON object (a GraphQL request) or array (a batch of them)"
	}
	return ""
}
