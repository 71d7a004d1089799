package feed

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/slot"
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

func TestLuaScriptsTouchOnlyTheirKEYS(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			src, err := strconv.Unquote(lit.Value)
			if err != nil || !strings.Contains(src, "redis.call(") {
				return true
			}
			found, bad := luaKeyViolations(src)
			calls += found
			for _, b := range bad {
				t.Errorf("%s: %s", fset.Position(lit.Pos()), b)
			}
			return true
		})
	}
	// The scripts of inbox.go, outbox.go, dispatcher.go and nodelease.go.
	if calls < 50 {
		t.Fatalf("found %d redis.call()s in the engine's scripts; the scan misses some", calls)
	}
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

// Every key of one user shares a slot, so each script and transaction over
// them stays in one; different users spread over the slots.
func TestUserKeysShareASlot(t *testing.T) {
	k := keyspace.New("t0123:")
	slots := map[int]bool{}
	for id := int64(1); id <= 1000; id++ {
		own := []string{k.Inbox(id), k.InboxSources(id), k.InboxTemp(id), k.InboxSourcesTemp(id), k.RebuildLock(id),
			k.Outbox(id), k.OutboxTemp(id), k.OutboxLock(id), k.Following(id), k.FollowingTemp(id)}
		for _, key := range own[1:] {
			if slot.Of(key) != slot.Of(own[0]) {
				t.Fatalf("%s and %s are in different slots", own[0], key)
			}
		}
		slots[slot.Of(own[0])] = true
	}
	if len(slots) < 900 {
		t.Fatalf("1000 users share %d slots: the hash tag does not spread them", len(slots))
	}
}
