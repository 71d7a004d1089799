package web

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFaviconIsDrawnByItsGenerator: favicon.ico is what favicon_gen.go
// draws (go generate), so the icon and its source cannot drift apart.
func TestFaviconIsDrawnByItsGenerator(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("favicon_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "favicon_gen.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "favicon_gen.go")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run favicon_gen.go: %v\n%s", err, out)
	}
	drawn, err := os.ReadFile(filepath.Join(dir, "favicon.ico"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(drawn, favicon) {
		t.Fatal("favicon.ico is not what favicon_gen.go draws: run go generate ./web and commit it")
	}
}
