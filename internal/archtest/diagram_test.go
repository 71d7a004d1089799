package archtest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated package diagram of docs/architecture.md")

const (
	architectureDoc = "docs/architecture.md" // relative to the module's root
	diagramBegin    = "<!-- packages:begin -->"
	diagramEnd      = "<!-- packages:end -->"
)

// diagramNeighbours are the packages the diagram shows around feed and its
// subpackages: what calls the engine, and what it stands on. The table
// lists, beside the feed packages, those of api's and store's own
// (isPartPackage).
var diagramNeighbours = []string{"api", "api/sockets", "resolvers", "dataloader", "internal/viewer", "store", "store/migrate", "models"}

// The package diagram and table of docs/architecture.md are the module's
// packages as they are.
func TestArchitectureDiagram(t *testing.T) {
	m := loadModule(t)
	block, err := packagesBlock(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(m.dir, architectureDoc)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, found := strings.Cut(string(doc), diagramBegin+"\n")
	current, after, foundEnd := strings.Cut(rest, diagramEnd)
	if !found || !foundEnd {
		t.Fatalf("%s has no %s ... %s block for the package diagram", architectureDoc, diagramBegin, diagramEnd)
	}
	if current == block {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(before+diagramBegin+"\n"+block+diagramEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the package diagram of %s", architectureDoc)
		return
	}
	t.Errorf("the package diagram of %s is not the packages' imports as they are; run\n"+
		"\tgo test ./internal/archtest -run TestArchitectureDiagram -update\n"+
		"to rewrite it. It should read:\n%s", architectureDoc, block)
}

// packagesBlock is the text between the markers: a Mermaid diagram of the
// feed packages and their neighbours with their imports among them, and a
// table of the purposes of the feed packages and of api's and store's own.
// Both are sorted, so that the same packages always give the same text.
func packagesBlock(m module) (string, error) {
	var shown []string
	for _, rel := range sortedKeys(m.packages) {
		if isFeedPackage(rel) || slices.Contains(diagramNeighbours, rel) {
			shown = append(shown, rel)
		}
	}
	graph := m.imports()

	var b strings.Builder
	b.WriteString("```mermaid\ngraph TD\n")
	for _, rel := range shown {
		fmt.Fprintf(&b, "  %s[%q]\n", mermaidID(rel), rel)
	}
	for _, rel := range shown {
		imports := slices.Clone(graph[rel])
		slices.Sort(imports)
		for _, imp := range imports {
			if slices.Contains(shown, imp) {
				fmt.Fprintf(&b, "  %s --> %s\n", mermaidID(rel), mermaidID(imp))
			}
		}
	}
	b.WriteString("```\n\n| package | holds |\n|---|---|\n")
	var undocumented []string
	for _, rel := range shown {
		if !isFeedPackage(rel) && !isPartPackage(rel) {
			continue
		}
		doc := m.packages[rel].Doc
		if doc == "" {
			undocumented = append(undocumented, rel)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", rel, strings.ReplaceAll(doc, "|", `\|`))
	}
	if len(undocumented) > 0 {
		return "", fmt.Errorf("%s: no package doc comment; its first sentence is the package's line in %s",
			strings.Join(undocumented, ", "), architectureDoc)
	}
	return b.String(), nil
}

func isFeedPackage(rel string) bool {
	return rel == "feed" || strings.HasPrefix(rel, "feed/")
}

// isPartPackage reports whether rel is a package of api's or store's own
// (api/sockets, say), which the table lists with the feed packages.
func isPartPackage(rel string) bool {
	return strings.HasPrefix(rel, "api/") || strings.HasPrefix(rel, "store/")
}

// mermaidID is a node name Mermaid accepts for package rel.
func mermaidID(rel string) string {
	return strings.ReplaceAll(rel, "/", "_")
}
