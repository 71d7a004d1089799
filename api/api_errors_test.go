package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	feedconfig "feedservice/feed/config"
	"feedservice/models"
)

// This file checks how the API fails: every error carries a contract code
// and a message fit for a person, and nothing about the implementation.
// It also covers the limits of posts, pages and nodes(), the node
// interface, and the server's plain HTTP endpoints.

// errsContractCodes are the values of extensions.code the contract allows.
var errsContractCodes = map[string]bool{
	"UNAUTHENTICATED": true, "FORBIDDEN": true, "NOT_FOUND": true,
	"BAD_USER_INPUT": true, "RATE_LIMITED": true, "INTERNAL_SERVER_ERROR": true,
}

// errsLeakWords betray the implementation; no error message may contain them.
var errsLeakWords = []string{"sql", "gorm", "redis", "goroutine", "panic", ".go:"}

// errsCheck fails t unless every error of r has a message, a contract
// code and no internal text, and the HTTP status is not a server error.
func errsCheck(t *testing.T, r response) {
	t.Helper()
	if r.Status >= 500 {
		t.Errorf("HTTP status %d for %+v", r.Status, r.Errors)
	}
	for _, e := range r.Errors {
		code, _ := e.Extensions["code"].(string)
		if !errsContractCodes[code] {
			t.Errorf("error %q has extensions.code %q, not one of the contract", e.Message, code)
		}
		if strings.TrimSpace(e.Message) == "" {
			t.Errorf("error with code %s has an empty message", code)
		}
		for _, w := range errsLeakWords {
			if strings.Contains(strings.ToLower(e.Message), w) {
				t.Errorf("error message %q leaks internal text %q", e.Message, w)
			}
		}
	}
}

// errsExpect runs a document as c, which must fail with code and
// well-formed errors.
func errsExpect(t *testing.T, c *client, code, query string, vars map[string]any) response {
	t.Helper()
	r := c.mustFail(t, code, query, vars)
	errsCheck(t, r)
	return r
}

// errsWithAuth returns a client of s that sends exactly this Authorization header.
func errsWithAuth(s *testServer, authorization string) *client {
	return &client{s: s, Header: http.Header{"Authorization": {authorization}}}
}

// errsRawID is a global id made by hand: the encoding the server uses, for ids
// the API never handed out (unknown, malformed, of an unknown kind).
func errsRawID(text string) string { return base64.RawURLEncoding.EncodeToString([]byte(text)) }

// errsUnknownUserID and errsUnknownPostID are well-formed ids of nothing.
var (
	errsUnknownUserID = models.NodeID(models.KindUser, 1<<50)
	errsUnknownPostID = models.NodeID(models.KindPost, 1<<50)
)

// Documents used across these tests.
const (
	errsCreatePostDoc = `mutation($b: String!) { createPost(input: {body: $b}) { post { id body } } }`
	errsFollowDoc     = `mutation($id: ID!) { follow(userId: $id) { user { id } } }`
	errsNodeDoc       = `query($id: ID!) { node(id: $id) { __typename id } }`
	errsNodesDoc      = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`
)

// errsPost publishes body as c and returns the post's id.
func errsPost(t *testing.T, c *client, body string) string {
	t.Helper()
	var out struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	c.mustDo(t, errsCreatePostDoc, map[string]any{"b": body}, &out)
	return out.CreatePost.Post.ID
}

// errsFollow makes c follow the user with id.
func errsFollow(t *testing.T, c *client, id string) {
	t.Helper()
	c.mustDo(t, errsFollowDoc, map[string]any{"id": id}, nil)
}

// errsIDMutations take one id argument $id of the kind named.
var errsIDMutations = []struct{ name, kind, doc string }{
	{"follow", models.KindUser, errsFollowDoc},
	{"unfollow", models.KindUser, `mutation($id: ID!) { unfollow(userId: $id) { user { id } } }`},
	{"removeFollower", models.KindUser, `mutation($id: ID!) { removeFollower(userId: $id) { user { id } } }`},
	{"block", models.KindUser, bmDoc("block")},
	{"unblock", models.KindUser, bmDoc("unblock")},
	{"mute", models.KindUser, bmDoc("mute")},
	{"unmute", models.KindUser, bmDoc("unmute")},
	{"repost", models.KindPost, `mutation($id: ID!) { repost(postId: $id) { post { id } } }`},
	{"deletePost", models.KindPost, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`},
}

