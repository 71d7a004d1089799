package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Refusals of requests that say what is wrong with them: a variable that
// is not an Int, or an Int out of GraphQL's 32-bit range; variables that are
// not a JSON object; a document of several operations sent without
// operationName, or with one it does not hold. Over HTTP and over a
// websocket, which runs the same checks.

// requestRefusal is one request and what its refusal must and must not say.
type requestRefusal struct {
	name, body string
	want       []string // in the message
	not        []string // not in the message
}

const intVariableDoc = `query($n: Int) { viewer { timeline(first: $n) { totalCount } } }`

func intVariableBody(n string) string {
	return `{"query":"` + intVariableDoc + `","variables":{"n":` + n + `}}`
}

var variableRefusals = []requestRefusal{
	{"fraction", intVariableBody("1.5"), []string{"$n", "1.5", "not an Int"}, []string{"value 0"}},
	{"exponent fraction", intVariableBody("2.5e0"), []string{"$n", "2.5e0", "not an Int"}, []string{"value 0"}},
	{"above 32 bits", intVariableBody("2147483648"), []string{"$n", "2147483648", "32-bit"}, []string{"at most 100"}},
	{"below 32 bits", intVariableBody("-2147483649"), []string{"$n", "-2147483649", "32-bit"}, []string{"at most 100"}},
	{"above 64 bits", intVariableBody("9223372036854775808"), []string{"$n", "9223372036854775808", "32-bit"}, []string{"value 0"}},
	{"a long number", intVariableBody(strings.Repeat("9", 5000)), []string{"$n", strings.Repeat("9", 40) + "… (a number of 5000 characters)", "32-bit"}, []string{strings.Repeat("9", 41)}},
	{"two operations, no name", `{"query":"query A { __typename } query B { __typename }"}`, []string{"operationName", "A, B"}, []string{"operation  not found"}},
	{"a name not in the document", `{"query":"query A { __typename } query B { __typename }","operationName":"C"}`, []string{`"C"`, "A, B"}, nil},
}

// memberRefusals are requests with a member of the wrong JSON type, which
// gqlgen refused as a body "of at most 1048576 bytes" (HTTP) or as
// "invalid json" (websocket).
var memberRefusals = []requestRefusal{
	{"variables a string", `{"query":"{ __typename }","variables":"notobject"}`, []string{`"variables"`, "JSON object", "not a string"}, []string{"1048576", "invalid json"}},
	{"variables a number", `{"query":"{ __typename }","variables":3}`, []string{`"variables"`, "JSON object", "not a number"}, []string{"1048576", "invalid json"}},
	{"extensions an array", `{"query":"{ __typename }","extensions":[]}`, []string{`"extensions"`, "JSON object", "not an array"}, []string{"1048576", "invalid json"}},
	{"operationName a number", `{"query":"{ __typename }","operationName":1}`, []string{`"operationName"`, "string"}, []string{"1048576", "invalid json"}},
	{"query a number", `{"query":1}`, []string{`"query"`, "string"}, []string{"1048576", "invalid json"}},
}

// refusalMessage checks that r is one refusal, BAD_USER_INPUT, whose
// message says what c wants, and returns the message.
func refusalMessage(t *testing.T, c requestRefusal, errs []gqlError) string {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("%s: errors %+v, want one", c.name, errs)
	}
	msg := errs[0].Message
	if code, _ := errs[0].Extensions["code"].(string); code != "BAD_USER_INPUT" {
		t.Errorf("%s: code %q, want BAD_USER_INPUT (message %q)", c.name, code, msg)
	}
	for _, w := range c.want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %q does not say %q", c.name, msg, w)
		}
	}
	for _, n := range c.not {
		if strings.Contains(msg, n) {
			t.Errorf("%s: message %q says %q", c.name, msg, n)
		}
	}
	return msg
}

func TestRequestMessagesOverHTTP(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	refusals := append(append(variableRefusals, memberRefusals...),
		requestRefusal{"variables a string in a batch", `[{"query":"{ __typename }"},{"query":"{ __typename }","variables":"x"}]`, []string{"variables", "JSON object", "operation 2"}, []string{"1048576"}},
	)
	for _, c := range refusals {
		res, raw := errsPostRaw(t, s, []byte(c.body))
		r := errsDecode(t, res.StatusCode, raw)
		refusalMessage(t, c, r.Errors)
		if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 400 or 422", c.name, res.StatusCode)
		}
	}
	// At the edges of the range, and null variables, the request runs.
	for _, body := range []string{intVariableBody("2147483647"), intVariableBody("-2147483648"),
		`{"query":"{ __typename }","variables":null}`, `{"query":"{ __typename }","variables":{}}`} {
		res, raw := errsPostRaw(t, s, []byte(body))
		r := errsDecode(t, res.StatusCode, raw)
		for _, e := range r.Errors {
			if !strings.Contains(e.Message, "at most 100") && !strings.Contains(e.Message, "sign in") {
				t.Errorf("%s: refused: %+v", body, r.Errors)
			}
		}
	}
}

func TestRequestMessagesOverWebsocket(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	ws := liveConnect(t, s, liveTransportWS, s.signUp(t, "ann").Token)
	for _, c := range append(variableRefusals, memberRefusals...) {
		var payload json.RawMessage
		if err := json.Unmarshal([]byte(c.body), &payload); err != nil {
			t.Fatal(err)
		}
		ws.ids++
		id := strconv.Itoa(ws.ids)
		ws.mustSend(liveMsg{Type: "subscribe", ID: id, Payload: payload})
		res, end, err := ws.event(id, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		errs := res.Errors
		if end != nil && end.Type == "error" {
			if err := json.Unmarshal(end.Payload, &errs); err != nil {
				t.Fatalf("%s: error payload %s: %v", c.name, end.Payload, err)
			}
		}
		refusalMessage(t, c, errs)
		// The socket serves on.
		next := ws.subscribe(`{ __typename }`)
		if res, end, err := ws.event(next, 5*time.Second); err != nil || end != nil || string(res.Data) != `{"__typename":"Query"}` {
			t.Fatalf("%s: then { __typename }: %s %+v, end %v, err %v", c.name, res.Data, res.Errors, end, err)
		}
	}
}
