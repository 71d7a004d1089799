package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQLTemplate is a database with a schema, made and migrated once per
// test process, that tests copy instead of migrating a database of their
// own: a migration of the store's schema costs MariaDB several times what
// a copy of its tables does, and gorm's look at the tables it migrates
// costs Go CPU, more under the race detector (docs/testing.md, "Where the
// time goes"). It lives as long as its process, so a template is never
// older than the code that migrated it.
type MySQLTemplate struct {
	migrate func(ctx context.Context, dsn string) error
	mu      sync.Mutex
	made    *madeTemplate // nil until the first Copy makes it
}

// madeTemplate is a template database on the test MariaDB and what a copy
// of it takes.
type madeTemplate struct {
	db   *sql.DB // on the server, no database selected
	name string
	// tables are the template's tables; withRows those of them that hold
	// rows after the migration (schema_migrations), which a copy copies.
	tables, withRows []string
}

// templateMigrateWait bounds the template's migration (stretched by
// Scale), templateCopyWait a copy.
const (
	templateMigrateWait = 2 * time.Minute
	templateCopyWait    = 30 * time.Second
)

// NewMySQLTemplate is a template whose schema migrate makes: migrate
// brings the empty database dsn selects to the schema (the caller's
// migration, which testenv cannot import). Nothing is made before the
// first Copy.
func NewMySQLTemplate(migrate func(ctx context.Context, dsn string) error) *MySQLTemplate {
	return &MySQLTemplate{migrate: migrate}
}

// templates are the templates this process made, for DropTemplatesAfter.
var templates struct {
	mu   sync.Mutex
	made []*MySQLTemplate
}

// Copy creates a database for this test on the test MariaDB, dropped when
// the test ends, with the template's schema and rows, and returns a DSN
// that selects it. The first Copy of the process makes the template: a
// database named by the run (Name), so that the sweep drops it if the
// process is killed, migrated by the template's migrate. Every Copy then
// makes each of the template's tables with CREATE TABLE ... LIKE (which a
// replica replays from the binlog as it does the migration's DDL) and
// copies the rows of those that have any, the schema_migrations of a
// store's schema: migrating the copy again applies nothing. A template
// with what CREATE TABLE ... LIKE does not copy (views, triggers,
// routines, events, foreign keys) is refused.
func (tpl *MySQLTemplate) Copy(t testing.TB) string {
	t.Helper()
	WatchLibraryLog(t)
	made, err := tpl.make(t)
	if err != nil {
		t.Fatal(err)
	}
	name := Name("feedtest_")
	dsn := createDatabase(t, MySQLServerDSN(), name)
	ctx, cancel := context.WithTimeout(context.Background(), Scale(templateCopyWait))
	defer cancel()
	for _, table := range made.tables {
		if _, err := made.db.ExecContext(ctx, "CREATE TABLE "+quoteName(name)+"."+quoteName(table)+" LIKE "+quoteName(made.name)+"."+quoteName(table)); err != nil {
			t.Fatalf("copy table %s of the template %s: %v", table, made.name, err)
		}
	}
	for _, table := range made.withRows {
		if _, err := made.db.ExecContext(ctx, "INSERT INTO "+quoteName(name)+"."+quoteName(table)+" SELECT * FROM "+quoteName(made.name)+"."+quoteName(table)); err != nil {
			t.Fatalf("copy the rows of %s of the template %s: %v", table, made.name, err)
		}
	}
	return dsn
}

// make makes the template the first time, and returns it. A failure
// fails this test, and the next Copy tries again.
func (tpl *MySQLTemplate) make(t testing.TB) (*madeTemplate, error) {
	tpl.mu.Lock()
	defer tpl.mu.Unlock()
	if tpl.made != nil {
		return tpl.made, nil
	}
	serverDSN := MySQLServerDSN()
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		return nil, fmt.Errorf("MySQL DSN %q: %v", serverDSN, err)
	}
	usesServers(t, serverDSN, "")
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	made := &madeTemplate{db: db, name: Name("feedtemplate_")}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(templateMigrateWait))
	defer cancel()
	if _, err := db.ExecContext(ctx, createDatabaseStatement(made.name)); err != nil {
		db.Close()
		return nil, fmt.Errorf("create the template database %s on the MariaDB at %s (the test command starts it): %v", made.name, cfg.Addr, err)
	}
	cfg.DBName = made.name
	err = tpl.migrate(ctx, cfg.FormatDSN())
	if err == nil {
		err = made.inspect(ctx)
	}
	if err != nil {
		made.drop()
		return nil, fmt.Errorf("template database %s: %w", made.name, err)
	}
	tpl.made = made
	templates.mu.Lock()
	templates.made = append(templates.made, tpl)
	templates.mu.Unlock()
	return made, nil
}

// inspect lists the template's tables and those with rows, and refuses
// what a copy table by table would lose.
func (m *madeTemplate) inspect(ctx context.Context) error {
	rows, err := m.db.QueryContext(ctx, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", m.name)
	if err != nil {
		return err
	}
	var refused []string
	for rows.Next() {
		var table, kind string
		if err := rows.Scan(&table, &kind); err != nil {
			rows.Close()
			return err
		}
		if kind != "BASE TABLE" {
			refused = append(refused, strings.ToLower(kind)+" "+table)
			continue
		}
		m.tables = append(m.tables, table)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, other := range []struct{ what, query string }{
		{"trigger", "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?"},
		{"routine", "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?"},
		{"event", "SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?"},
		{"foreign key", "SELECT CONCAT(TABLE_NAME, '.', CONSTRAINT_NAME) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?"},
	} {
		names, err := m.strings(ctx, other.query, m.name)
		if err != nil {
			return err
		}
		for _, n := range names {
			refused = append(refused, other.what+" "+n)
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("the migration made what a copy by CREATE TABLE ... LIKE lacks: %s", strings.Join(refused, ", "))
	}
	for _, table := range m.tables {
		var hasRows bool
		if err := m.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quoteName(m.name)+"."+quoteName(table)+")").Scan(&hasRows); err != nil {
			return err
		}
		if hasRows {
			m.withRows = append(m.withRows, table)
		}
	}
	return nil
}

// strings runs query and returns the first column of its rows.
func (m *madeTemplate) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := m.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// drop drops the template database and closes the connections to its
// server.
func (m *madeTemplate) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(10*time.Second))
	defer cancel()
	_, err := m.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteName(m.name))
	m.db.Close()
	return err
}

// TestingM is what a TestMain runs: *testing.M, or a wrapper of it (as
// goleak.VerifyTestMain takes).
type TestingM interface{ Run() int }

// DropTemplatesAfter is m whose Run, once the tests have run, drops the
// template databases (MySQLTemplate) this process made. A package whose
// tests copy a template runs them through it in its TestMain:
// os.Exit(testenv.DropTemplatesAfter(m).Run()). Without it, the templates
// are dropped by the sweep once the process has ended.
func DropTemplatesAfter(m TestingM) TestingM { return templatesDroppedAfter{m} }

type templatesDroppedAfter struct{ m TestingM }

func (d templatesDroppedAfter) Run() int {
	code := d.m.Run()
	templates.mu.Lock()
	made := templates.made
	templates.made = nil
	templates.mu.Unlock()
	var errs []error
	for _, tpl := range made {
		tpl.mu.Lock()
		if tpl.made != nil {
			errs = append(errs, tpl.made.drop())
			tpl.made = nil
		}
		tpl.mu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: drop the template databases (the sweep drops them later): %v\n", err)
	}
	return code
}

// quoteName quotes a MariaDB identifier.
func quoteName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
