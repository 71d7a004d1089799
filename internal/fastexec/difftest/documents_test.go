package difftest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gqlparser "github.com/vektah/gqlparser/v2"
	gqlast "github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// A document is one operation to run on both executors.
type document struct {
	source    string // where it came from, for the failure message
	query     string
	operation string         // the operation's name; "" for the only one
	variables map[string]any // nil: made up from the operation's variable definitions
}

// The places the project's documents are in, relative to the repository's
// root: the test suites' Go sources (string literals, and the "query" of
// JSON request bodies), the fuzz corpus, the web app's and GraphiQL's
// documents.
var (
	goSourceDirs  = []string{"api", "bench", "soak", "internal"}
	fuzzDirs      = []string{"api/testdata/fuzz"}
	documentTrees = []string{"web/src", "playground/src"}
)

// repoRoot is the repository's root, from this package's directory.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// corpus is every valid query and mutation operation the project's
// sources hold (each once), and how many each place holds (counting one
// document in several places in each).
func corpus(t *testing.T, schema *gqlast.Schema) ([]document, map[string]int) {
	root := repoRoot(t)
	found := map[string]int{}
	seen := map[string]bool{}
	var docs []document
	add := func(source, query string, variables map[string]any, operationName string) {
		doc := validDocument(schema, query)
		if doc == nil {
			return
		}
		for _, op := range doc.Operations {
			if operationName != "" && op.Name != operationName {
				continue
			}
			if op.Operation == gqlast.Subscription {
				found["subscriptions (not run: gqlgen's executor on both sides)"]++
				continue
			}
			if defers(doc, op, op.SelectionSet, variables) {
				found["deferring (not run: the server refuses @defer before either executor)"]++
				continue
			}
			found[strings.SplitN(source, "/", 2)[0]]++
			key := query + "\x00" + op.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			docs = append(docs, document{source: source, query: query, operation: op.Name, variables: variables})
		}
	}
	candidate := func(source, s string) {
		if q, vars, op, ok := requestBody(s); ok {
			add(source, q, vars, op)
			return
		}
		if strings.Contains(s, "{") {
			add(source, s, nil, "")
		}
	}
	for i, q := range handwritten {
		add("handwritten/"+strconv.Itoa(i), q, nil, "")
	}
	for _, dir := range goSourceDirs {
		walk(t, filepath.Join(root, dir), func(path string) {
			if !strings.HasSuffix(path, ".go") || strings.Contains(path, filepath.Join("internal", "fastexec")) {
				return
			}
			for _, s := range goStrings(t, path) {
				candidate(rel(root, path), s)
			}
		})
	}
	for _, dir := range fuzzDirs {
		walk(t, filepath.Join(root, dir), func(path string) {
			for _, s := range fuzzInputs(t, path) {
				candidate(rel(root, path), s)
			}
		})
	}
	for _, dir := range documentTrees {
		pieces := map[string]string{} // file#n -> text
		walk(t, filepath.Join(root, dir), func(path string) {
			for i, text := range clientDocuments(t, path) {
				pieces[rel(root, path)+"#"+strconv.Itoa(i)] = text
			}
		})
		for _, source := range slices.Sorted(maps.Keys(pieces)) {
			add(source, withFragments(pieces[source], pieces), nil, "")
		}
	}
	return docs, found
}

// handwritten documents reach what the others may miss: introspection
// (which the fast path leaves to gqlgen's field functions), a document
// that could use @defer (all of it left to gqlgen), every kind of home
// entry and node, fields collected twice under one alias, and @skip and
// @include on fragments.
var handwritten = []string{
	`{ __schema { queryType { name } types { name kind fields { name args { name type { name kind ofType { name } } } type { name kind ofType { name kind } } } } } }`,
	`{ __type(name: "User") { name fields { name isDeprecated } } t: __typename viewer { __typename } }`,
	`query($d: Boolean = false) { viewer { id ... @defer(if: $d) { username } } }`,
	`{ home(first: 10) { edges { cursor feedCursor node { __typename ... on FeedItem { addedAt post { id body } reposters { id } } ... on SuggestedUser { followedByCount user { id username } } ... on PromotedPost { post { id author { id } } } } } pageInfo { hasNextPage endCursor } unreadCount } }`,
	`{ nodes(ids: ["VXNlcjox", "VXNlcjo5OQ", "UG9zdDo1", "UG9zdDox", "bad"]) { __typename id ... on User { username } ... on Post { body repostOf { id } } } }`,
	`{ nodes(ids: ["VXNlcjox", "VXNlcjo5OQ", "UG9zdDo1", "UG9zdDox"]) { id ... on Post { author { id } } } }`,
	`{ node(id: "VXNlcjo5OQ") { id } a: node(id: "UG9zdDo1") { id ... on Post { createdAt } } }`,
	`{ viewer { id ... on Node { id } ... on User { id username } ...U } } fragment U on User { username id }`,
	`query($s: Boolean!, $i: Boolean!) { feed(first: 12) { edges { ...E @skip(if: $s) ... @include(if: $i) { cursor } } } } fragment E on FeedEdge { cursor node { addedAt post { id } } }`,
	`{ feed(first: 12) { edges { node { post { author { viewerIsFollowing followsViewer timeline(first: 2) { edges { node { id } } totalCount } } } reposters { followers(first: 2) { edges { node { id } followedAt } } } } } } }`,
	`mutation { a: follow(userId: "VXNlcjoy") { user { id } viewer { id followingCount } } b: unfollow(userId: "VXNlcjoy") { user { id } } signUp(input: {username: "x\ty", password: "p"}) { token user { username } } }`,
	`mutation { promotePost(postId: "UG9zdDoz") { post { id } promoted } dismissHomeEntry(id: "VXNlcjoy") { dismissedId } markFeedRead { unreadCount } }`,
}

