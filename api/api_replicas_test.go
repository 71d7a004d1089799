package api

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// Read replicas with replication stopped (store/replicas.go,
// feed/replicas/replicas.go). Both tests stop the replica that
// testenv.StoppableReplica keeps for them, so neither runs in parallel.

// TestReplicaStoppedKeepsOwnWrites: with the replica's replication stopped
// and the lag guard off (REPLICA_MAX_LAG of an hour), the replica serves
// stale rows to a reader who wrote nothing (signed out), yet the viewer who follows,
// posts and then reads their lists, their counts and their feed sees every
// write of theirs (the read-your-writes mark), and a user who just signed
// up is found by everyone (their row is read from the primary while their
// mark lasts); after START SLAVE the other reader sees the new rows too.
func TestReplicaStoppedKeepsOwnWrites(t *testing.T) {
	var replicaServer string
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		var dsn string
		dsn, replicaServer = testenv.StoppableReplica(t, c.MySQLDSN)
		c.MySQLReplicaDSNs = []string{dsn}
		c.ReplicaMaxLag = time.Hour
	})
	alice, bob, anon := s.signUp(t, "alice"), s.signUp(t, "bob"), s.anon()
	// dave and erin are made in the store, behind the service's back, so
	// that no write marks them (a sign-up marks its user).
	dave, erin := storeUser(t, s, "dave"), storeUser(t, s, "erin")
	bobPost := feedCreatePost(t, bob, "before the stop")
	waitReplicaFresh(t, s.app.store)
	testenv.Replication(t, replicaServer, "STOP SLAVE")
	t.Cleanup(func() { testenv.Replication(t, replicaServer, "START SLAVE") })

	relChange(t, alice, "follow", bob)
	alicePost := feedCreatePost(t, alice, "during the stop")
	if got := relNames(relPage(t, alice, "following", "alice", relArgs{First: relInt(10)})); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("alice's following, read by alice: %v, want [bob]", got)
	}
	if got := relNames(relPage(t, alice, "followers", "bob", relArgs{First: relInt(10)})); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("bob's followers, read by alice: %v, want [alice]", got)
	}
	timeline := relPage(t, alice, "timeline", "alice", relArgs{First: relInt(10)})
	if len(timeline.Edges) != 1 || timeline.Edges[0].Node.ID != alicePost.ID {
		t.Fatalf("alice's timeline, read by alice: %+v, want her post %s", timeline.Edges, alicePost.ID)
	}
	me := relGetUser(t, alice, "alice")
	if me.FollowingCount != 1 || me.PostCount != 1 {
		t.Fatalf("alice's counts: following %d posts %d, want 1 and 1", me.FollowingCount, me.PostCount)
	}
	feedExpect(t, alice, bobPost.ID)

	// carol and frank sign up during the stop: the replica lacks their
	// rows and no cache holds them, but each sign-up marks its user, so
	// whoever reads them first reads the primary. erin, signed in and
	// marked by no write, unfollows carol, whom she does not follow
	// (nothing changes, so nothing is refreshed): the payload holds carol,
	// not NOT_FOUND. A signed-out read of frank's node finds him.
	carol, frank := s.signUp(t, "carol"), s.signUp(t, "frank")
	erinToken, err := s.app.engine.IssueToken(erin, 0)
	if err != nil {
		t.Fatal(err)
	}
	erinClient := &client{s: s, Token: erinToken, ID: models.NodeID(models.KindUser, erin), Name: "erin"}
	relChange(t, erinClient, "unfollow", carol)
	var node struct{ Node *struct{ Username string } }
	anon.mustDo(t, `query($id: ID!) { node(id: $id) { ... on User { username } } }`, map[string]any{"id": frank.ID}, &node)
	if node.Node == nil || node.Node.Username != "frank" {
		t.Fatalf("frank's node, read signed out right after his sign-up: %+v, want frank", node.Node)
	}

	// dave follows erin behind the service's back (no mark): the stopped
	// replica does not have it, and a signed-out read of the list, which
	// may lag, is served by the replica.
	now := time.Now().UTC()
	primary := s.app.store.DB()
	if err := primary.Create(&models.Following{UserID: dave, FolloweeID: erin, ID: 1, CreatedAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	if err := primary.Create(&models.Follower{UserID: erin, FollowerID: dave, ID: 1, CreatedAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	before, _ := s.app.store.ReadRoutes()
	if got := relNames(relPage(t, anon, "following", "dave", relArgs{First: relInt(10)})); len(got) != 0 {
		t.Fatalf("dave's following, read signed out from the stopped replica: %v, want none yet", got)
	}
	if after, _ := s.app.store.ReadRoutes(); after <= before {
		t.Fatalf("the signed-out read did not go to the replica (replica reads %d before, %d after)", before, after)
	}

	// A post of dave's written behind the service's back has no cached
	// copy and is in no replica yet: a signed-out read of it by id fills
	// from the replica, misses it, and reads the primary.
	davePost := &models.Post{ID: now.UnixNano() / 1000 % (1 << 50), AuthorID: dave, Body: "behind the back", CreatedAt: now}
	if err := primary.Create(davePost).Error; err != nil {
		t.Fatal(err)
	}
	var post struct{ Node *struct{ Body string } }
	anon.mustDo(t, `query($id: ID!) { node(id: $id) { ... on Post { body } } }`, map[string]any{"id": models.NodeID(models.KindPost, davePost.ID)}, &post)
	if post.Node == nil || post.Node.Body != davePost.Body {
		t.Fatalf("dave's new post, read signed out by id during the stop: %+v, want it found", post.Node)
	}

	testenv.Replication(t, replicaServer, "START SLAVE")
	waitReplicaFresh(t, s.app.store)
	if got := relNames(relPage(t, anon, "following", "dave", relArgs{First: relInt(10)})); !slices.Equal(got, []string{"erin"}) {
		t.Fatalf("dave's following, read signed out after START SLAVE: %v, want [erin]", got)
	}
}

// TestReplicaLagSendsReadsToPrimary: a read that may lag goes to the
// replica while it keeps up; once replication has stood still for longer
// than REPLICA_MAX_LAG, the same read is answered by the primary (a row the
// replica lacks is seen), and after START SLAVE by the replica again.
func TestReplicaLagSendsReadsToPrimary(t *testing.T) {
	ctx := context.Background()
	dbDSN := testenv.MySQL(t)
	dsn, replicaServer := testenv.StoppableReplica(t, dbDSN)
	const maxLag = 200 * time.Millisecond
	st, err := store.Open(ctx, store.Config{MySQLDSN: dbDSN, ReplicaDSNs: []string{dsn}, ReplicaMaxLag: maxLag})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	waitReplicaFresh(t, st)
	following := func() []models.Relation {
		t.Helper()
		rows, err := st.FollowingPage(store.AllowReplica(ctx), 7, store.Older, 1<<62, 10)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if rows := following(); len(rows) != 0 {
		t.Fatalf("following of a fresh database: %v", rows)
	}
	if replica, _ := st.ReadRoutes(); replica == 0 {
		t.Fatal("a fresh replica did not serve the read")
	}

	testenv.Replication(t, replicaServer, "STOP SLAVE")
	t.Cleanup(func() { testenv.Replication(t, replicaServer, "START SLAVE") })
	if err := st.DB().Create(&models.Following{UserID: 7, FolloweeID: 8, ID: 1, CreatedAt: time.Now().UTC()}).Error; err != nil {
		t.Fatal(err)
	}
	// Once the guard sees the replica more than maxLag behind, the read
	// goes to the primary and finds the row, which the replica still lacks.
	deadline := time.Now().Add(testenv.Scale(30 * time.Second))
	for len(following()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the read still misses the primary's row 30s after replication stopped (max lag %s)", maxLag)
		}
		time.Sleep(maxLag / 4)
	}
	if _, primary := st.ReadRoutes(); primary == 0 {
		t.Fatal("the row was found, but no read was sent back to the primary")
	}
	if n := countOnReplica(t, dsn); n != 0 {
		t.Fatalf("the stopped replica holds %d followings; the row must have come from the primary", n)
	}

	testenv.Replication(t, replicaServer, "START SLAVE")
	waitReplicaFresh(t, st)
	before, _ := st.ReadRoutes()
	if rows := following(); len(rows) != 1 || rows[0].UserID != 8 {
		t.Fatalf("following after START SLAVE: %v, want user 8", rows)
	}
	if after, _ := st.ReadRoutes(); after != before+1 {
		t.Fatalf("after START SLAVE the read went to the primary (replica reads %d, then %d)", before, after)
	}
}

// waitReplicaFresh waits until the replicas hold every commit made so far.
func waitReplicaFresh(t testing.TB, st *store.Store) {
	t.Helper()
	if !st.WaitFresh(context.Background(), time.Now(), testenv.Scale(30*time.Second)) {
		t.Fatal("the replica did not catch up with the primary within 30s")
	}
}

// countOnReplica counts the followings rows on the replica itself.
func countOnReplica(t testing.TB, dsn string) int {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM followings").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// storeUser makes a user in the store directly and returns their id.
func storeUser(t testing.TB, s *testServer, username string) int64 {
	t.Helper()
	now := time.Now().UTC()
	u := &models.User{ID: now.UnixNano() / 1000 % (1 << 50), Username: username, DisplayName: username, CreatedAt: now, LastActiveAt: now}
	if err := s.app.store.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// relNames lists the usernames of a followers or following page.
func relNames(c relConnection) []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.Username)
	}
	return out
}

// TestReplicaUnreachableStopsStartup: a replica that does not answer stops
// the server at start with the entry and its address, instead of serving
// with reads that fail later.
func TestReplicaUnreachableStopsStartup(t *testing.T) {
	dir := t.TempDir()
	_, err := newApp(context.Background(), settings.Settings{MySQLDSN: testenv.MySQL(t), MySQLReplicaDSNs: []string{"root@tcp(127.0.0.1:1)/feed?timeout=2s"},
		ReplicaMaxLag: time.Second, DataDir: dir}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "MYSQL_REPLICA_DSNS entry 1 (127.0.0.1:1)") {
		t.Fatalf("unreachable replica: %v, want an error naming MYSQL_REPLICA_DSNS entry 1 and its address", err)
	}
}