// errsConnectionDocs are the paged lists of the viewer, each taking $first,
// $after, $last and $before and answering its edges' cursors.
var errsConnectionDocs = map[string]string{
	"feed":      `query($first: Int, $after: String, $last: Int, $before: String) { feed(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } }`,
	"timeline":  `query($first: Int, $after: String, $last: Int, $before: String) { viewer { timeline(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } } }`,
	"followers": `query($first: Int, $after: String, $last: Int, $before: String) { viewer { followers(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } } }`,
	"following": `query($first: Int, $after: String, $last: Int, $before: String) { viewer { following(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } } }`,
}

// errsFirstCursor reads the first cursor of the connection named, which must
// have an entry.
func errsFirstCursor(t *testing.T, c *client, connection string) string {
	t.Helper()
	r := c.do(t, errsConnectionDocs[connection], map[string]any{"first": 1})
	if len(r.Errors) > 0 {
		t.Fatalf("%s: %+v", connection, r.Errors)
	}
	// The edges sit at data.feed or data.viewer.<connection>.
	var out struct {
		Feed   *struct{ Edges []struct{ Cursor string } }
		Viewer map[string]struct{ Edges []struct{ Cursor string } }
	}
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatal(err)
	}
	edges := out.Viewer[connection].Edges
	if out.Feed != nil {
		edges = out.Feed.Edges
	}
	if len(edges) == 0 {
		t.Fatalf("%s is empty: %s", connection, r.Data)
	}
	return edges[0].Cursor
}

// errsAliceAndBob signs up alice and bob, who follow each other and have each
// posted once, so that every list of alice's holds an entry.
func errsAliceAndBob(t *testing.T, s *testServer) (alice, bob *client) {
	t.Helper()
	alice, bob = s.signUp(t, "alice"), s.signUp(t, "bob")
	errsFollow(t, alice, bob.ID)
	errsFollow(t, bob, alice.ID)
	errsPost(t, alice, "alice's post")
	errsPost(t, bob, "bob's post")
	return alice, bob
}

func TestErrorsConnectionArguments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, _ := errsAliceAndBob(t, s)
		cursors := map[string]string{}
		for name := range errsConnectionDocs {
			cursors[name] = errsFirstCursor(t, alice, name)
		}
		// A cursor of another list: each list gets the next one's.
		otherList := map[string]string{"feed": "timeline", "timeline": "followers", "followers": "following", "following": "feed"}
		for name, doc := range errsConnectionDocs {
			foreign := cursors[otherList[name]]
			bad := map[string]map[string]any{
				"first and last":         {"first": 1, "last": 1},
				"negative first":         {"first": -1},
				"negative last":          {"last": -1},
				"first over the maximum": {"first": feedconfig.MaxPageSize + 1},
				"last over the maximum":  {"last": feedconfig.MaxPageSize + 1},
				"malformed after":        {"after": "not a cursor"},
				"malformed before":       {"before": "bm9wZQ"},
				"after of another list":  {"after": foreign},
				"before of another list": {"before": foreign},
			}
			for what, vars := range bad {
				t.Run(name+"/"+what, func(t *testing.T) {
					errsExpect(t, alice, "BAD_USER_INPUT", doc, vars)
				})
			}
			t.Run(name+"/own cursor", func(t *testing.T) {
				alice.mustDo(t, doc, map[string]any{"first": 1, "after": cursors[name]}, nil)
			})
			t.Run(name+"/first 0", func(t *testing.T) {
				alice.mustDo(t, doc, map[string]any{"first": 0}, nil)
			})
		}
		t.Run("markFeedRead", func(t *testing.T) {
			doc := `mutation($c: String) { markFeedRead(upTo: $c) { unreadCount } }`
			errsExpect(t, alice, "BAD_USER_INPUT", doc, map[string]any{"c": "not a cursor"})
			errsExpect(t, alice, "BAD_USER_INPUT", doc, map[string]any{"c": cursors["timeline"]})
			alice.mustDo(t, doc, map[string]any{"c": cursors["feed"]}, nil)
		})
	})
}