// validDocument is query parsed, when it is valid against schema.
func validDocument(schema *gqlast.Schema, query string) *gqlast.QueryDocument {
	doc, errs := gqlparser.LoadQuery(schema, query)
	if len(errs) > 0 {
		return nil
	}
	return doc
}

// requestBody reads a GraphQL request body: its document, variables and
// operation name.
func requestBody(s string) (query string, variables map[string]any, operation string, ok bool) {
	var body struct {
		Query         *string        `json:"query"`
		Variables     map[string]any `json:"variables"`
		OperationName string         `json:"operationName"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if dec.Decode(&body) != nil || body.Query == nil {
		return "", nil, "", false
	}
	return *body.Query, body.Variables, body.OperationName, true
}

func walk(t *testing.T, dir string, visit func(path string)) {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			visit(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// goStrings are a Go file's string constants: its literals, and sums of
// literals.
func goStrings(t *testing.T, path string) []string {
	f, err := goparser.ParseFile(token.NewFileSet(), path, nil, goparser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if s, ok := stringConstant(e); ok {
				out = append(out, s)
				return false
			}
		}
		return true
	})
	return out
}

func stringConstant(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return stringConstant(e.X)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := stringConstant(e.X)
		y, ok2 := stringConstant(e.Y)
		return x + y, ok1 && ok2
	}
	return "", false
}

// fuzzInputs are the string and []byte values of a Go fuzz corpus file.
func fuzzInputs(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, prefix := range []string{"string(", "[]byte("} {
			if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, ")") {
				if s, err := strconv.Unquote(line[len(prefix) : len(line)-1]); err == nil {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

var (
	gqlTemplate   = regexp.MustCompile("(?s)gql`(.*?)`")
	interpolation = regexp.MustCompile(`\$\{[^}]*\}`)
	fragmentName  = regexp.MustCompile(`\.\.\.\s*([_A-Za-z][_0-9A-Za-z]*)`)
)

// clientDocuments are the GraphQL documents of a client source: the gql
// templates of a TypeScript file (their interpolations dropped: the
// fragments they stand for are found by name), or a .graphql file.
func clientDocuments(t *testing.T, path string) []string {
	ext := filepath.Ext(path)
	if ext != ".ts" && ext != ".tsx" && ext != ".js" && ext != ".jsx" && ext != ".graphql" && ext != ".gql" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if ext == ".graphql" || ext == ".gql" {
		return []string{string(data)}
	}
	var out []string
	for _, m := range gqlTemplate.FindAllStringSubmatch(string(data), -1) {
		out = append(out, interpolation.ReplaceAllString(m[1], ""))
	}
	return out
}

// withFragments is doc with the definitions of the fragments it spreads
// and does not define, taken from the other pieces of the same client.
func withFragments(doc string, pieces map[string]string) string {
	defs := map[string]string{}
	for _, source := range slices.Sorted(maps.Keys(pieces)) {
		parsed, err := parser.ParseQuery(&gqlast.Source{Input: pieces[source]})
		if err != nil {
			continue
		}
		for _, f := range parsed.Fragments {
			if _, ok := defs[f.Name]; !ok {
				defs[f.Name] = f.Position.Src.Input[f.Position.Start:fragmentEnd(f.Position.Src.Input, f.Position.Start)]
			}
		}
	}
	out := doc
	for changed := true; changed; {
		changed = false
		for _, m := range fragmentName.FindAllStringSubmatch(out, -1) {
			name := m[1]
			if name == "on" || strings.Contains(out, "fragment "+name+" ") {
				continue
			}
			if def, ok := defs[name]; ok {
				out += "\n" + def
				changed = true
			}
		}
	}
	return out
}

// fragmentEnd is the end of the fragment definition starting at start:
// after its closing brace.
func fragmentEnd(s string, start int) int {
	depth := 0
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// defers says whether the operation would defer a fragment: a @defer
// whose if is not false, in set or the fragments it spreads. The server
// refuses such an operation before either executor runs it.
func defers(doc *gqlast.QueryDocument, op *gqlast.OperationDefinition, set gqlast.SelectionSet, variables map[string]any) bool {
	deferring := func(dirs gqlast.DirectiveList) bool {
		d := dirs.ForName("defer")
		if d == nil {
			return false
		}
		arg := d.Arguments.ForName("if")
		if arg == nil {
			return true
		}
		if arg.Value.Kind == gqlast.Variable {
			if v, ok := variables[arg.Value.Raw]; ok {
				return v != false
			}
			if def := op.VariableDefinitions.ForName(arg.Value.Raw); def != nil && def.DefaultValue != nil {
				return def.DefaultValue.Raw != "false"
			}
			return true
		}
		return arg.Value.Raw != "false"
	}
	for _, sel := range set {
		switch sel := sel.(type) {
		case *gqlast.Field:
			if defers(doc, op, sel.SelectionSet, variables) {
				return true
			}
		case *gqlast.InlineFragment:
			if deferring(sel.Directives) || defers(doc, op, sel.SelectionSet, variables) {
				return true
			}
		case *gqlast.FragmentSpread:
			if deferring(sel.Directives) {
				return true
			}
			if f := doc.Fragments.ForName(sel.Name); f != nil && defers(doc, op, f.SelectionSet, variables) {
				return true
			}
		}
	}
	return false
}
