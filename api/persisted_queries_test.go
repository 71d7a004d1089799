package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"feedservice/api/settings"
)

// apqHash is the SHA-256 of doc, as Apollo's client sends it.
func apqHash(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

// TestPersistedQueriesKeepOnlyCheckedDocuments: a document sent with its
// hash is kept only once it parsed, validated and passed the limits, so a
// comment, an invalid document or one over the depth limit is never served
// by its hash (the old extension kept each before parsing it).
func TestPersistedQueriesKeepOnlyCheckedDocuments(t *testing.T) {
	t.Parallel()
	// 1 + 3 x 7 = 22 fields deep, over the default 20; each level costs
	// little (first: 1), so the complexity limit does not refuse it first.
	deep := "{ viewer {" + strings.Repeat(" following(first: 1) { edges { node {", 7) + " id" + strings.Repeat(" } } }", 7) + " } }"
	refused := map[string]string{
		"comment only":   "# " + strings.Repeat("x", 4000),
		"does not parse": "{ viewer { id }",
		"invalid":        "{ noSuchField }",
		"too deep":       deep,
	}
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann := s.signUp(t, "ann")
		for name, doc := range refused {
			r, _ := limitsDo(t, s, ann.Token, nil, doc, nil, limitsPersisted(apqHash(doc)))
			if len(r.Errors) == 0 {
				t.Fatalf("%s: no error (%s)", name, r.Data)
			}
			if name == "too deep" && !strings.Contains(r.Errors[0].Message, "MaxQueryDepth") {
				t.Fatalf("%s: refused for another reason: %+v", name, r.Errors)
			}
			r, _ = limitsDo(t, s, ann.Token, nil, "", nil, limitsPersisted(apqHash(doc)))
			if r.Code() != "PERSISTED_QUERY_NOT_FOUND" {
				t.Errorf("%s: kept, its hash answers %+v", name, r.Errors)
			}
		}
	})
}

// TestPersistedQueriesCaps: many distinct documents leave only the most
// recently sent within PERSISTED_QUERY_MAX_ENTRIES, and within
// PERSISTED_QUERY_MAX_BYTES, on Redis and on the embedded default's LRU.
func TestPersistedQueriesCaps(t *testing.T) {
	t.Parallel()
	const sent, keep = 60, 5
	doc := func(i int) string { return fmt.Sprintf("query Q%04d { __typename }", i) }
	for _, tc := range []struct {
		name   string
		change func(*settings.Settings)
	}{
		{"entries", func(c *settings.Settings) { c.PersistedQueryMaxEntries = keep }},
		{"bytes", func(c *settings.Settings) { c.PersistedQueryMaxBytes = keep * len(doc(0)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, backend := range backends() {
				t.Run(backend, func(t *testing.T) {
					s := newTestServer(t, backend, tc.change)
					ann := s.signUp(t, "ann")
					for i := range sent {
						if r, _ := limitsDo(t, s, ann.Token, nil, doc(i), nil, limitsPersisted(apqHash(doc(i)))); len(r.Errors) > 0 {
							t.Fatalf("document %d: %+v", i, r.Errors)
						}
					}
					for i := range sent {
						r, _ := limitsDo(t, s, ann.Token, nil, "", nil, limitsPersisted(apqHash(doc(i))))
						found := r.Code() != "PERSISTED_QUERY_NOT_FOUND"
						if want := i >= sent-keep; found != want {
							t.Errorf("document %d of %d: kept %v, want %v (%+v)", i, sent, found, want, r.Errors)
						}
					}
				})
			}
		})
	}
}
