package feed

import (
	"context"
	"strconv"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
	"feedservice/store"
)

// TestReplicaRebuildFindsWhatTheFanoutMissed: a returning reader's inbox is
// rebuilt in the background, and the reader's followee posts while it
// runs: after the rebuild took its lock, before the reader entered the
// index of active inboxes. That post's fan-out reaches no inbox, and the
// replica, its replication stopped, holds every commit from before the
// lock but not the post: the rebuild must read the primary (the replicas
// are not fresh as of the reader's entry in the index), and the rebuilt
// inbox holds the post. It stops replication on the replica
// testenv.StoppableReplica keeps for it, so it runs in the replica pass
// (scripts/test-side.sh), not in parallel.
func TestReplicaRebuildFindsWhatTheFanoutMissed(t *testing.T) {
	dsn := testenv.MySQL(t)
	replicaDSN, replicaServer := testenv.StoppableReplica(t, dsn)
	// The lag guard off (an hour), as a replica that stopped a moment ago
	// is within it: only the freshness the rebuild asks for can send the
	// read to the primary.
	st := depstest.Store(t, store.Config{MySQLDSN: dsn, ReplicaDSNs: []string{replicaDSN}, ReplicaMaxLag: time.Hour})
	rdb, prefix := testenv.Redis(t)
	te := startTestEngine(t, st, rdb, prefix, func(c *config.Config) { c.Mode = config.ModePush })
	ctx := context.Background()

	author, reader := te.user("author"), te.user("reader")
	te.follow(reader, author)
	before := te.post(author, "before the rebuild")
	te.settle()
	// The follow marked the reader as having written (read your writes):
	// their reads would go to the primary whatever the replicas hold.
	for _, u := range []int64{reader, author} {
		if err := rdb.Del(ctx, te.keys.RecentWrite(u)).Err(); err != nil {
			t.Fatal(err)
		}
	}

	// The rebuild's first command after its lock drops the reader's
	// followee set: held there, the reader is not yet in the index.
	hold := testenv.HoldCommands(testenv.IsCommand("del", te.keys.Following(reader)))
	rdb.AddHook(hold)
	defer hold.Release()

	size := 5
	if _, err := te.Feed(ctx, reader, paging.PageArgs{First: &size}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.Held():
	case <-time.After(testenv.Scale(30 * time.Second)):
		t.Fatal("the reader's background rebuild did not start within 30s")
	}
	// The replica holds every commit so far, the lock's time among them;
	// then it stops, and the post is committed and fanned out (to no
	// inbox: the reader is in no index yet).
	if !st.WaitFresh(ctx, time.Now(), testenv.Scale(30*time.Second)) {
		t.Fatal("the replica did not catch up with the primary within 30s")
	}
	testenv.Replication(t, replicaServer, "STOP SLAVE")
	t.Cleanup(func() { testenv.Replication(t, replicaServer, "START SLAVE") })
	during := te.post(author, "while the rebuild runs")
	if err := te.stream.WaitIdle(ctx); err != nil { // not te.settle: it waits for the held rebuild
		t.Fatal(err)
	}
	hold.Release()
	te.inboxes.Wait()

	for _, id := range []int64{during, before} {
		if err := rdb.ZScore(ctx, te.keys.Inbox(reader), strconv.FormatInt(id, 10)).Err(); err != nil {
			t.Errorf("post %d is not in the rebuilt inbox: %v", id, err)
		}
	}
	if got := te.readFeed(reader, 5); len(got) != 2 || got[0].Post != during || got[1].Post != before {
		t.Fatalf("the reader's feed after the rebuild: %v, want posts %d and %d", got, during, before)
	}
}
