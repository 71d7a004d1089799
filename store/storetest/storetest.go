// Package storetest gives a test a MariaDB database of its own with the
// store's schema, copied from a database migrated once per test process
// (testenv.MySQLTemplate) rather than migrated for each test.
package storetest

import (
	"context"
	"testing"

	"feedservice/internal/testenv"
	"feedservice/store"
)

// migrated is this process's template of the store's schema.
var migrated = testenv.NewMySQLTemplate(Migrate)

// MySQL creates a database for this test with the store's schema,
// dropped when the test ends, and returns a DSN that selects it: the
// store's Migrate applies nothing to it. The package's TestMain drops the
// template at the end (testenv.DropTemplatesAfter). Tests of the migration
// itself take an empty database (testenv.MySQL) instead.
func MySQL(t testing.TB) string {
	t.Helper()
	return migrated.Copy(t)
}

// Migrate opens the store on the database dsn selects, migrates it and
// closes it.
func Migrate(ctx context.Context, dsn string) error {
	st, err := store.Open(ctx, store.Config{MySQLDSN: dsn})
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = st.Migrate(ctx)
	return err
}
