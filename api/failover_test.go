package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/api/settings"
	"feedservice/internal/gqlclient"
	"feedservice/internal/slot"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// failoverUnavailableBound is the longest a client may see UNAVAILABLE
// when a Redis Cluster master dies: the cluster's detection and promotion
// (about twice cluster-node-timeout, 1s here), the client's next map of
// the slots (redisClusterStateReload), and room for a loaded test machine.
const failoverUnavailableBound = 15 * time.Second

// failoverCatchUpBound is how soon after the promotion every active
// inbox must hold every post committed before it.
const failoverCatchUpBound = 3 * time.Second

// failoverReplicaLag is how long the victim's replica is cut off (frozen,
// its link closed) before the victim dies: the writes of that while reach
// no replica. Shorter than the cluster's node timeout, so that the cluster
// does not declare the replica failed meanwhile.
const failoverReplicaLag = testenv.ClusterNodeTimeout * 6 / 10

// The master of the fan-out stream dies (SIGKILL) during a burst of
// posts, feed reads and live unread counts on two instances, after its
// replica stopped taking its writes for a while (frozen, its link cut): the writes the
// master acknowledged in that while are lost when the replica is
// promoted by the cluster's own failure detection, the window in which a
// dying master loses writes, made wide. The service recovers by itself:
// requests fail with UNAVAILABLE, if at all, only for a bounded time; the
// fan-out catches up within failoverCatchUpBound of the promotion (every
// active reader's inbox holds every post committed by then); the live
// counts resume and reach the right values on both instances; and every
// active inbox and every page of every reader's feed hold exactly the
// posts MySQL holds (nothing lost, nothing extra).
func TestRedisClusterFailover(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t)
	onCluster := func(c *settings.Settings) {
		c.RedisAddr = strings.Join(cluster.Addrs(), ",")
		c.KeyPrefix = testenv.Name("t") + ":"
	}
	a := newTestServer(t, backendReal, onCluster)
	b := newTestServer(t, backendReal, liveShare(a))

	// The victim is the master of the fan-out stream; at least one
	// reader's inbox is there too.
	streamSlot := slot.Of(a.app.cfg.KeyPrefix + "fanout")
	victim := cluster.MasterOf(streamSlot)
	inboxKey := func(r *client) string { return a.app.cfg.KeyPrefix + "feed:{u" + liveUserID(t, r.Token) + "}" }
	const authors, minReaders, maxReaders = 3, 4, 16
	var as, rs []*client
	for i := range authors {
		as = append(as, a.signUp(t, "author"+string(rune('a'+i))))
	}
	onVictim := 0
	for i := 0; len(rs) < minReaders || onVictim == 0; i++ {
		if i == maxReaders {
			t.Fatalf("none of %d readers has an inbox on the stream's master %s", maxReaders, victim)
		}
		r := a.signUp(t, fmt.Sprintf("reader%02d", i))
		for _, au := range as {
			liveFollow(t, r, au)
		}
		rs = append(rs, r)
		if cluster.MasterOf(slot.Of(inboxKey(r))) == victim {
			onVictim++
		}
	}
	a.settle(t)

	// Half the readers listen on A, half on B.
	type live struct {
		c  *liveConn
		id string
	}
	var lives []live
	for i, r := range rs {
		s := []*testServer{a, b}[i%2]
		c := liveConnect(t, s, liveTransportWS, r.Token)
		id := c.subscribe(liveUnreadSub)
		if n := c.firstCount(id, 5*time.Second, "before the failover"); n != 0 {
			t.Fatalf("reader %d: first count %d, want 0", i, n)
		}
		lives = append(lives, live{c, id})
	}

	// The burst: authors post, readers read, on both instances, each
	// request's outcome noted with its time.
	type outcome struct {
		at   time.Time
		code string // "" for success
	}
	var mu sync.Mutex
	var outcomes []outcome
	var created []string
	note := func(r gqlclient.Response, err error) bool {
		code := r.Code()
		if err != nil {
			code = "transport: " + err.Error()
		}
		mu.Lock()
		outcomes = append(outcomes, outcome{time.Now(), code})
		mu.Unlock()
		return code == ""
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, au := range as {
		wg.Go(func() {
			gc := gqlclient.Client{URL: []*testServer{a, b}[i%2].URL}
			for n := 0; ctx.Err() == nil; n++ {
				var out struct {
					CreatePost struct{ Post struct{ ID string } }
				}
				r, err := gc.Post(context.Background(), au.Token, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`,
					map[string]any{"b": "burst"})
				if note(r, err) && json.Unmarshal(r.Data, &out) == nil {
					mu.Lock()
					created = append(created, out.CreatePost.Post.ID)
					mu.Unlock()
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	for i, r := range rs {
		wg.Go(func() {
			gc := gqlclient.Client{URL: []*testServer{b, a}[i%2].URL}
			for ctx.Err() == nil {
				note(gc.Post(context.Background(), r.Token, `{ feed(first: 20) { edges { node { post { id } } } } }`, nil))
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	replica := cluster.ReplicaOf(victim)
	cluster.Freeze(replica)
	cluster.CutReplicas(victim)
	time.Sleep(failoverReplicaLag)
	killed := time.Now()
	cluster.Kill(victim)
	cluster.Thaw(replica)
	successor := cluster.WaitFailover(victim, streamSlot, 30*time.Second)
	promotedAt := time.Now()
	promoted := promotedAt.Sub(killed)
	committed := mysqlPostIDs(t, a.app.cfg.MySQLDSN)
	caughtUp := waitInboxes(t, cluster, rs, inboxKey, committed, testenv.Scale(30*time.Second))
	t.Logf("fan-out caught up %s after the promotion: every one of %d inboxes holds the %d posts committed by then",
		caughtUp.Sub(promotedAt).Round(time.Millisecond), len(rs), len(committed))
	if d := caughtUp.Sub(promotedAt); d > testenv.Scale(failoverCatchUpBound) {
		t.Errorf("the fan-out caught up %s after the promotion, want within %s", d, failoverCatchUpBound)
	}
	time.Sleep(time.Until(promotedAt.Add(3 * time.Second))) // the burst goes on after the promotion
	stop()
	wg.Wait()

	var firstBad, lastBad time.Time
	ok, bad := 0, 0
	for _, o := range outcomes {
		switch {
		case o.code == "":
			ok++
		case o.code == "UNAVAILABLE":
			bad++
			if firstBad.IsZero() || o.at.Before(firstBad) {
				firstBad = o.at
			}
			if o.at.After(lastBad) {
				lastBad = o.at
			}
		default:
			t.Errorf("a request during the failover failed with %q, want success or UNAVAILABLE", o.code)
		}
	}
	window := time.Duration(0)
	if bad > 0 {
		window = lastBad.Sub(killed)
	}
	t.Logf("master %s killed; replica %s promoted after %s; %d requests ok, %d UNAVAILABLE, the last %s after the kill",
		victim, successor, promoted.Round(time.Millisecond), ok, bad, window.Round(time.Millisecond))
	if window > testenv.Scale(failoverUnavailableBound) {
		t.Errorf("clients saw UNAVAILABLE until %s after the kill, want at most %s", window, failoverUnavailableBound)
	}
	if ok == 0 || len(created) == 0 {
		t.Fatalf("no request succeeded (%d posts created)", len(created))
	}

	// The reference: the posts MySQL holds. Every post a client was told
	// about is there, and every reader's feed and live count agree with it.
	settling := time.Now()
	a.settle(t)
	b.settle(t)
	t.Logf("settled in %s", time.Since(settling).Round(time.Millisecond))
	if d := time.Since(settling); d > testenv.Scale(failoverCatchUpBound) {
		// A message that failed in the failover waited for another
		// worker's claim (15s of idleness) instead of being retried.
		t.Errorf("the fan-out settled %s after the burst, want within %s", d, failoverCatchUpBound)
	}
	want := mysqlPostIDs(t, a.app.cfg.MySQLDSN)
	for _, id := range created {
		if !slices.Contains(want, id) {
			t.Fatalf("post %s was created but MySQL does not hold it", id)
		}
	}
	waitInboxes(t, cluster, rs, inboxKey, want, testenv.Scale(10*time.Second))
	for i, r := range rs {
		got := failoverFeed(t, liveOn(r, []*testServer{a, b}[i%2]))
		if !slices.Equal(got, want) {
			t.Errorf("reader %d: feed has %d posts, MySQL %d; missing %v, extra %v", i, len(got), len(want), minus(want, got), minus(got, want))
		}
		lives[i].c.expectCount(lives[i].id, min(len(want), 999), 10*time.Second, fmt.Sprintf("reader %d after the failover", i))
	}
}

// waitInboxes waits until the inbox of every reader (each active: they
// read their feeds throughout) holds every post of want, and returns when;
// past within it fails the test with what is missing where.
func waitInboxes(t *testing.T, cluster *testenv.RedisClusterServer, readers []*client, key func(*client) string, want []string, within time.Duration) time.Time {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
	defer rdb.Close()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for {
		var missing []string
		for i, r := range readers {
			members, err := rdb.ZRange(ctx, key(r), 0, -1).Result()
			if err != nil {
				missing = append(missing, fmt.Sprintf("reader %d: %v", i, err))
				continue
			}
			has := map[string]bool{}
			for _, m := range members {
				if id, err := strconv.ParseInt(m, 10, 64); err == nil {
					has[models.NodeID("Post", id)] = true
				}
			}
			if len(members) == 0 {
				missing = append(missing, fmt.Sprintf("reader %d: no inbox", i))
			}
			for _, id := range want {
				if !has[id] {
					missing = append(missing, fmt.Sprintf("reader %d: %s", i, id))
				}
			}
		}
		if len(missing) == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, inboxes still lack posts MySQL holds: %v", within, missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mysqlPostIDs lists the posts in the database, newest first, as global ids.
func mysqlPostIDs(t *testing.T, dsn string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT id FROM posts WHERE deleted_at IS NULL ORDER BY id DESC")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, models.NodeID("Post", id))
	}
	return out
}

// failoverFeed reads c's whole feed, newest first.
func failoverFeed(t *testing.T, c *client) []string {
	t.Helper()
	var out []string
	vars := map[string]any{"first": 100}
	for {
		edges, info := liveFeed(t, c, vars)
		for _, e := range edges {
			out = append(out, e.Node.Post.ID)
		}
		if !info.HasNextPage {
			return out
		}
		vars["after"] = *info.EndCursor
	}
}

// minus lists what of xs is not in ys.
func minus(xs, ys []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			out = append(out, x)
		}
	}
	return out
}
