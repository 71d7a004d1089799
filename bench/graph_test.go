package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// pinnedBaseUnixMs is the graphs' "now" in the pins below: a fixed instant,
// so that the ids (made from times) are the same on every run.
const pinnedBaseUnixMs = 1_790_000_000_000

// pinnedParams is a small graph of each kind a run generates: the quick one
// and the default one (five celebrities), scaled down.
func pinnedParams() map[string]graphParams {
	out := map[string]graphParams{}
	for name, p := range map[string]graphParams{
		"quick":   defaultGraphParams(1500, true, 1),
		"default": defaultGraphParams(4000, false, 42),
	} {
		p.BaseUnixMs = pinnedBaseUnixMs
		out[name] = p
	}
	return out
}

// TestGenerateIsPinned: the same params and seed give the same graph. The
// hashes were taken from the generator before it was cut into steps; a
// change to the draws (their order, their number, the rng streams) changes
// every figure of a run against earlier runs, and shows here.
func TestGenerateIsPinned(t *testing.T) {
	want := map[string]string{
		"quick":   "4512e9aba5cb1e675d1f90182a9a55e3b0cffaf4b7f93286b23f855bf6d3fec4",
		"default": "73cbfd6c7ace7517ebc5796f5adb1d076ebf404e4901a07845262d166a60bcc7",
	}
	for name, p := range pinnedParams() {
		g := generate(p, t.Logf)
		if got := graphHash(g); got != want[name] {
			t.Errorf("%s graph: hash %s, want %s", name, got, want[name])
		}
	}
}

// graphHash is a hash of everything generate decides.
func graphHash(g *graph) string {
	h := sha256.New()
	fmt.Fprintf(h, "users %v\nnames %v\n", g.UserIDs, g.Names)
	for i, list := range g.Followees {
		fmt.Fprintf(h, "f %d %v\n", i, list)
	}
	fmt.Fprintf(h, "followers %v\ncelebs %v author %d general %v\n", g.FollowerN, g.Celebs, g.Author, g.General)
	buckets := make([]int, 0, len(g.Probes))
	for b := range g.Probes {
		buckets = append(buckets, b)
	}
	slices.Sort(buckets)
	for _, b := range buckets {
		fmt.Fprintf(h, "probe %d %v\n", b, g.Probes[b])
	}
	for _, p := range g.Posts {
		fmt.Fprintf(h, "p %d %d %d %d\n", p.ID, p.Author, p.RepostOf, p.RepostCount)
	}
	fmt.Fprintf(h, "postcount %v\nmax %d edges %d\n", g.PostCount, g.MaxID, g.FollowEdges)
	for n := range g.FollowEdges {
		fmt.Fprintf(h, "%d ", g.followID(n))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestLoadIsPinned: the bulk load sends the same statements for the same
// graph. The statements are recorded by a database/sql driver that keeps
// what it is sent (the four tables load on four connections at once, so
// they are compared sorted); the bcrypt hash, salted anew on each run, is
// masked.
func TestLoadIsPinned(t *testing.T) {
	const want = "799a94a2099d8c59af00f9736d00c39de2dbe8323cfc0f82e9c9e4ccb8b6ce81"
	p := pinnedParams()["quick"]
	g := generate(p, t.Logf)
	rec := &sqlRecorder{}
	db := sql.OpenDB(rec)
	defer db.Close()
	if err := g.load(context.Background(), db, t.Logf); err != nil {
		t.Fatalf("load: %v", err)
	}
	stmts := rec.statements()
	if len(stmts) < 10 {
		t.Fatalf("load sent %d statements: %q", len(stmts), stmts)
	}
	for _, part := range []string{"ALTER TABLE posts DROP INDEX", "ADD UNIQUE INDEX `idx_posts_body` (`body`(10))", "INSERT INTO users", "INSERT INTO followings", "INSERT INTO followers", "INSERT INTO posts"} {
		if !slices.ContainsFunc(stmts, func(s string) bool { return strings.Contains(s, part) }) {
			t.Errorf("no statement has %q", part)
		}
	}
	h := sha256.New()
	for _, s := range stmts {
		io.WriteString(h, s+"\n")
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("load statements: hash %s, want %s (%d statements)", got, want, len(stmts))
	}
}

var bcryptHash = regexp.MustCompile(`\$2a\$04\$[./A-Za-z0-9]{53}`)

// sqlRecorder is a database/sql driver that keeps the statements it is sent.
// Its information_schema answer gives posts one secondary index, so that
// the load drops and rebuilds it.
type sqlRecorder struct {
	mu    sync.Mutex
	stmts []string
}

func (r *sqlRecorder) statements() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.stmts)
	slices.Sort(out)
	return out
}

func (r *sqlRecorder) Connect(context.Context) (driver.Conn, error) { return &recConn{r: r}, nil }
func (r *sqlRecorder) Driver() driver.Driver                        { return nil }

type recConn struct{ r *sqlRecorder }

func (c *recConn) Prepare(string) (driver.Stmt, error) {
	return nil, fmt.Errorf("recorder: prepared statements are not recorded")
}
func (c *recConn) Close() error              { return nil }
func (c *recConn) Begin() (driver.Tx, error) { return nil, fmt.Errorf("recorder: no transactions") }

func (c *recConn) ExecContext(_ context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.r.stmts = append(c.r.stmts, fmt.Sprintf("%s %v", bcryptHash.ReplaceAllString(query, "<hash>"), args))
	return driver.RowsAffected(0), nil
}

func (c *recConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.r.mu.Lock()
	c.r.stmts = append(c.r.stmts, fmt.Sprintf("%s %v", query, args))
	c.r.mu.Unlock()
	rows := &recRows{}
	if strings.Contains(query, "information_schema.STATISTICS") && len(args) == 1 && args[0].Value == "posts" {
		rows.data = [][]driver.Value{
			{"idx_posts_author", int64(1), "author_id", nil},
			{"idx_posts_author", int64(1), "id", nil},
			{"idx_posts_body", int64(0), "body", int64(10)},
		}
	}
	return rows, nil
}

type recRows struct{ data [][]driver.Value }

func (r *recRows) Columns() []string {
	return []string{"INDEX_NAME", "NON_UNIQUE", "COLUMN_NAME", "SUB_PART"}
}
func (r *recRows) Close() error { return nil }
func (r *recRows) Next(dest []driver.Value) error {
	if len(r.data) == 0 {
		return io.EOF
	}
	copy(dest, r.data[0])
	r.data = r.data[1:]
	return nil
}
