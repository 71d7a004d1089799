package api

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"feedservice/internal/gqlclient"
)

// apiPage is the client developers' guide whose GraphQL blocks
// TestDocsAPIExamplesRunAsWritten runs.
const apiPage = "../docs/api.md"

// docBlock is one ```graphql block of the guide.
type docBlock struct {
	line int // of its opening fence, for messages
	text string
}

// graphqlBlocks returns the ```graphql blocks of a Markdown page.
func graphqlBlocks(page string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	var body []string
	for i, l := range strings.Split(page, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```graphql":
			cur, body = &docBlock{line: i + 1}, nil
		case cur != nil && strings.TrimSpace(l) == "```":
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, l)
		}
	}
	return blocks
}

// expectMarker is how a block says that its operation is refused on
// purpose ("# expect: CODE" on a line of its own): the example shows an
// error, and the test checks that it is that one.
var expectMarker = regexp.MustCompile(`(?m)^\s*#\s*expect:\s*([A-Z_]+)\s*$`)

// TestDocsAPIExamplesRunAsWritten runs every GraphQL block of docs/api.md
// against a fresh server, in the order of the page, as a reader pasting
// it into GraphiQL would: the whole block is the document, each named
// operation of it is run by its name (GraphiQL's play button asks which),
// and a block that holds an anonymous operation beside another cannot be
// run at all. Variables come from docVariables, the values the page's
// prose tells the reader to copy from earlier answers. Every operation
// must answer without an error, unless its block says "# expect: CODE".
// So the page's "each block was run against a fresh server" holds by
// construction.
func TestDocsAPIExamplesRunAsWritten(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(apiPage)
	if err != nil {
		t.Fatal(err)
	}
	blocks := graphqlBlocks(string(page))
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```graphql block", apiPage)
	}

	s := newTestServer(t, backendReal)
	// The others the page's examples act on: bob (followed, reposted,
	// blocked and muted in turn), carol (a user ada does not follow,
	// for home's dismissals) and dan (whom ada follows and who posts while
	// the subscriptions listen).
	bob, carol, dan := s.signUp(t, "bob"), s.signUp(t, "carol"), s.signUp(t, "dan")
	var post struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	bob.mustDo(t, `mutation { createPost(input: {body: "bob's first"}) { post { id } } }`, nil, &post)
	docVariables := map[string]any{
		"userId": bob.ID,
		"postId": post.CreatePost.Post.ID,
		"first":  10,
		"after":  nil,
		"upTo":   nil,
		"id":     carol.ID,
	}

	var ada *client // signed in by the page's own signUp
	for _, b := range blocks {
		doc, perr := parser.ParseQuery(&ast.Source{Name: "api.md", Input: b.text})
		if perr != nil {
			t.Errorf("%s:%d: the block does not parse: %v", apiPage, b.line, perr)
			continue
		}
		if len(doc.Operations) > 1 {
			for _, op := range doc.Operations {
				if op.Name == "" {
					t.Errorf("%s:%d: an anonymous operation beside %d others: no client can run it (name every operation of the block)",
						apiPage, b.line, len(doc.Operations)-1)
					break
				}
			}
		}
		want := ""
		if m := expectMarker.FindStringSubmatch(b.text); m != nil {
			want = m[1]
		}
		for _, op := range doc.Operations {
			vars := map[string]any{}
			for _, v := range op.VariableDefinitions {
				val, ok := docVariables[v.Variable]
				if !ok {
					t.Fatalf("%s:%d: no value for $%s: add one to docVariables, as the page tells the reader where to find it",
						apiPage, b.line, v.Variable)
				}
				vars[v.Variable] = val
			}
			where := apiPage + ":" + strconv.Itoa(b.line) + " " + string(op.Operation) + " " + op.Name
			t.Logf("running %s", where)
			if op.Operation == ast.Subscription {
				if ada == nil {
					t.Fatalf("%s: a subscription before the page signs up", where)
				}
				runDocSubscription(t, s, ada, dan, where, b.text)
				continue
			}
			c := s.anon()
			if ada != nil {
				c = ada
			}
			r := runDocOperation(t, c, b.text, op.Name, vars)
			switch {
			case want != "" && r.Code() != want:
				t.Errorf("%s: want the error %s the block shows, got status %d %+v", where, want, r.Status, r.Errors)
			case want == "" && (r.Status != 200 || len(r.Errors) > 0):
				t.Errorf("%s: status %d, errors %+v", where, r.Status, r.Errors)
			case want != "" && r.Status >= 500:
				t.Errorf("%s: status %d, errors %+v", where, r.Status, r.Errors)
			}
			// The page signs up (then logs in and out) as ada: later
			// blocks run with her newest token, and after logOut with a
			// new one, as a reader would log in again.
			var data struct {
				SignUp, LogIn *struct{ Token string }
				CreateList    *struct{ List struct{ ID string } }
			}
			json.Unmarshal(r.Data, &data)
			switch {
			case data.CreateList != nil:
				// The page's later list examples name the list it made.
				docVariables["listId"] = data.CreateList.List.ID
			case data.SignUp != nil:
				ada = &client{s: s, Token: data.SignUp.Token, Name: "ada"}
			case data.LogIn != nil:
				ada.Token = data.LogIn.Token
			case logsOut(op):
				ada = relogIn(t, s)
			}
		}
		if ada != nil && strings.Contains(b.text, "mutation Protect") {
			// Once ada is protected, carol asks to follow her: the page's
			// requests act on carol's.
			var me struct{ Viewer struct{ ID string } }
			ada.mustDo(t, `{ viewer { id } }`, nil, &me)
			carol.mustDo(t, `mutation($id: ID!) { follow(userId: $id) { user { viewerHasRequestedFollow } } }`, map[string]any{"id": me.Viewer.ID}, nil)
		}
		if ada != nil && strings.Contains(b.text, "mutation Follow") && !following(t, ada, dan) {
			// After the page's follow (of bob), ada follows dan too, so
			// that dan's post reaches her subscriptions.
			ada.mustDo(t, `mutation($id: ID!) { follow(userId: $id) { user { id } } }`, map[string]any{"id": dan.ID}, nil)
		}
	}
}

// runDocOperation posts the block as the document, naming the operation
// when it has a name.
func runDocOperation(t *testing.T, c *client, doc, name string, vars map[string]any) response {
	t.Helper()
	c.s.settle(t)
	body := map[string]any{"query": doc, "variables": vars}
	if name != "" {
		body["operationName"] = name
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	gc := gqlclient.Client{URL: c.s.URL}
	r, err := gc.PostBody(context.Background(), c.Token, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	return r
}

// runDocSubscription subscribes as viewer with the block, has poster (whom
// the viewer follows) post, and wants the first message to be a "next"
// without errors: the current count for unreadCount, the new entry for
// feedItemAdded.
func runDocSubscription(t *testing.T, s *testServer, viewer, poster *client, where, doc string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock, err := gqlclient.Subscribe(ctx, s.URL, viewer.Token, doc, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	defer sock.Close()
	// The subscription is registered once the server has answered
	// connection_init; a post made before it would be missed.
	if m, err := sock.Next(); err != nil || m.Type != "connection_ack" {
		t.Fatalf("%s: want connection_ack, got %+v, %v", where, m, err)
	}
	poster.mustDo(t, `mutation { createPost(input: {body: "for the listeners"}) { post { id } } }`, nil, nil)
	go func() { <-ctx.Done(); sock.Close() }()
	for {
		m, err := sock.Next()
		if err != nil {
			t.Errorf("%s: no message: %v", where, err)
			return
		}
		if m.Type == "next" {
			if err := m.Err(); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			return
		}
		if m.Type == "error" || m.Type == "complete" {
			t.Errorf("%s: %s %s", where, m.Type, m.Payload)
			return
		}
	}
}

// logsOut says whether op asks for logOut: the token it ran with is
// revoked, answered or not.
func logsOut(op *ast.OperationDefinition) bool {
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Name == "logOut" {
			return true
		}
	}
	return false
}

// relogIn signs ada in again after the page's logOut.
func relogIn(t *testing.T, s *testServer) *client {
	t.Helper()
	var out struct{ LogIn struct{ Token string } }
	s.anon().mustDo(t, `mutation { logIn(input: {username: "ada", password: "correct-horse-battery"}) { token } }`, nil, &out)
	return &client{s: s, Token: out.LogIn.Token, Name: "ada"}
}

// following says whether c follows other.
func following(t *testing.T, c, other *client) bool {
	t.Helper()
	var out struct {
		Node struct{ ViewerIsFollowing bool }
	}
	c.mustDo(t, `query($id: ID!) { node(id: $id) { ... on User { viewerIsFollowing } } }`, map[string]any{"id": other.ID}, &out)
	return out.Node.ViewerIsFollowing
}
