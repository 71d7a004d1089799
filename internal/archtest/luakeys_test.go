package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Redis Cluster runs a Lua script on the node of its KEYS' slot, and the
// slot check (testenv.CheckSlots, on every test client) proves that the
// KEYS of each call share a slot. A script that built a key name of its own
// would slip past both on a single Redis, and on a cluster reach a key of
// another slot. So every key a script touches must come from KEYS as is.

// keylessLuaCommands are the commands the scripts call that name no key.
var keylessLuaCommands = map[string]bool{"PUBLISH": true}

// multiKeyLuaCommands take a key in every argument (as the scripts use them).
var multiKeyLuaCommands = map[string]bool{"DEL": true, "UNLINK": true, "EXISTS": true, "RENAME": true}

// subcommandLuaCommands take a subcommand first and the key after it.
var subcommandLuaCommands = map[string]bool{"XINFO": true}

var luaKeyArg = regexp.MustCompile(`^KEYS\[\d+\]$`)

// luaKeyViolations lists the redis.call()s in script whose keys are not
// KEYS[n] as received.
func luaKeyViolations(script string) (calls int, bad []string) {
	for rest := script; ; {
		i := strings.Index(rest, "redis.call(")
		if i < 0 {
			return calls, bad
		}
		rest = rest[i+len("redis.call("):]
		args := luaArgs(rest)
		calls++
		call := "redis.call(" + strings.Join(args, ", ") + ")"
		cmd, err := strconv.Unquote(strings.ReplaceAll(args[0], "'", `"`))
		if err != nil {
			bad = append(bad, call+": the command is not a literal")
			continue
		}
		cmd = strings.ToUpper(cmd)
		keys := args[1:min(2, len(args))]
		switch {
		case keylessLuaCommands[cmd]:
			keys = nil
		case multiKeyLuaCommands[cmd]:
			keys = args[1:]
		case subcommandLuaCommands[cmd]:
			keys = args[2:min(3, len(args))]
		}
		for _, k := range keys {
			if !luaKeyArg.MatchString(k) {
				bad = append(bad, call+": key "+k+" is not one of KEYS")
			}
		}
	}
}

// luaArgs splits the arguments of a call that starts at s (after its "(").
func luaArgs(s string) []string {
	var args []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ')' && depth == 0:
			return append(args, strings.TrimSpace(s[start:i]))
		case c == ')' || c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(args, strings.TrimSpace(s[start:]))
}

// The scripts are found in every non-test .go file of the module, so a
// script that moves to another package stays checked.
func TestLuaScriptsTouchOnlyTheirKEYS(t *testing.T) {
	root := loadModule(t).dir
	fset := token.NewFileSet()
	calls, read := 0, 0
	var withScripts []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skippedDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		read++
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		found := 0
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			src, err := strconv.Unquote(lit.Value)
			if err != nil || !strings.Contains(src, "redis.call(") {
				return true
			}
			n, bad := luaKeyViolations(src)
			found += n
			for _, b := range bad {
				pos := fset.Position(lit.Pos())
				t.Errorf("%s:%d: %s", rel, pos.Line, b)
			}
			return true
		})
		if found > 0 {
			calls += found
			withScripts = append(withScripts, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The scripts of the engine: its inboxes, outboxes, dispatcher, node
	// leases and caches.
	if calls < minLuaCalls {
		t.Fatalf("found %d redis.call()s, want at least %d: the scan misses some. It read %d non-test .go files under %s; the calls were in %s",
			calls, minLuaCalls, read, root, strings.Join(withScripts, ", "))
	}
}

// minLuaCalls is a floor under the redis.call()s the scan finds, so that a
// scan that reads the wrong files cannot pass by finding nothing.
const minLuaCalls = 50

// skippedDir says whether the scan leaves out a directory of this name:
// code the module does not build, or does not own.
func skippedDir(name string) bool {
	switch name {
	case "vendor", "third_party", "node_modules", "testdata":
		return true
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// The scan does catch a key a script builds, or one it was not given.
func TestLuaKeyScanCatchesBuiltKeys(t *testing.T) {
	for _, script := range []string{
		`redis.call('GET', KEYS[1] .. ':tmp')`,
		`redis.call('DEL', KEYS[1], 'other')`,
		`redis.call("RENAME", KEYS[1], ARGV[1])`,
		`local k = KEYS[2] redis.call('ZADD', k, 1, 'm')`,
		`redis.call(ARGV[1], KEYS[1])`,
	} {
		if n, bad := luaKeyViolations(script); n != 1 || len(bad) != 1 {
			t.Errorf("%s: %d calls, violations %q; want 1 and 1", script, n, bad)
		}
	}
	if _, bad := luaKeyViolations(`redis.call('PUBLISH', ARGV[1], 'x') redis.call('ZADD', KEYS[1], -1, '~' .. f(ARGV[2], 'a'))`); len(bad) > 0 {
		t.Errorf("well-formed calls flagged: %q", bad)
	}
}
