package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"feedservice/internal/testenv"
	"feedservice/models"
)

// openSharded opens a migrated store on a sharded database of the test's
// own, and returns it with the data nodes' DSNs.
func openSharded(t testing.TB) (*Store, []string) {
	t.Helper()
	head, nodes := testenv.ShardedMySQL(t)
	s, err := Open(context.Background(), Config{MySQLDSN: head, ShardDSNs: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, nodes
}

// countOn counts the rows of table on a data node.
func countOn(t testing.TB, node, table string) int {
	t.Helper()
	db, err := sql.Open("mysql", node)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s on %s: %v", table, node, err)
	}
	return n
}

// Migrate on a Spider head with data nodes makes the tables on every node
// and the head's Spider tables over them; the rows of a user, their
// follows and posts land on the user's node, and a store opened on the
// head alone (no data nodes named) finds the layout and needs no
// migration.
func TestShardedMySQLMigratePlacesRowsByOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	if !s.Sharded() || s.Shards() != len(nodes) {
		t.Fatalf("sharded %v over %d nodes, want %d", s.Sharded(), s.Shards(), len(nodes))
	}
	now := time.Now().UTC()
	var users []*models.User
	for i := range int64(len(nodes)) {
		u := &models.User{ID: 1000 + i, Username: "user" + string(rune('a'+i)), CreatedAt: now, LastActiveAt: now}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	if err := s.CreateUser(ctx, &models.User{ID: 2001, Username: "USERA", CreatedAt: now, LastActiveAt: now}); !errors.Is(err, ErrUsernameTaken) {
		t.Fatalf("a name taken on another node: %v, want ErrUsernameTaken", err)
	}
	for i, u := range users {
		if n := countOn(t, nodes[i], "users"); n != 1 {
			t.Fatalf("node %d holds %d users, want 1 (user %d)", i, n, u.ID)
		}
		got, err := s.UserByUsername(ctx, u.Username)
		if err != nil || got.ID != u.ID {
			t.Fatalf("UserByUsername(%s): %v, %v", u.Username, got, err)
		}
	}
	a, b := users[1], users[2]
	if changed, err := s.Follow(ctx, a.ID, b.ID, 5000, now); err != nil || !changed {
		t.Fatalf("follow: %v %v", changed, err)
	}
	if countOn(t, nodes[1], "followings") != 1 || countOn(t, nodes[2], "followers") != 1 {
		t.Fatal("the follow's rows are not on the follower's and the followee's nodes")
	}
	p := &models.Post{ID: 7001, AuthorID: a.ID, Body: "hi", CreatedAt: now}
	if err := s.CreatePost(ctx, p); err != nil {
		t.Fatal(err)
	}
	if countOn(t, nodes[1], "posts") != 1 || countOn(t, nodes[1], "outbox_events") != 2 {
		t.Fatal("the post and its event are not on the author's node")
	}

	again, err := Open(ctx, Config{MySQLDSN: s.dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Sharded() || again.Shards() != len(nodes) {
		t.Fatalf("a store on the head alone: sharded %v over %d nodes", again.Sharded(), again.Shards())
	}
	if applied, err := again.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Fatalf("migrate on the migrated head: %v %v", applied, err)
	}
	timeline, err := again.TimelinePage(ctx, a.ID, Older, 1<<62, 10)
	if err != nil || len(timeline) != 1 || timeline[0].ID != p.ID {
		t.Fatalf("timeline through the head: %v %v", timeline, err)
	}
}