func TestErrorsMalformedIDs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		malformed := map[string]string{
			"not base64":      "!!not an id!!",
			"base64 of junk":  "bm9wZQ",
			"empty":           "",
			"unknown kind":    errsRawID("Comment:1"),
			"non-numeric key": errsRawID("User:abc"),
			"zero key":        errsRawID("Post:0"),
		}
		for what, id := range malformed {
			for _, m := range errsIDMutations {
				t.Run(m.name+"/"+what, func(t *testing.T) {
					errsExpect(t, alice, "BAD_USER_INPUT", m.doc, map[string]any{"id": id})
				})
			}
			t.Run("node/"+what, func(t *testing.T) {
				errsExpect(t, alice, "BAD_USER_INPUT", errsNodeDoc, map[string]any{"id": id})
			})
			t.Run("nodes/"+what, func(t *testing.T) {
				errsExpect(t, alice, "BAD_USER_INPUT", errsNodesDoc, map[string]any{"ids": []string{alice.ID, id}})
			})
		}
	})
}

func TestErrorsIDOfTheWrongKind(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		postID := errsPost(t, bob, "hello")
		for _, m := range errsIDMutations {
			wrong := bob.ID // a User id where a Post id is expected
			if m.kind == models.KindUser {
				wrong = postID
			}
			t.Run(m.name, func(t *testing.T) {
				errsExpect(t, alice, "BAD_USER_INPUT", m.doc, map[string]any{"id": wrong})
			})
		}
	})
}

func TestErrorsNotFound(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		t.Run("follow an unknown user", func(t *testing.T) {
			errsExpect(t, alice, "NOT_FOUND", errsFollowDoc, map[string]any{"id": errsUnknownUserID})
			// and nothing was half done
			var out struct{ Viewer struct{ FollowingCount int } }
			alice.mustDo(t, `{ viewer { followingCount } }`, nil, &out)
			if out.Viewer.FollowingCount != 0 {
				t.Fatalf("followingCount = %d after following nobody", out.Viewer.FollowingCount)
			}
		})
		t.Run("repost an unknown post", func(t *testing.T) {
			errsExpect(t, alice, "NOT_FOUND", `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": errsUnknownPostID})
		})
		t.Run("delete an unknown post", func(t *testing.T) {
			errsExpect(t, alice, "NOT_FOUND", `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": errsUnknownPostID})
		})
		t.Run("repost a deleted post", func(t *testing.T) {
			id := errsPost(t, alice, "soon gone")
			alice.mustDo(t, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": id}, nil)
			errsExpect(t, alice, "NOT_FOUND", `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": id})
		})
	})
}

func TestErrorsDeletingAnotherUsersPostIsForbidden(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		id := errsPost(t, bob, "bob's words")
		errsExpect(t, alice, "FORBIDDEN", `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": id})
		var out struct{ Node *struct{ Body string } }
		alice.mustDo(t, `query($id: ID!) { node(id: $id) { ... on Post { body } } }`, map[string]any{"id": id}, &out)
		if out.Node == nil || out.Node.Body != "bob's words" {
			t.Fatalf("bob's post after alice's attempt to delete it: %+v", out.Node)
		}
	})
}

func TestErrorsSignedOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		bob := s.signUp(t, "bob")
		postID := errsPost(t, bob, "hello")
		anon := s.anon()
		docs := map[string]struct {
			doc  string
			vars map[string]any
		}{
			"feed":           {`{ feed { unreadCount } }`, nil},
			"createPost":     {errsCreatePostDoc, map[string]any{"b": "hi"}},
			"repost":         {`mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": postID}},
			"deletePost":     {`mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": postID}},
			"follow":         {errsFollowDoc, map[string]any{"id": bob.ID}},
			"unfollow":       {`mutation($id: ID!) { unfollow(userId: $id) { user { id } } }`, map[string]any{"id": bob.ID}},
			"removeFollower": {`mutation($id: ID!) { removeFollower(userId: $id) { user { id } } }`, map[string]any{"id": bob.ID}},
			"markFeedRead":   {`mutation { markFeedRead { unreadCount } }`, nil},
			"block":          {bmDoc("block"), map[string]any{"id": bob.ID}},
			"unblock":        {bmDoc("unblock"), map[string]any{"id": bob.ID}},
			"mute":           {bmDoc("mute"), map[string]any{"id": bob.ID}},
			"unmute":         {bmDoc("unmute"), map[string]any{"id": bob.ID}},
			"blockedUsers":   {`{ blockedUsers { totalCount } }`, nil},
			"mutedUsers":     {`{ mutedUsers { totalCount } }`, nil},
			"updateProfile":  {`mutation { updateProfile(input: {bio: "x"}) { id } }`, nil},
		}
		for name, d := range docs {
			t.Run(name, func(t *testing.T) {
				r := errsExpect(t, anon, "UNAUTHENTICATED", d.doc, d.vars)
				if string(r.Data) != "null" {
					t.Fatalf("data %s for a signed-out %s", r.Data, name)
				}
			})
		}
		var out struct {
			User struct{ PostCount, FollowerCount int }
		}
		anon.mustDo(t, `{ user(username: "bob") { postCount followerCount } }`, nil, &out)
		if out.User.PostCount != 1 || out.User.FollowerCount != 0 {
			t.Fatalf("bob after signed-out mutations: %+v", out.User)
		}
	})
}

func TestErrorsBadDocuments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		docs := map[string]struct {
			doc  string
			vars map[string]any
		}{
			"syntax error":            {`{ viewer { id `, nil},
			"unknown field":           {`{ viewer { id shoeSize } }`, nil},
			"unknown argument":        {`{ viewer { timeline(top: 3) { totalCount } } }`, nil},
			"wrong variable type":     {`query($n: Int) { viewer { timeline(first: $n) { totalCount } } }`, map[string]any{"n": "three"}},
			"wrong input field type":  {`mutation($p: String!) { signUp(input: {username: "carol", password: $p}) { token } }`, map[string]any{"p": map[string]any{"not": "a string"}}},
			"missing variable":        {`query($u: String!) { user(username: $u) { id } }`, nil},
			"null for a non-null arg": {`query($u: String!) { user(username: $u) { id } }`, map[string]any{"u": nil}},
			"empty document":          {``, nil},
		}
		for name, d := range docs {
			t.Run(name, func(t *testing.T) {
				errsExpect(t, alice, "BAD_USER_INPUT", d.doc, d.vars)
			})
		}
	})
}

