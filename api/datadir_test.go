//go:build unix

package api

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"feedservice/api/settings"
)

// TestDataDirModes: on the embedded default the data directory is 0700 and
// the database, its -wal and -shm files and the generated token secret are
// 0600 from the first start, whatever the umask; a data directory an older
// version left readable is narrowed on start.
func TestDataDirModes(t *testing.T) {
	t.Parallel()
	// The most permissive umask: the modes must not come from it. Not
	// parallel: the umask is the process's.
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	check := func(t *testing.T, dir string) {
		t.Helper()
		want := map[string]fs.FileMode{".": dataDirMode}
		for _, name := range dataFiles {
			want[name] = dataFileMode
		}
		for name, mode := range want {
			info, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if got := info.Mode().Perm(); got != mode {
				t.Errorf("%s has mode %v, want %v", name, got, mode)
			}
		}
	}
	t.Run("fresh start", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.DataDir, c.TokenSecret = dir, nil })
		s.signUp(t, "ann") // a write: the -wal file exists
		check(t, dir)
	})
	t.Run("readable directory of an older version", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{sqliteFile, "token-secret"} {
			content := ""
			if name == "token-secret" {
				content = "an-old-secret-an-old-secret-an-old-secret\n"
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.DataDir, c.TokenSecret = dir, nil })
		s.signUp(t, "ann")
		check(t, dir)
	})
}
