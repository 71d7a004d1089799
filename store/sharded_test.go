package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	// The follower's node commits the follow with the followee's half;
	// the relay writes that half, with the follow's event, on theirs.
	if countOn(t, nodes[1], "followings") != 1 || countOn(t, nodes[1], "relay_changes") != 1 || countOn(t, nodes[2], "followers") != 0 {
		t.Fatal("the follow did not commit on the follower's node alone, with its half")
	}
	applyRelays(t, s)
	if countOn(t, nodes[2], "followers") != 1 || countOn(t, nodes[2], "outbox_events") != 1 || countOn(t, nodes[1], "relay_changes") != 0 {
		t.Fatal("the relay did not write the follow's half, with its event, on the followee's node")
	}
	p := &models.Post{ID: 7001, AuthorID: a.ID, Body: "hi", CreatedAt: now}
	if err := s.CreatePost(ctx, p); err != nil {
		t.Fatal(err)
	}
	if countOn(t, nodes[1], "posts") != 1 || countOn(t, nodes[1], "outbox_events") != 1 {
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

// A DELETE through Spider reports no rows affected: an unblock, unmute or
// unfollow must still say it removed something, and move what goes with
// it (the follow counts, the reverse rows), once.
func TestShardedMySQLRemovalsReportWhatTheyRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	now := time.Now().UTC()
	a, b := int64(1000), int64(1001) // on two nodes
	for _, id := range []int64{a, b} {
		if err := s.CreateUser(ctx, &models.User{ID: id, Username: fmt.Sprint("u", id), CreatedAt: now, LastActiveAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		run  func() (bool, error)
		want bool
	}{
		{"block", func() (bool, error) { return s.Block(ctx, a, b, 1, now) }, true},
		{"unblock", func() (bool, error) { return s.Unblock(ctx, a, b, now) }, true},
		{"unblock again", func() (bool, error) { return s.Unblock(ctx, a, b, now) }, false},
		{"block after the unblock", func() (bool, error) { return s.Block(ctx, a, b, 2, now) }, true},
		{"unblock", func() (bool, error) { return s.Unblock(ctx, a, b, now) }, true},
		{"mute", func() (bool, error) { return s.Mute(ctx, a, b, 3, now) }, true},
		{"unmute", func() (bool, error) { return s.Unmute(ctx, a, b, now) }, true},
		{"unmute again", func() (bool, error) { return s.Unmute(ctx, a, b, now) }, false},
		{"follow", func() (bool, error) { return s.Follow(ctx, a, b, 4, now) }, true},
		{"unfollow", func() (bool, error) { return s.Unfollow(ctx, a, b, 5, now) }, true},
		{"unfollow again", func() (bool, error) { return s.Unfollow(ctx, a, b, 6, now) }, false},
	}
	for _, st := range steps {
		if got, err := st.run(); err != nil || got != st.want {
			t.Fatalf("%s: %v, %v; want %v", st.name, got, err, st.want)
		}
	}
	for _, id := range []int64{a, b} {
		u, err := s.UserByID(ctx, id)
		if err != nil || u.FollowerCount != 0 || u.FollowingCount != 0 {
			t.Fatalf("user %d after the unfollow: %+v, %v; want no follows counted", id, u, err)
		}
	}
	if blocking, err := s.BlockingAmong(ctx, b, []int64{a}); err != nil || blocking[a] {
		t.Fatalf("after the unblock, %d still blocks %d: %v", a, b, err)
	}
}
