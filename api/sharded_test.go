package api

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/apperr"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store/migrate"
)

// shardedServer is a test server on a sharded database of the test's own
// (a Spider head over four data nodes, migrated by the server's start with
// MYSQL_SHARD_DSNS), in feed mode mode.
func shardedServer(t *testing.T, mode feedconfig.Mode) *testServer {
	t.Helper()
	head, nodes := testenv.ShardedMySQL(t)
	return newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MySQLDSN, c.MySQLShardDSNs, c.MySQLReplicaDSNs = head, nodes, nil
		c.Mode = mode
	})
}

// TestShardedMySQLFeedMatchesModel is TestFeedMatchesModel through the
// API on the sharded layout, once in every feed mode (side by side):
// sign-ups, follows, unfollows, removed followers, posts, reposts,
// deletions and read marks, then every user's whole feed and unread count
// against the reference model.
func TestShardedMySQLFeedMatchesModel(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, mode := range []feedconfig.Mode{feedconfig.ModePull, feedconfig.ModePush, feedconfig.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			feedRunModel(t, shardedServer(t, mode), seed, 10, 80)
		})
	}
}

// A name is taken across the data nodes: a second sign-up with it, in
// another case, is refused whichever node its new user would live on,
// and signing in by name finds the user on theirs.
func TestShardedMySQLUsernamesAcrossNodes(t *testing.T) {
	t.Parallel()
	s := shardedServer(t, feedconfig.ModeHybrid)
	first := s.signUp(t, "Sharded")
	for i := range 4 { // four sign-ups: new users' ids spread over the nodes
		errsExpect(t, s.anon(), "BAD_USER_INPUT", acctSignUpDoc, map[string]any{"u": "sHARDED", "p": fmt.Sprintf("impostor-password-%d", i)})
	}
	var out struct{ LogIn acctAuthPayload }
	s.anon().mustDo(t, acctLogInDoc, map[string]any{"u": "sharded", "p": "password-Sharded"}, &out)
	if out.LogIn.User.ID != first.ID {
		t.Fatalf("logIn found user %s, want %s", out.LogIn.User.ID, first.ID)
	}
}

