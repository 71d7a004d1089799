package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// The refusals below answer, with a code and what is wrong, requests that
// gqlgen would refuse as "transport not supported" (a method or a
// Content-Type no transport takes) or as a body "of at most 1048576 bytes"
// (JSON that does not parse, or a member of the wrong type). RefuseMalformedRequest calls them.

// refusedRequestMembers is the message for a POST body whose request (or
// one of a batch's) has a member of the wrong JSON type, or "": query and
// operationName are strings, variables and extensions objects, each may be
// null. Go's decoder matches the names without regard to case, and so does
// this check.
func refusedRequestMembers(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return requestMembers(trimmed)
	}
	var batch []json.RawMessage
	if json.Unmarshal(trimmed, &batch) != nil {
		return ""
	}
	for i, one := range batch {
		if msg := requestMembers(one); msg != "" {
			return fmt.Sprintf("operation %d of the batch: %s", i+1, msg)
		}
	}
	return ""
}

// requestMembers is refusedRequestMembers for one request.
func requestMembers(request []byte) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(request, &members) != nil {
		return "" // not an object: the transports answer it
	}
	for name, value := range members {
		for _, m := range []struct{ name, kind string }{{"query", "string"}, {"operationName", "string"}, {"variables", "object"}, {"extensions", "object"}} {
			if !strings.EqualFold(name, m.name) {
				continue
			}
			if kind := jsonKind(value); kind != m.kind && kind != "null" {
				return fmt.Sprintf("the request's %q must be a JSON %s or null, not %s", m.name, m.kind, article(kind))
			}
		}
	}
	return ""
}

// jsonKind names the kind of a well-formed JSON value.
func jsonKind(value []byte) string {
	value = bytes.TrimSpace(value)
	if len(value) == 0 {
		return "nothing"
	}
	switch value[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func article(kind string) string {
	if kind == "object" || kind == "array" {
		return "an " + kind
	}
	return "a " + kind
}

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

// RefusedSocketOperation is the id and refusal of a websocket message that
// starts an operation (subscribe, or start in the legacy graphql-ws) whose
// payload has a member of the wrong JSON type (refusedRequestMembers), or
// "" for any other message.
func RefusedSocketOperation(data []byte) (id, refusal string) {
	var m struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(data, &m) != nil || (m.Type != "subscribe" && m.Type != "start") || jsonKind(m.Payload) != "object" {
		return "", ""
	}
	return m.ID, requestMembers(m.Payload)
}
