package store

import (
	"context"
	"path/filepath"
	"testing"

	"feedservice/internal/testenv"
)

// onEachDatabase runs test as a subtest on each database the store
// supports, MariaDB ("mysql", a fresh database of its own) and SQLite
// ("sqlite", a file in the test's temporary directory), with a store
// opened on it, closed when the subtest ends, and not migrated: the test
// migrates as it needs.
func onEachDatabase(t *testing.T, test func(t *testing.T, s *Store)) {
	t.Helper()
	for _, db := range []struct {
		name string
		cfg  func(t *testing.T) Config
	}{
		{"mysql", func(t *testing.T) Config { return Config{MySQLDSN: testenv.MySQL(t)} }},
		{"sqlite", func(t *testing.T) Config { return Config{SQLitePath: filepath.Join(t.TempDir(), "feed.db")} }},
	} {
		t.Run(db.name, func(t *testing.T) {
			s, err := Open(context.Background(), db.cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			test(t, s)
		})
	}
}
