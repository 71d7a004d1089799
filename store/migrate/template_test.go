package migrate_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"feedservice/internal/testenv"
	"feedservice/store"
	"feedservice/store/migrate"
	"feedservice/store/storetest"
)

// TestMain drops the template of storetest.MySQL at the end.
func TestMain(m *testing.M) { os.Exit(testenv.DropTemplatesAfter(m).Run()) }

// The database storetest.MySQL gives a test, a copy of the process's
// template, is the database a migration of an empty one makes: the same
// tables, each with the same SHOW CREATE TABLE, the same steps in
// schema_migrations, no view, trigger, routine or foreign key on either
// side; and migrating the copy applies nothing and changes nothing.
func TestTemplateCopyIsAFreshMigration(t *testing.T) {
	ctx := context.Background()
	fresh := testenv.MySQL(t)
	if err := storetest.Migrate(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	copied := storetest.MySQL(t)
	want, got := schemaOf(t, fresh), schemaOf(t, copied)
	steps := 0
	for _, line := range want {
		if strings.HasPrefix(line, "schema_migrations: ") {
			steps++
		}
	}
	if steps != len(migrate.Steps) {
		t.Fatalf("the fresh migration recorded %d steps, want %d:\n%s", steps, len(migrate.Steps), strings.Join(want, "\n"))
	}
	compareSchemas(t, "the copy", got, want)

	s, err := store.Open(ctx, store.Config{MySQLDSN: copied})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if applied, err := s.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Errorf("migrating the copy applied %v, %v; want nothing", applied, err)
	}
	compareSchemas(t, "the copy migrated again", schemaOf(t, copied), want)
}

// compareSchemas reports the lines of got and want that differ.
func compareSchemas(t *testing.T, what string, got, want []string) {
	t.Helper()
	for _, line := range got {
		if !slices.Contains(want, line) {
			t.Errorf("%s has\n\t%s\nwhich a fresh migration lacks", what, line)
		}
	}
	for _, line := range want {
		if !slices.Contains(got, line) {
			t.Errorf("%s lacks\n\t%s", what, line)
		}
	}
}

// schemaOf is the schema of the database dsn selects, a line for each
// thing: each table's SHOW CREATE TABLE, each row of schema_migrations
// (without the time it was applied), and each view, trigger, routine,
// event and foreign key.
func schemaOf(t *testing.T, dsn string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	column := func(query string) []string {
		t.Helper()
		rows, err := db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var lines []string
	for _, table := range column("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME") {
		var name, create string
		if err := db.QueryRow("SHOW CREATE TABLE `"+table+"`").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, create)
	}
	for _, step := range column("SELECT CONCAT(version, ' ', name) FROM schema_migrations ORDER BY version") {
		lines = append(lines, "schema_migrations: "+step)
	}
	for what, query := range map[string]string{
		"view":        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE <> 'BASE TABLE'",
		"trigger":     "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()",
		"routine":     "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()",
		"event":       "SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()",
		"foreign key": "SELECT CONCAT(TABLE_NAME, '.', CONSTRAINT_NAME) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()",
	} {
		for _, name := range column(query) {
			lines = append(lines, fmt.Sprintf("%s %s", what, name))
		}
	}
	return lines
}
