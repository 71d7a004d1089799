package testenv

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestMain drops the templates the tests made (DropTemplatesAfter).
func TestMain(m *testing.M) { os.Exit(DropTemplatesAfter(m).Run()) }

// execAll runs statements, one after the other, on the database dsn
// selects.
func execAll(ctx context.Context, dsn string, statements ...string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range statements {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// A copy of a template has the template's tables and the rows of those
// that had rows (its counter of AUTO_INCREMENT past them), and two copies
// are databases of their own; the template is migrated once.
func TestTemplateCopiesTablesAndRows(t *testing.T) {
	migrations := 0
	tpl := NewMySQLTemplate(func(ctx context.Context, dsn string) error {
		migrations++
		return execAll(ctx, dsn,
			"CREATE TABLE steps (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL)",
			"INSERT INTO steps (name) VALUES ('one'), ('two')",
			"CREATE TABLE items (id BIGINT PRIMARY KEY, body TEXT, KEY ix_items_body (body(10)))")
	})
	first, second := tpl.Copy(t), tpl.Copy(t)
	if migrations != 1 {
		t.Errorf("the template was migrated %d times, want once", migrations)
	}
	ctx := context.Background()
	if err := execAll(ctx, first, "INSERT INTO steps (name) VALUES ('three')", "INSERT INTO items (id, body) VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", first)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int
	if err := db.QueryRow("SELECT id FROM steps WHERE name = 'three'").Scan(&id); err != nil || id != 3 {
		t.Errorf("the copy's next AUTO_INCREMENT id: %d, %v; want 3", id, err)
	}
	for _, c := range []struct {
		dsn   string
		table string
		want  int
	}{{first, "steps", 3}, {first, "items", 1}, {second, "steps", 2}, {second, "items", 0}} {
		other, err := sql.Open("mysql", c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = other.QueryRow("SELECT COUNT(*) FROM " + c.table).Scan(&n)
		other.Close()
		if err != nil || n != c.want {
			t.Errorf("%s of %s: %d rows, %v; want %d", c.table, c.dsn, n, err, c.want)
		}
	}
}

// A template whose migration made what CREATE TABLE ... LIKE does not
// copy is refused and dropped.
func TestTemplateRefusesWhatACopyLacks(t *testing.T) {
	for _, c := range []struct {
		what       string
		statements []string
	}{
		{"view v", []string{"CREATE TABLE a (id INT PRIMARY KEY)", "CREATE VIEW v AS SELECT id FROM a"}},
		{"foreign key b.fk_b_a", []string{"CREATE TABLE a (id INT PRIMARY KEY)",
			"CREATE TABLE b (id INT PRIMARY KEY, a_id INT, CONSTRAINT fk_b_a FOREIGN KEY (a_id) REFERENCES a (id))"}},
		{"trigger tr", []string{"CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TRIGGER tr BEFORE INSERT ON a FOR EACH ROW SET NEW.id = NEW.id + 1"}},
	} {
		t.Run(strings.Fields(c.what)[0], func(t *testing.T) {
			before := templateDatabases(t)
			tpl := NewMySQLTemplate(func(ctx context.Context, dsn string) error { return execAll(ctx, dsn, c.statements...) })
			_, err := tpl.make(t)
			if err == nil || !strings.Contains(err.Error(), c.what) {
				t.Errorf("template with a %s: %v, want it refused", c.what, err)
			}
			if after := templateDatabases(t); !slices.Equal(after, before) {
				t.Errorf("template databases %v after the refusal, want %v: the refused one was not dropped", after, before)
			}
		})
	}
}

// templateDatabases are the template databases of this run on the test
// MariaDB.
func templateDatabases(t *testing.T) []string {
	t.Helper()
	db, err := sql.Open("mysql", MySQLServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ? ORDER BY SCHEMA_NAME",
		"feedtemplate\\_"+thisRun().ID()+"\\_%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		out = append(out, name)
	}
	return out
}