// errsPostRaw sends body to /query as it is and returns the response.
func errsPostRaw(t *testing.T, s *testServer, body []byte) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Post(s.URL+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, raw
}

// errsDecode reads a GraphQL response from raw, failing t if it is not one.
func errsDecode(t *testing.T, status int, raw []byte) response {
	t.Helper()
	r := response{Status: status}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("response is not JSON (status %d): %.300s", status, raw)
	}
	return r
}

func TestErrorsMalformedRequestBody(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		res, raw := errsPostRaw(t, s, []byte(`{"query": "{ viewer { id } }"`))
		r := errsDecode(t, res.StatusCode, raw)
		errsCheck(t, r)
		if r.Code() != "BAD_USER_INPUT" {
			t.Fatalf("a body that is not JSON: status %d, errors %+v; want BAD_USER_INPUT", r.Status, r.Errors)
		}
	})
}

func TestLimitsPostBody(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		// "é" is 2 bytes and "🙂" 4: the limit counts code points, not bytes.
		for _, char := range []string{"a", "é", "🙂"} {
			t.Run(char, func(t *testing.T) {
				atLimit := strings.Repeat(char, feedconfig.MaxPostChars)
				var out struct {
					CreatePost struct{ Post struct{ Body string } }
				}
				alice.mustDo(t, errsCreatePostDoc, map[string]any{"b": atLimit}, &out)
				if out.CreatePost.Post.Body != atLimit {
					t.Fatalf("body of %d %q came back as %d bytes", feedconfig.MaxPostChars, char, len(out.CreatePost.Post.Body))
				}
				errsExpect(t, alice, "BAD_USER_INPUT", errsCreatePostDoc, map[string]any{"b": atLimit + char})
			})
		}
		t.Run("counted after trimming", func(t *testing.T) {
			atLimit := strings.Repeat("é", feedconfig.MaxPostChars)
			var out struct {
				CreatePost struct{ Post struct{ Body string } }
			}
			alice.mustDo(t, errsCreatePostDoc, map[string]any{"b": " \n\t" + atLimit + "  \n"}, &out)
			if out.CreatePost.Post.Body != atLimit {
				t.Fatalf("the body was not trimmed: %q...", out.CreatePost.Post.Body[:10])
			}
		})
		for what, body := range map[string]string{"empty": "", "whitespace only": " \n\t  \r\n "} {
			t.Run(what, func(t *testing.T) {
				errsExpect(t, alice, "BAD_USER_INPUT", errsCreatePostDoc, map[string]any{"b": body})
			})
		}
		t.Run("one character", func(t *testing.T) {
			alice.mustDo(t, errsCreatePostDoc, map[string]any{"b": "x"}, nil)
		})
	})
}