// TestShardedMySQLDataNodeStoppedDuringBurst: one data node (a private
// MariaDB of the test, the others shared) stops while authors on it and
// on other nodes post. The authors on other nodes keep being
// acknowledged, and so does a follow between two of their users; the
// authors on the stopped node, and a follow of one of them, are refused
// with UNAVAILABLE (never a 500). Once the node is back, the same server
// acknowledges them again, every acknowledged post is in its author's
// timeline, and every reader's feed and unread count match the model.
func TestShardedMySQLDataNodeStoppedDuringBurst(t *testing.T) {
	t.Parallel()
	const down = 2 // the stopped node
	head, nodes := testenv.ShardedMySQL(t)
	private := testenv.StartMariaDB(t)
	headCfg, err := mysqldriver.ParseDSN(head)
	if err != nil {
		t.Fatal(err)
	}
	nodes[down] = private.CreateDatabase(headCfg.DBName)
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.MySQLDSN, c.MySQLShardDSNs, c.MySQLReplicaDSNs = head, nodes, nil
		c.Mode = feedconfig.ModePush
	})
	t.Cleanup(func() { dropServer(t, head, nodes[down]) })
	w := feedNewWorld(t, s)
	shardOf := func(c *client) int {
		_, id, err := models.ParseNodeID(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.app.store.ShardOf(id)
	}
	// Two authors on the node that stops, two elsewhere, and readers
	// elsewhere who follow them all.
	var onDown, elsewhere, readers []*client
	for i := 0; len(onDown) < 2 || len(elsewhere) < 4 || len(readers) < 2; i++ {
		c := w.signUp(fmt.Sprintf("user%02d", i))
		switch {
		case shardOf(c) == down && len(onDown) < 2:
			onDown = append(onDown, c)
		case shardOf(c) != down && len(elsewhere) < 4:
			elsewhere = append(elsewhere, c)
		case shardOf(c) != down && len(readers) < 2:
			readers = append(readers, c)
		}
		if i > 200 {
			t.Fatal("200 sign-ups and no users spread over the nodes")
		}
	}
	authors := append(append([]*client{}, onDown...), elsewhere[:2]...)
	for _, r := range readers {
		for _, a := range authors {
			w.follow(r, a)
		}
		w.check(r, 5)
	}

	b := startFaultBurst(s, authors)
	b.waitFor(t, time.Time{}, "10 acknowledged posts", func(as []faultAttempt) bool { ok, _ := countOK(as); return ok >= 10 })
	private.Stop()
	stopped := time.Now()
	b.waitFor(t, stopped, "6 refused posts and 6 acknowledged ones", func(as []faultAttempt) bool {
		ok, failed := countOK(as)
		return ok >= 6 && failed >= 6
	})
	inFlight := map[string]bool{} // an author's first answer after the stop may be of a post committed before it
	for _, a := range b.since(stopped) {
		onStopped := shardOf(a.author) == down
		first := !inFlight[a.author.ID]
		inFlight[a.author.ID] = true
		switch {
		case a.ok() && onStopped && !first:
			t.Errorf("%s (on the stopped node) had post %q acknowledged", a.author.Name, a.body)
		case !a.ok() && !onStopped:
			t.Errorf("%s (on a running node) was refused post %q: status %d, errors %+v, err %v", a.author.Name, a.body, a.res.Status, a.res.Errors, a.err)
		case !a.ok() && (a.err != nil || a.res.Status >= 500 || a.res.Code() != string(apperr.CodeUnavailable)):
			t.Errorf("createPost on the stopped node: status %d, errors %+v, err %v; want a %s error", a.res.Status, a.res.Errors, a.err, apperr.CodeUnavailable)
		}
	}
	// A follow between two users of running nodes is acknowledged; one of
	// a user of the stopped node is refused.
	// (Not through the world's follow, which waits for the fan-out: that
	// waits for the stopped node.)
	const follow = `mutation($id: ID!) { follow(userId: $id) { user { id } } }`
	if r, err := rawDo(s.URL, elsewhere[2].Token, follow, map[string]any{"id": elsewhere[3].ID}); err != nil || r.Status != 200 || len(r.Errors) > 0 {
		t.Errorf("a follow between users of running nodes: status %d, errors %+v, err %v", r.Status, r.Errors, err)
	}
	w.m.Follow(elsewhere[2].ID, elsewhere[3].ID)
	r, err := rawDo(s.URL, elsewhere[2].Token, follow, map[string]any{"id": onDown[0].ID})
	if err != nil || r.Status >= 500 || r.Code() != string(apperr.CodeUnavailable) {
		t.Errorf("a follow of a user on the stopped node: status %d, errors %+v, err %v; want a %s error", r.Status, r.Errors, err, apperr.CodeUnavailable)
	}

	private.Start()
	back := time.Now()
	b.waitFor(t, back, "posts of every author acknowledged after the restart", func(as []faultAttempt) bool {
		seen := map[string]bool{}
		for _, a := range as {
			if a.ok() {
				seen[a.author.ID] = true
			}
		}
		return len(seen) == len(authors)
	})
	attempts := b.finish()
	ok, failed := countOK(attempts)
	ambiguous := faultRecord(t, w, authors, attempts)
	t.Logf("%d posts acknowledged, %d refused (%d of them committed)", ok, failed, ambiguous)
	faultCheckModel(t, w, readers)
}

// dropServer drops the head's server definition of the data node dsn (a
// private MariaDB of the test, whose port another test may later get).
func dropServer(t *testing.T, head, dsn string) {
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return
	}
	db, err := sql.Open("mysql", head)
	if err != nil {
		return
	}
	defer db.Close()
	db.Exec("DROP SERVER IF EXISTS " + migrate.ServerName(cfg))
}
