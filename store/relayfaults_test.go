package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store/migrate"
)

// relayModel is the reference of the fault test: what the acknowledged
// writes, in the order they were acknowledged, leave.
type relayModel struct {
	follows  map[[2]int64]bool  // follower, followee
	blocks   map[[2]int64]bool  // blocker, blocked
	reposts  map[[2]int64]int64 // reposter, original: the live repost's id
	requests map[[2]int64]bool  // requester, the protected user asked
}

func (m *relayModel) blocked(a, b int64) bool {
	return m.blocks[[2]int64{a, b}] || m.blocks[[2]int64{b, a}]
}

// TestShardedMySQLRelayCompletesHalvesAcrossANodeStop: users of three
// running data nodes follow, unfollow, remove followers, block, unblock,
// repost and delete reposts, ask to follow protected users, withdraw,
// reject and approve requests with users of every node, the fourth (a
// private MariaDB) included, in one burst. The relay runs, then is held
// so that halves for the fourth node pile up; the node stops with them
// pending (between the two halves of follows, blocks and reposts) while
// the burst goes on; the relay runs again and retries; the node comes
// back. Every write whose actor's node runs is acknowledged, save those
// that must read the stopped node first (that a followee, a blocked user,
// a reposted post, an asked user or an approved requester exists there);
// once the relay is idle, every relation and request
// is on both its nodes, every count agrees with its rows, and the rows
// are those the acknowledged writes leave in the reference model: no
// follow lost or doubled, no count off.
//
// Before the relay the writes with the stopped node's users were refused
// (they committed on both nodes), and a stop between the two commits left
// half of one for good.
func TestShardedMySQLRelayCompletesHalvesAcrossANodeStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const down = 2 // the node that stops
	head, nodes := testenv.ShardedMySQL(t)
	private := testenv.StartMariaDB(t)
	headCfg, err := mysqldriver.ParseDSN(head)
	if err != nil {
		t.Fatal(err)
	}
	nodes[down] = private.CreateDatabase(headCfg.DBName)
	t.Cleanup(func() { dropServerOf(head, nodes[down]) })
	s, err := Open(ctx, Config{MySQLDSN: head, ShardDSNs: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	at := relationStore(t, s, 16) // users 1-16, user n on node n mod 4
	var actors, everyone, protected []int64
	on := true
	for u := int64(3); u <= 16; u += 3 {
		if _, err := s.UpdateProfile(ctx, u, models.ProfileChange{IsProtected: &on}, at); err != nil {
			t.Fatal(err)
		}
		protected = append(protected, u)
	}
	originals := map[int64]int64{} // author: their post
	for u := int64(1); u <= 16; u++ {
		everyone = append(everyone, u)
		if s.ShardOf(u) != down {
			actors = append(actors, u)
		}
		p := &models.Post{ID: (100+u)*MaxShards + u, AuthorID: u, Body: "original", CreatedAt: at}
		if err := s.CreatePost(ctx, p); err != nil {
			t.Fatal(err)
		}
		originals[u] = p.ID
	}

	// The relay, as the dispatcher's instance runs it, until the test
	// holds it.
	var held atomic.Bool
	var relayErrors atomic.Int64
	stopRelay, relayDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case <-stopRelay:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if held.Load() {
				continue
			}
			if _, err := s.ApplyRelays(ctx, 200); err != nil {
				relayErrors.Add(1)
			}
		}
	}()
	defer func() {
		select {
		case <-stopRelay:
		default:
			close(stopRelay)
		}
		<-relayDone
	}()

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	m := &relayModel{follows: map[[2]int64]bool{}, blocks: map[[2]int64]bool{}, reposts: map[[2]int64]int64{}, requests: map[[2]int64]bool{}}
	nodeDown := atomic.Bool{}
	seq := int64(1_000_000)
	var acked, refused, refusedNeedingDown int
	// history keeps each pair's writes, in order, for the report of a
	// pair the store and the model disagree on.
	history := map[[2]int64][]string{}
	pairHistory := func(a, b int64) string {
		return strings.Join(history[[2]int64{min(a, b), max(a, b)}], "; ")
	}
	// write runs one random write of an actor of a running node and
	// records it in the model when acknowledged.
	write := func() {
		a := actors[rng.IntN(len(actors))]
		b := everyone[rng.IntN(len(everyone))]
		if a == b {
			return
		}
		seq++
		pair := [2]int64{a, b}
		var name string
		var changed bool
		var err error
		switch r := rng.IntN(120); {
		case r < 35:
			if m.blocks[[2]int64{b, a}] {
				return // a client is told it is blocked; its follow is not tried
			}
			name = "follow"
			changed, err = s.Follow(ctx, a, b, seq, at)
			if err == nil && changed && !m.blocked(a, b) {
				m.follows[pair] = true
			}
			if errors.Is(err, ErrBlocked) {
				return
			}
		case r < 52:
			name = "unfollow"
			if changed, err = s.Unfollow(ctx, a, b, seq, at); err == nil && changed {
				delete(m.follows, pair)
			}
		case r < 62:
			name = "removeFollower"
			if changed, err = s.RemoveFollower(ctx, a, b, seq, at); err == nil && changed {
				delete(m.follows, [2]int64{b, a})
			}
		case r < 70:
			name = "block"
			if changed, err = s.Block(ctx, a, b, seq, at); err == nil && changed {
				m.blocks[pair] = true
				delete(m.follows, pair)
				delete(m.follows, [2]int64{b, a})
				delete(m.requests, pair)
				delete(m.requests, [2]int64{b, a})
			}
		case r < 76:
			name = "unblock"
			if changed, err = s.Unblock(ctx, a, b, at); err == nil && changed {
				delete(m.blocks, pair)
			}
		case r < 90:
			name = "repost"
			original := originals[b]
			p := &models.Post{ID: seq*MaxShards + a, AuthorID: a, RepostOfID: &original, CreatedAt: at}
			var got *models.Post
			got, changed, err = s.Repost(ctx, p)
			if err == nil && changed {
				m.reposts[[2]int64{a, original}] = got.ID
			}
		case r < 100:
			name = "delete a repost"
			id, ok := m.reposts[[2]int64{a, originals[b]}]
			if !ok {
				return
			}
			if _, err = s.DeletePost(ctx, id, a, at); err == nil {
				delete(m.reposts, [2]int64{a, originals[b]})
			}
		case r < 108:
			b = protected[rng.IntN(len(protected))]
			if a == b || m.blocks[[2]int64{b, a}] {
				return
			}
			pair = [2]int64{a, b}
			name = "request"
			changed, err = s.RequestFollow(ctx, a, b, seq, at)
			if err == nil && changed && !m.blocked(a, b) {
				m.requests[pair] = true
			}
			if errors.Is(err, ErrBlocked) {
				return
			}
		case r < 112:
			name = "withdraw"
			if changed, err = s.DropFollowRequest(ctx, a, b, a); err == nil && changed {
				delete(m.requests, pair)
			}
		case r < 116:
			name = "reject"
			if changed, err = s.DropFollowRequest(ctx, a, a, b); err == nil && changed {
				delete(m.requests, [2]int64{b, a})
			}
		default:
			name = "approve"
			if changed, err = s.ApproveFollowRequest(ctx, a, b, seq, at); err == nil && changed {
				delete(m.requests, [2]int64{b, a})
				if !m.blocked(a, b) {
					m.follows[[2]int64{b, a}] = true
				}
			}
		}
		history[[2]int64{min(a, b), max(a, b)}] = append(history[[2]int64{min(a, b), max(a, b)}],
			fmt.Sprintf("%s %d->%d seq %d: changed %v, err %v, relay held %v", name, a, b, seq, changed, err, held.Load()))
		switch {
		case err == nil:
			acked++
		case nodeDown.Load() && s.ShardOf(b) == down && (name == "follow" || name == "block" || name == "repost" || name == "request" || name == "approve"):
			refusedNeedingDown++ // the followee, blocked user, original, asked user or requester is read on the stopped node first
		default:
			refused++
			t.Errorf("%s %d -> %d (nodes %d, %d) refused with node %d down=%v: %v", name, a, b, s.ShardOf(a), s.ShardOf(b), down, nodeDown.Load(), err)
		}
	}
	burst := func(n int) {
		for range n {
			write()
		}
	}

	burst(150) // with the relay running
	held.Store(true)
	burst(150) // halves pile up
	pending := 0
	for _, c := range pendingRelays(t, s) {
		if s.ShardOf(c.Target) == down {
			pending++
		}
	}
	if pending == 0 {
		t.Fatal("no half waits for the node that stops: the burst wrote nothing between the two halves")
	}
	// The node stops during the burst, with those halves pending.
	nodeDown.Store(true) // from now, a write that must read it may be refused
	var stopping sync.WaitGroup
	stopping.Add(1)
	go func() { defer stopping.Done(); private.Stop() }()
	burst(50)
	stopping.Wait()
	held.Store(false) // the relay retries the stopped node's halves
	burst(150)
	if n := relayErrors.Load(); n == 0 {
		t.Error("the relay met no error while a data node was stopped")
	}
	private.Start()
	burst(100)
	nodeDown.Store(false)
	t.Logf("%d halves for the node were pending when it stopped; %d writes acknowledged, %d refused as they read the stopped node first, %d refused otherwise; %d relay rounds failed; %d requests waiting",
		pending, acked, refusedNeedingDown, refused, relayErrors.Load(), len(m.requests))

	// The relay completes every half once the node is back.
	deadline := time.Now().Add(testenv.Scale(time.Minute))
	for {
		left := pendingRelays(t, s)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d halves still pending a minute after the node came back", len(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stopRelay)
	<-relayDone

	defer func() {
		if !t.Failed() {
			return
		}
		pairs := slices.SortedFunc(maps.Keys(history), func(x, y [2]int64) int {
			return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
		})
		for _, p := range pairs {
			t.Logf("the writes of %d and %d: %s", p[0], p[1], pairHistory(p[0], p[1]))
		}
	}()
	follows := checkBothSides(t, s)
	for pair := range m.follows {
		if follows[fmt.Sprintf("%d>%d", pair[0], pair[1])] == 0 {
			t.Errorf("follow %d -> %d acknowledged, lost; the pair's writes: %s", pair[0], pair[1], pairHistory(pair[0], pair[1]))
		}
	}
	for key := range follows {
		var a, b int64
		fmt.Sscanf(key, "%d>%d", &a, &b)
		if !m.follows[[2]int64{a, b}] {
			t.Errorf("follow %s stored, not in the model; the pair's writes: %s", key, pairHistory(a, b))
		}
	}
	var blocks []models.Block
	if err := s.db.Find(&blocks).Error; err != nil {
		t.Fatal(err)
	}
	if len(blocks) != len(m.blocks) {
		t.Errorf("%d blocks stored, %d in the model", len(blocks), len(m.blocks))
	}
	for _, b := range blocks {
		if !m.blocks[[2]int64{b.BlockerID, b.BlockedID}] {
			t.Errorf("block %d -> %d stored, not in the model; the pair's writes: %s", b.BlockerID, b.BlockedID, pairHistory(b.BlockerID, b.BlockedID))
		}
	}
	var requests []models.FollowRequest
	if err := s.db.Find(&requests).Error; err != nil {
		t.Fatal(err)
	}
	if len(requests) != len(m.requests) {
		t.Errorf("%d follow requests stored, %d in the model", len(requests), len(m.requests))
	}
	for _, r := range requests {
		if !m.requests[[2]int64{r.RequesterID, r.UserID}] {
			t.Errorf("request %d -> %d stored, not in the model; the pair's writes: %s", r.RequesterID, r.UserID, pairHistory(r.RequesterID, r.UserID))
		}
	}
	var reposts []models.Post
	if err := s.db.Where("repost_of_id IS NOT NULL AND deleted_at IS NULL").Find(&reposts).Error; err != nil {
		t.Fatal(err)
	}
	if len(reposts) != len(m.reposts) {
		t.Errorf("%d live reposts stored, %d in the model", len(reposts), len(m.reposts))
	}
	for _, p := range reposts {
		if m.reposts[[2]int64{p.AuthorID, *p.RepostOfID}] != p.ID {
			t.Errorf("repost %d of %d by %d stored, not in the model", p.ID, *p.RepostOfID, p.AuthorID)
		}
	}
}

// dropServerOf drops the head's server definition of the data node dsn
// (a private MariaDB of the test, whose port another test may later get).
func dropServerOf(head, dsn string) {
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