// TestLimitsPostNeedsVisibleCharacter: a post of only invisible characters
// (zero-width, format, variation selectors, fillers, white space) is
// refused with BAD_USER_INPUT and nothing is stored; one visible character
// beside them, an emoji sequence built of joiners and selectors, a
// combining mark and right-to-left text with its marks pass.
func TestLimitsPostNeedsVisibleCharacter(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		refused := map[string]string{
			"ZWSP U+200B": "\u200b", "ZWNJ U+200C": "\u200c", "ZWJ U+200D": "\u200d", "word joiner U+2060": "\u2060",
			"BOM U+FEFF": "\ufeff", "VS16 U+FE0F": "\ufe0f", "VS1 U+FE00": "\ufe00", "VS17 U+E0100": "\U000E0100",
			"soft hyphen U+00AD": "\u00ad", "LRM U+200E": "\u200e", "RLO U+202E": "\u202e", "Hangul filler U+3164": "\u3164",
			"braille blank U+2800": "\u2800", "tag space U+E0020": "\U000E0020", "ideographic space between ZWSPs": "\u200b\u3000\u200b",
			"a mix with white space": " \u200b\n\u200d\t\ufeff\u00a0\u2060\ufe0f ",
			"many":                   strings.Repeat("\u200b\u200c", 100),
		}
		for name, body := range refused {
			t.Run("refused "+name, func(t *testing.T) {
				r := errsExpect(t, alice, "BAD_USER_INPUT", errsCreatePostDoc, map[string]any{"b": body})
				if !strings.Contains(r.Errors[0].Message, "visible") {
					t.Fatalf("refused with %q, want a message naming the visible character it lacks", r.Errors[0].Message)
				}
			})
		}
		var out struct {
			Viewer struct{ Timeline struct{ TotalCount int } }
		}
		alice.mustDo(t, `{ viewer { timeline(first: 1) { totalCount } } }`, nil, &out)
		if n := out.Viewer.Timeline.TotalCount; n != 0 {
			t.Fatalf("refused posts were stored: %d posts", n)
		}
		for name, body := range map[string]string{
			"a dot among invisibles": "\u200b.\u200b", "heart with VS16": "\u2764\ufe0f", "family by ZWJ": "\U0001F469\u200d\U0001F467",
			"combining acute alone": "\u0301", "Hebrew with RLM": "\u05e9\u200f", "Hangul letter": "\u314f",
		} {
			t.Run("taken "+name, func(t *testing.T) {
				var out struct {
					CreatePost struct{ Post struct{ Body string } }
				}
				alice.mustDo(t, errsCreatePostDoc, map[string]any{"b": body}, &out)
				if out.CreatePost.Post.Body != body {
					t.Fatalf("stored % x, sent % x", out.CreatePost.Post.Body, body)
				}
			})
		}
	})
}

func TestLimitsPageSize(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, _ := errsAliceAndBob(t, s)
		for name, doc := range errsConnectionDocs {
			for _, arg := range []string{"first", "last"} {
				t.Run(name+"/"+arg, func(t *testing.T) {
					alice.mustDo(t, doc, map[string]any{arg: feedconfig.MaxPageSize}, nil)
					errsExpect(t, alice, "BAD_USER_INPUT", doc, map[string]any{arg: feedconfig.MaxPageSize + 1})
				})
			}
		}
	})
}

