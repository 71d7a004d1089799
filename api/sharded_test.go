package api

import (
	"fmt"
	"testing"
	"time"

	feedconfig "feedservice/feed/config"
	"feedservice/internal/testenv"
)

// shardedServer is a test server on a sharded database of the test's own
// (a Spider head over four data nodes, migrated by the server's start with
// MYSQL_SHARD_DSNS), in feed mode mode.
func shardedServer(t *testing.T, mode feedconfig.Mode) *testServer {
	t.Helper()
	head, nodes := testenv.ShardedMySQL(t)
	return newTestServer(t, backendReal, func(c *config) {
		c.MySQLDSN, c.MySQLShardDSNs, c.MySQLReplicaDSNs = head, nodes, nil
		c.FeedMode = string(mode)
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
