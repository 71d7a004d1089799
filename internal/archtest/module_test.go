package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// modulePackage is what the tests read of one package of `go list -json`.
type modulePackage struct {
	ImportPath string
	Doc        string   // the first sentence of the package doc comment
	Imports    []string // non-test imports only
}

// module is the module's packages, keyed by their path relative to the
// module ("feed/apperr"; "." for the root package).
type module struct {
	path     string // "feedservice"
	dir      string // where go.mod is
	packages map[string]modulePackage
}

var (
	loadOnce   sync.Once
	loaded     module
	errLoading error
)

// loadModule lists the module's packages once per test process.
func loadModule(t *testing.T) module {
	t.Helper()
	loadOnce.Do(func() { loaded, errLoading = listModule() })
	if errLoading != nil {
		t.Fatal(errLoading)
	}
	return loaded
}

func listModule() (module, error) {
	out, err := goCommand("", "list", "-m", "-f", "{{.Path}}\n{{.Dir}}")
	if err != nil {
		return module{}, err
	}
	path, dir, ok := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !ok || dir == "" {
		return module{}, fmt.Errorf("go list -m said %q: want the module's path and directory", out)
	}
	m := module{path: path, dir: dir, packages: map[string]modulePackage{}}
	out, err = goCommand(dir, "list", "-json=ImportPath,Doc,Imports", "./...")
	if err != nil {
		return module{}, err
	}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p modulePackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return module{}, fmt.Errorf("reading go list -json: %w", err)
		}
		rel, ok := m.relative(p.ImportPath)
		if !ok {
			return module{}, fmt.Errorf("go list ./... listed %s, outside module %s", p.ImportPath, path)
		}
		m.packages[rel] = p
	}
	return m, nil
}

// relative is importPath relative to the module, and whether it is in it.
func (m module) relative(importPath string) (string, bool) {
	if importPath == m.path {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, m.path+"/")
	return rel, ok
}

// imports is each package's imports of the module's own packages, all
// relative to the module.
func (m module) imports() map[string][]string {
	graph := map[string][]string{}
	for rel, p := range m.packages {
		graph[rel] = []string{}
		for _, imp := range p.Imports {
			if r, ok := m.relative(imp); ok {
				graph[rel] = append(graph[rel], r)
			}
		}
	}
	return graph
}

func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
