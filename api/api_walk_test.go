package api

// Black-box tests of the expanded field count (MaxQueryFields), which keeps
// the cost of walking a document in proportion to its size however often
// its fragments spread each other.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

func TestLimitsQueryFields(t *testing.T) {
	t.Parallel()
	// viewer 1 + 2 spreads x (id, username) = 5.
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryFields = 5 })
	ann := s.signUp(t, "ann")
	t.Run("at the limit", func(t *testing.T) {
		for _, q := range []string{
			`{ viewer { ...F ...F } } fragment F on User { id username }`,
			`{ viewer { ... on User { id username } ...F } } fragment F on User { id username }`,
			`{ a: viewer { id } b: viewer { id } __typename }`,
		} {
			ann.mustDo(t, q, nil, nil)
		}
	})
	t.Run("one over", func(t *testing.T) {
		for _, q := range []string{
			`{ viewer { ...F ...F __typename } } fragment F on User { id username }`,
			`{ viewer { ...F ...F ...G } } fragment F on User { id username } fragment G on User { id }`,
			`{ a: viewer { ...F } b: viewer { ...F } } fragment F on User { id username }`,
		} {
			r := ann.mustFail(t, "BAD_USER_INPUT", q, nil)
			if !strings.Contains(r.Errors[0].Message, "MaxQueryFields") {
				t.Errorf("%s: message %q does not name the field limit", q, r.Errors[0].Message)
			}
		}
	})
}

// TestLimitsQuerySelectionsBeforeValidation: a document is measured before
// gqlgen validates it, whose work grows with the square of the selections
// written (1,996 __typename fields within the token limit took 0.2 CPU-s).
// At MaxQuerySelections a document with an unknown field gets validation's
// answer; one selection more, the selection limit's, so validation never
// ran. The field and depth limits are checked there too.
func TestLimitsQuerySelectionsBeforeValidation(t *testing.T) {
	t.Parallel()
	const limit = 50
	sel := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQuerySelections = limit })
	sized := newTestServer(t, backendReal, func(c *settings.Settings) { c.MaxQueryFields = 6; c.MaxQueryDepth = 3 })
	// "{ viewer { nope ... } }": viewer, nope and n-2 __typename.
	doc := func(selections int) string {
		return "{ viewer { nope" + strings.Repeat(" __typename", selections-2) + " } }"
	}
	for _, c := range []struct {
		s            *testServer
		query, names string
	}{
		{sel, "{ nope }", "Cannot query field"},
		{sel, doc(limit), "Cannot query field"},
		{sel, doc(limit + 1), "MaxQuerySelections"},
		// Fragments count where they are written, once.
		{sized, "{ viewer { ...F ...F } nope } fragment F on User { id username }", "Cannot query field"},
		{sized, "{ viewer { ...F ...F ...F } nope } fragment F on User { id username }", "MaxQueryFields"},
		{sized, "{ viewer { followers { edges { node { id } } } } nope }", "MaxQueryDepth"},
	} {
		r := c.s.anon().mustFail(t, "BAD_USER_INPUT", c.query, nil)
		if !strings.Contains(r.Errors[0].Message, c.names) {
			t.Errorf("%.60s...: %q, want an error naming %q", c.query, r.Errors[0].Message, c.names)
		}
		if c.s.app.parsedDocuments.Contains(c.query) {
			t.Errorf("%.60s...: a refused document was kept", c.query)
		}
	}
	ann := sel.signUp(t, "ann")
	ann.mustDo(t, "{ viewer { __typename } }", nil, nil)
	if !sel.app.parsedDocuments.Contains("{ viewer { __typename } }") {
		t.Errorf("a document that passed was not kept")
	}
	// The attack, at the default limit.
	d := newTestServer(t, backendReal)
	r := d.anon().mustFail(t, "BAD_USER_INPUT", "{"+strings.Repeat(" __typename", 1996)+" }", nil)
	if !strings.Contains(r.Errors[0].Message, "MaxQuerySelections") {
		t.Errorf("1,996 fields: %q, want the selection limit", r.Errors[0].Message)
	}
}

// TestNestedFragmentsRefusedFast: issue 15's document, sixty fragments each
// spreading the one before twice (2^60 fields expanded, 605 tokens), is
// refused at once, signed out, before gqlgen's complexity walk would visit
// them all; and the server goes on answering.
func TestNestedFragmentsRefusedFast(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	body, _ := json.Marshal(map[string]any{"query": testDocument("nested-fragments-60.graphql")})
	client := &http.Client{Timeout: testenv.Scale(10 * time.Second)}
	for range 3 {
		start := time.Now()
		res, err := client.Post(s.URL+"/query", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("sixty nested fragments: %v after %s", err, time.Since(start))
		}
		var r response
		json.NewDecoder(res.Body).Decode(&r)
		res.Body.Close()
		took := time.Since(start)
		if r.Code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "MaxQueryFields") {
			t.Fatalf("sixty nested fragments: status %d, %+v", res.StatusCode, r.Errors)
		}
		// About 20 ms here, most of it validation; before the field limit
		// the request never ended (the client gave up after 10 s, the walk
		// went on).
		if took > testenv.Scale(time.Second) {
			t.Fatalf("sixty nested fragments refused after %s", took)
		}
		t.Logf("sixty nested fragments refused after %s", took)
	}
	s.anon().mustDo(t, `{ __typename }`, nil, nil)
}

// TestConfigMaxQueryFields: the setting is read from MAX_QUERY_FIELDS and
// -max-query-fields, and must be at least 1.
func TestConfigMaxQueryFields(t *testing.T) {
	t.Setenv("MAX_QUERY_FIELDS", "300")
	if c, err := parseConfig(nil); err != nil || c.MaxQueryFields != 300 {
		t.Fatalf("MAX_QUERY_FIELDS=300: %d, %v", c.MaxQueryFields, err)
	}
	if c, err := parseConfig([]string{"-max-query-fields", "1"}); err != nil || c.MaxQueryFields != 1 {
		t.Fatalf("-max-query-fields 1: %d, %v", c.MaxQueryFields, err)
	}
	if _, err := parseConfig([]string{"-max-query-fields", "0"}); err == nil || !strings.Contains(err.Error(), "max-query-fields") {
		t.Fatalf("-max-query-fields 0: %v, want an error naming it", err)
	}
}