func TestLimitsNodesPerRequest(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		// Distinct ids (nodes refuses a repeated one), alice's last; the
		// others name no one.
		ids := make([]string, feedconfig.MaxNodesPerRequest)
		for i := range ids {
			ids[i] = models.NodeID(models.KindPost, int64(1e15+i))
		}
		ids[len(ids)-1] = alice.ID
		var out struct{ Nodes []*struct{ ID string } }
		alice.mustDo(t, errsNodesDoc, map[string]any{"ids": ids}, &out)
		if len(out.Nodes) != feedconfig.MaxNodesPerRequest || out.Nodes[len(ids)-1] == nil || out.Nodes[len(ids)-1].ID != alice.ID {
			t.Fatalf("nodes of %d ids: %d answers", len(ids), len(out.Nodes))
		}
		errsExpect(t, alice, "BAD_USER_INPUT", errsNodesDoc, map[string]any{"ids": append(ids, models.NodeID(models.KindPost, 1))})
	})
}

func TestNodeResolvesEveryKind(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		postID := errsPost(t, alice, "hello")
		var out struct {
			User, Post struct {
				Typename string `json:"__typename"`
				ID       string
				Username string
				Body     string
			}
		}
		alice.mustDo(t, `query($u: ID!, $p: ID!) {
			user: node(id: $u) { __typename id ... on User { username } }
			post: node(id: $p) { __typename id ... on Post { body } }
		}`, map[string]any{"u": alice.ID, "p": postID}, &out)
		if out.User.Typename != "User" || out.User.ID != alice.ID || out.User.Username != "alice" {
			t.Errorf("node(user id) = %+v", out.User)
		}
		if out.Post.Typename != "Post" || out.Post.ID != postID || out.Post.Body != "hello" {
			t.Errorf("node(post id) = %+v", out.Post)
		}
	})
}

func TestNodeUnknownIDsAreNull(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		for _, id := range []string{errsUnknownUserID, errsUnknownPostID} {
			var out struct{ Node *struct{ ID string } }
			alice.mustDo(t, errsNodeDoc, map[string]any{"id": id}, &out)
			if out.Node != nil {
				t.Errorf("node(%s) = %+v, want null", id, out.Node)
			}
		}
	})
}

func TestNodesKeepOrderWithNullForUnknown(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice, bob := s.signUp(t, "alice"), s.signUp(t, "bob")
		p1, p2 := errsPost(t, bob, "one"), errsPost(t, alice, "two")
		// Each id once: nodes refuses one given twice.
		ids := []string{p2, errsUnknownUserID, bob.ID, p1, errsUnknownPostID, alice.ID}
		var out struct {
			Nodes []*struct {
				Typename string `json:"__typename"`
				ID       string
			}
		}
		s.anon().mustDo(t, errsNodesDoc, map[string]any{"ids": ids}, &out)
		if len(out.Nodes) != len(ids) {
			t.Fatalf("%d answers for %d ids", len(out.Nodes), len(ids))
		}
		want := []string{"Post", "", "User", "Post", "", "User"}
		for i, n := range out.Nodes {
			switch {
			case want[i] == "" && n != nil:
				t.Errorf("nodes[%d] = %+v, want null for an unknown id", i, n)
			case want[i] != "" && (n == nil || n.ID != ids[i] || n.Typename != want[i]):
				t.Errorf("nodes[%d] = %+v, want the %s %s", i, n, want[i], ids[i])
			}
		}
	})
}

func TestNodeOfADeletedPostIsNull(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		gone, kept := errsPost(t, alice, "soon gone"), errsPost(t, alice, "kept")
		alice.mustDo(t, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": gone}, nil)
		var one struct{ Node *struct{ ID string } }
		alice.mustDo(t, errsNodeDoc, map[string]any{"id": gone}, &one)
		if one.Node != nil {
			t.Errorf("node(deleted post) = %+v, want null", one.Node)
		}
		var many struct{ Nodes []*struct{ ID string } }
		alice.mustDo(t, errsNodesDoc, map[string]any{"ids": []string{gone, kept}}, &many)
		if len(many.Nodes) != 2 || many.Nodes[0] != nil || many.Nodes[1] == nil || many.Nodes[1].ID != kept {
			b, _ := json.Marshal(many.Nodes)
			t.Errorf("nodes(deleted, kept) = %s", b)
		}
	})
}

func TestEndpointsHealthChecks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		for _, path := range []string{"/healthz", "/readyz"} {
			res, body := errsGet(t, s.URL+path, nil)
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s: status %d: %s", path, res.StatusCode, body)
			}
		}
	})
}

