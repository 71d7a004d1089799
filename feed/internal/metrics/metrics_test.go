package metrics

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Every metric of Metrics is in its registry, once: registering any of
// them again is refused as already registered, no two share a name, and
// every engine (New) has a registry of its own, so that several live in
// one test process.
func TestEveryMetricRegistersOnce(t *testing.T) {
	m := New()
	New() // a second engine's: no clash with the first
	v := reflect.ValueOf(m).Elem()
	collectors := 0
	for i := range v.NumField() {
		field := v.Type().Field(i)
		c, ok := v.Field(i).Interface().(prometheus.Collector)
		if !ok || field.Name == "Registry" {
			continue
		}
		collectors++
		var already prometheus.AlreadyRegisteredError
		if err := m.Registry.Register(c); !errors.As(err, &already) {
			t.Errorf("Metrics.%s: registering it again gave %v, want AlreadyRegisteredError (is it in New's MustRegister?)", field.Name, err)
		}
	}
	if collectors < 20 {
		t.Fatalf("found %d metrics in Metrics, expected every field of it", collectors)
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		if seen[f.GetName()] {
			t.Errorf("%s is gathered twice", f.GetName())
		}
		seen[f.GetName()] = true
		if !strings.HasPrefix(f.GetName(), "feed_") {
			t.Errorf("%s: the engine's metrics are named feed_...", f.GetName())
		}
	}
}

// boundedLabelArgs are the label values of the engine's metrics that are
// not constants at their call, by "file Metric expression", each with
// what bounds it.
var boundedLabelArgs = map[string]string{
	"timeline/feed.go Reads path":                               "one of the Read* constants, set above it",
	"timeline/fold.go Folds foldOutcome(n)":                     "folded, stale, rebuilding or missing: foldOutcome's cases",
	"cache/copies.go CacheFillSeconds k.kind":                   "KindPost or KindUser, the kinds of the Redis tier's copies",
	"cache/copies.go CacheLookups kind":                         "KindPost or KindUser",
	"cache/copies.go CacheLookups result":                       `"miss" or "error"`,
	"cache/tier.go CacheLookups kind":                           "the tier's kind, a Kind* constant at each NewTier",
	"cache/tier.go CacheFillSeconds kind":                       "the tier's kind, a Kind* constant at each NewTier",
	"live/hub.go LiveUnreadable channelKind(h.d.Keys, channel)": "one of five channel kinds",
	"fanout/fanout.go EventsHandled kind":                       "a kind one of the fan-out's handlers read",
	"fanout/fanout.go EventsHandled TaskKind":                   "fanout's TaskKind constant",
	"fanout/fanout.go EventsDropped droppedKind(kind)":          "a kind a handler knows, or droppedKindUnknown",
	"internal/metrics/metrics.go CacheFillSeconds tier":         "the loop over TierLocal and TierRedis",
	"internal/metrics/metrics.go CacheFillSeconds kind":         "the loop over KindPost and KindUser",
	"internal/metrics/metrics.go CacheLookups tier":             "the loop over TierLocal and TierRedis",
	"internal/metrics/metrics.go CacheLookups kind":             "the loop over KindPost and KindUser",
}

// unboundedLabelArgs are the label values known to come from outside
// unchecked: each is a series per value a client or a peer sends, to be
// mended where it is counted.
var unboundedLabelArgs = map[string]string{}

// The labels of the engine's metrics are bounded: every value handed to
// WithLabelValues in feed/ is a string literal, a constant of this
// package, or an expression listed in boundedLabelArgs with what bounds
// it. A user id, a key or a client's string as a label would make a
// series per value.
func TestLabelsAreBounded(t *testing.T) {
	root := filepath.Join("..", "..") // feed/
	consts := packageConsts(t, ".")
	fset := token.NewFileSet()
	calls, found := 0, map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "WithLabelValues" {
				return true
			}
			calls++
			metric := exprString(fset, sel.X)
			if i := strings.LastIndex(metric, "."); i >= 0 {
				metric = metric[i+1:]
			}
			for _, arg := range call.Args {
				if boundedArg(arg, consts) {
					continue
				}
				key := rel + " " + metric + " " + exprString(fset, arg)
				found[key] = true
				if _, ok := boundedLabelArgs[key]; ok {
					continue
				}
				if why, ok := unboundedLabelArgs[key]; ok {
					t.Logf("known unbounded label at %s: %s", fset.Position(arg.Pos()), why)
					continue
				}
				t.Errorf("%s: label value %s of %s is not a constant: make it one, or list %q in boundedLabelArgs with what bounds it",
					fset.Position(arg.Pos()), exprString(fset, arg), metric, key)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 10 {
		t.Fatalf("found %d WithLabelValues calls under feed/, expected the engine's", calls)
	}
	// The lists name call sites that exist: one that went stays out.
	for _, list := range []map[string]string{boundedLabelArgs, unboundedLabelArgs} {
		for key := range list {
			if !found[key] {
				t.Errorf("%q is listed, but no such label value is handed to WithLabelValues: take it off the list", key)
			}
		}
	}
}

// boundedArg says whether a label value is a string literal or a constant
// of this package (metrics.X elsewhere, X here).
func boundedArg(arg ast.Expr, consts map[string]bool) bool {
	switch a := arg.(type) {
	case *ast.BasicLit:
		_, err := strconv.Unquote(a.Value)
		return a.Kind == token.STRING && err == nil
	case *ast.SelectorExpr:
		pkg, ok := a.X.(*ast.Ident)
		return ok && pkg.Name == "metrics" && consts[a.Sel.Name]
	case *ast.Ident:
		return consts[a.Name]
	}
	return false
}

// packageConsts are the names of the constants declared in the package in
// dir.
func packageConsts(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						out[name.Name] = true
					}
				}
			}
		}
	}
	return out
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	printer.Fprint(&b, fset, e)
	return b.String()
}
