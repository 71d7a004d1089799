package archtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every package of the module is in a layer of layers.go, and imports only
// packages of the layers below its own.
func TestPackageLayering(t *testing.T) {
	m := loadModule(t)
	problems := layeringViolations(m.imports(), layers, sameLayerImports)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Log("the layers are in internal/archtest/layers.go; imports only go downward (docs/architecture.md#packages)")
	}
}

// The checker does report an upward import, an import within a layer, a
// package in no layer, and a package in two.
func TestLayeringCatchesAnUpwardImport(t *testing.T) {
	table := []layer{
		{"leaves", []string{"feed/apperr", "feed/config", "feed/ids"}},
		{"root", []string{"feed", "store"}},
		{"above", []string{"api", "store"}},
	}
	graph := map[string][]string{
		"feed/apperr":   {"feed"},
		"feed/config":   {},
		"feed/ids":      {"feed/config"},
		"feed":          {"feed/apperr", "feed/config", "feed/unlisted"},
		"feed/unlisted": {},
		"store":         {},
		"api":           {"feed", "store"},
	}
	got := layeringViolations(graph, table, nil)
	want := []string{
		"feed/apperr imports feed, which is above it: feed/apperr is in layer 1 (leaves), feed in layer 2 (root)",
		"feed/ids imports feed/config, which is in its own layer 1 (leaves): split the layer in layers.go, or move one of them",
		"feed/unlisted is in no layer: add it to layers.go",
		"store is in two layers of layers.go, 2 (root) and 3 (above)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	allowed := map[string]bool{"feed/ids imports feed/config": true}
	for _, p := range layeringViolations(graph, table, allowed) {
		if strings.HasPrefix(p, "feed/ids imports") {
			t.Errorf("an allowed import within a layer was reported: %s", p)
		}
	}
}

// layeringViolations lists, in a stable order, every import of graph (a
// package's imports of the module's own packages) that does not go down the
// layers, and every package of graph that is in no layer or in two. allowed
// holds the imports within a layer that are let through, as "a imports b".
func layeringViolations(graph map[string][]string, layers []layer, allowed map[string]bool) []string {
	var problems []string
	layerOf := map[string]int{} // index into layers
	for i, l := range layers {
		for _, p := range l.packages {
			if j, twice := layerOf[p]; twice {
				problems = append(problems, fmt.Sprintf("%s is in two layers of layers.go, %s and %s",
					p, layerName(layers, j), layerName(layers, i)))
				continue
			}
			layerOf[p] = i
		}
	}

	missing := map[string]bool{}
	for _, pkg := range sortedKeys(graph) {
		from, known := layerOf[pkg]
		if !known {
			missing[pkg] = true
		}
		imports := slices.Clone(graph[pkg])
		slices.Sort(imports)
		for _, imp := range slices.Compact(imports) {
			to, ok := layerOf[imp]
			if !ok {
				missing[imp] = true
			}
			if !known || !ok {
				continue
			}
			switch {
			case to > from:
				problems = append(problems, fmt.Sprintf("%s imports %s, which is above it: %s is in layer %s, %s in layer %s",
					pkg, imp, pkg, layerName(layers, from), imp, layerName(layers, to)))
			case to == from && !allowed[pkg+" imports "+imp]:
				problems = append(problems, fmt.Sprintf("%s imports %s, which is in its own layer %s: split the layer in layers.go, or move one of them",
					pkg, imp, layerName(layers, from)))
			}
		}
	}
	for _, pkg := range sortedKeys(missing) {
		problems = append(problems, pkg+" is in no layer: add it to layers.go")
	}
	slices.Sort(problems)
	return problems
}

// layerName is how messages name layer i: its number counted from 1, the
// lowest, and its name.
func layerName(layers []layer, i int) string {
	return fmt.Sprintf("%d (%s)", i+1, layers[i].name)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