func TestEndpointsGraphiQL(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	res, body := errsGet(t, s.URL+"/", nil)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(strings.ToLower(string(body)), "graphiql") || !strings.Contains(string(body), "/query") {
		t.Fatalf("GET / is not GraphiQL on /query: %.300s", body)
	}
}

func TestEndpointsRequestID(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	for _, path := range []string{"/healthz", "/query?query=%7Bviewer%7Bid%7D%7D"} {
		first, _ := errsGet(t, s.URL+path, nil)
		second, _ := errsGet(t, s.URL+path, nil)
		a, b := first.Header.Get("X-Request-ID"), second.Header.Get("X-Request-ID")
		if a == "" || a == b {
			t.Errorf("GET %s: X-Request-ID %q then %q, want a fresh id each time", path, a, b)
		}
		echoed, _ := errsGet(t, s.URL+path, http.Header{"X-Request-ID": {"client-chosen-42"}})
		if got := echoed.Header.Get("X-Request-ID"); got != "client-chosen-42" {
			t.Errorf("GET %s: X-Request-ID %q, want the client's own echoed", path, got)
		}
	}
	// GraphQL over POST too.
	body, _ := json.Marshal(map[string]any{"query": "{ viewer { id } }"})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-ID", "client-chosen-43")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("X-Request-ID"); got != "client-chosen-43" {
		t.Errorf("POST /query: X-Request-ID %q, want the client's own echoed", got)
	}
}

// errsGet fetches url with extra headers and returns the response and its body.
func errsGet(t *testing.T, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// errsSignUpBody is a JSON request signing up username, padded with spaces
// inside the document to exactly size bytes.
func errsSignUpBody(t *testing.T, username string, size int) []byte {
	t.Helper()
	doc := `mutation { signUp(input: {username: "` + username + `", password: "long-enough-password"}) { token } }`
	body, _ := json.Marshal(map[string]any{"query": doc})
	pad := size - len(body)
	if pad < 0 {
		t.Fatalf("size %d is under the unpadded body's %d bytes", size, len(body))
	}
	body, _ = json.Marshal(map[string]any{"query": doc + strings.Repeat(" ", pad)})
	if len(body) != size {
		t.Fatalf("padded body is %d bytes, want %d", len(body), size)
	}
	return body
}

// errsUserExists tells whether s has a user of that name.
func errsUserExists(t *testing.T, s *testServer, username string) bool {
	t.Helper()
	var out struct{ User *struct{ ID string } }
	s.anon().mustDo(t, `query($u: String!) { user(username: $u) { id } }`, map[string]any{"u": username}, &out)
	return out.User != nil
}

func TestEndpointsRequestBodyLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		t.Run("at the limit", func(t *testing.T) {
			res, raw := errsPostRaw(t, s, errsSignUpBody(t, "justfits", maxRequestBodyBytes))
			r := errsDecode(t, res.StatusCode, raw)
			if res.StatusCode != http.StatusOK || len(r.Errors) > 0 || !errsUserExists(t, s, "justfits") {
				t.Fatalf("a body of maxRequestBodyBytes: status %d, errors %+v", res.StatusCode, r.Errors)
			}
		})
		t.Run("one byte over", func(t *testing.T) {
			res, raw := errsPostRaw(t, s, errsSignUpBody(t, "toobig", maxRequestBodyBytes+1))
			r := errsDecode(t, res.StatusCode, raw)
			errsCheck(t, r)
			if len(r.Errors) == 0 || (len(r.Data) != 0 && string(r.Data) != "null") {
				t.Errorf("an oversized body: status %d, data %s, errors %+v", res.StatusCode, r.Data, r.Errors)
			}
			if errsUserExists(t, s, "toobig") {
				t.Errorf("the oversized request was executed")
			}
			// The refusal is the client's fault: not an internal error.
			if r.Code() != "BAD_USER_INPUT" {
				t.Errorf("an oversized body: status %d, errors %+v; want BAD_USER_INPUT", res.StatusCode, r.Errors)
			}
		})
		t.Run("the server lives on", func(t *testing.T) {
			s.signUp(t, "afterwards")
		})
	})
}
