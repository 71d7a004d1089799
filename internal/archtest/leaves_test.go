package archtest

import (
	"strings"
	"testing"
)

// The packages every layer may use to say who a request acts for and what
// went wrong pull in no database: a handler or a test that needs only them
// builds without gorm or an SQL driver.
func TestRequestLeavesHoldNoDatabase(t *testing.T) {
	m := loadModule(t)
	for _, pkg := range []string{"internal/apperr", "internal/viewer"} {
		out, err := goCommand(m.dir, "list", "-deps", "./"+pkg)
		if err != nil {
			t.Fatal(err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if isDatabasePackage(dep) {
				t.Errorf("%s depends on %s: it must hold no database", pkg, dep)
			}
		}
	}
}

// isDatabasePackage says whether import path p is gorm, an SQL driver or
// the module's own storage layer.
func isDatabasePackage(p string) bool {
	for _, prefix := range []string{"gorm.io/", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/glebarez/", "feedservice/store"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// internal/ holds the module's helpers below the engine: none of them
// imports a package of feed/ (the engine imports them, never the reverse).
func TestInternalImportsNoFeedPackage(t *testing.T) {
	m := loadModule(t)
	for rel, p := range m.packages {
		if !strings.HasPrefix(rel, "internal/") {
			continue
		}
		for _, imp := range p.Imports {
			if r, ok := m.relative(imp); ok && (r == "feed" || strings.HasPrefix(r, "feed/")) {
				t.Errorf("%s imports %s: internal/ is below the engine", rel, r)
			}
		}
	}
}
