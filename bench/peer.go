package main

// The peer-shaped workload: the set-up this service was measured in beside
// GoToSocial, on a database and server of its own. 2,000 users; 200
// readers, each following 100 random authors; 20 posts per author; loaded
// through the API (signUp, follow, createPost); then read by GraphQL GET
// with the load test's feed selection, by a client that only reads the
// body and discards it: pages/s at 8 clients, and the latency of one
// client's page, the one a person feels.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// peerShape is the peer's set-up; -quick runs a tenth of it.
type peerShape struct {
	Users          int `json:"users"`
	Readers        int `json:"readers"`
	FollowsEach    int `json:"followsEach"`
	PostsPerAuthor int `json:"postsPerAuthor"`
}

func peerShapeFor(quick bool) peerShape {
	if quick {
		return peerShape{Users: 200, Readers: 20, FollowsEach: 20, PostsPerAuthor: 3}
	}
	return peerShape{Users: 2000, Readers: 200, FollowsEach: 100, PostsPerAuthor: 20}
}

// PeerResult is the peer-shaped workload's figures, in the default mode.
type PeerResult struct {
	Mode        string    `json:"mode"`
	Shape       peerShape `json:"shape"`
	LoadSeconds float64   `json:"loadSeconds"`
	Clients8    Stat      `json:"clients8"` // warm first pages, 8 clients
	Client1     Stat      `json:"client1"`  // warm first pages, one client
}

// peerOneClientP50Ms bounds one client's warm first page in the peer's
// set-up: twice the peer's pace (GoToSocial's p50 was 1.3-1.5 ms beside
// this service on this box).
const peerOneClientP50Ms = 0.75

// peerMode is the mode the peer-shaped workload runs in: the default.
const peerMode = "hybrid"

// runPeer loads the peer's set-up into a database of its own through a
// server of its own, measures it, and drops both.
func (e *env) runPeer(ctx context.Context) (*PeerResult, error) {
	shape := peerShapeFor(e.o.quick)
	pr := &PeerResult{Mode: peerMode, Shape: shape}
	o := *e.o
	o.db = e.o.db + "_peer"
	prefix := e.o.prefixBase + "peer:"
	admin, err := sql.Open("mysql", o.dsn+"?multiStatements=true")
	if err != nil {
		return pr, err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+o.db+"; CREATE DATABASE "+o.db); err != nil {
		return pr, fmt.Errorf("peer database: %w", err)
	}
	defer admin.Exec("DROP DATABASE IF EXISTS " + o.db)
	deleteKeys(ctx, e.rdb, prefix+"*")
	defer deleteKeys(context.WithoutCancel(ctx), e.rdb, prefix+"*")
	g := &graph{P: graphParams{CelebrityThreshold: shape.Users}} // no celebrities: the peer has none
	if err := migrate(&o, g); err != nil {
		return pr, err
	}
	logf("[peer] starting the server (-feed-mode=%s, database %s)", peerMode, o.db)
	s, err := startServer(ctx, &o, peerMode, prefix, g)
	if err != nil {
		return pr, err
	}
	defer s.stop()
	c := newClient(s.url)
	start := time.Now()
	tokens, err := e.loadPeer(ctx, c, shape)
	if err != nil {
		return pr, err
	}
	db, err := openBenchDB(&o)
	if err != nil {
		return pr, err
	}
	defer db.Close()
	(&modeRun{env: &env{o: &o, db: db, rdb: e.rdb}, prefix: prefix}).settle(ctx)
	pr.LoadSeconds = time.Since(start).Seconds()
	logf("[peer] loaded through the API in %.1fs", pr.LoadSeconds)

	get := newPeerGetter(s.url)
	readers := tokens[:shape.Readers]
	// Each reader's first read builds their inbox; the check reads the
	// body once, to see a full page without errors.
	var bad atomic.Int64
	var firstErr atomic.Value
	parallel(len(readers), 8, func(k int) {
		body, err := get.page(ctx, readers[k], true)
		if err == nil && (!strings.Contains(body, `"edges":[{`) || strings.Contains(body, `"errors"`)) {
			err = fmt.Errorf("not a page: %.200s", body)
		}
		if err != nil {
			bad.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		}
	})
	e.check("peer", "peer: first pages by GET, no errors", bad.Load() == 0, "%d bad pages; first: %v", bad.Load(), firstErr.Load())
	// Their inboxes are rebuilt after those pages, in the background: the
	// warm pages are measured once every one is whole.
	whole, waited := awaitWholeInboxes(ctx, e.rdb, prefix, len(readers))
	e.check("peer", "peer: every reader's inbox rebuilt", whole >= len(readers), "%d of %d inboxes whole %.0fs after the first pages", whole, len(readers), waited.Seconds())
	for _, clients := range []int{8, 1} {
		logf("[peer] warm first pages by GET, %d client(s), %v", clients, e.o.dur)
		// Each client reads its own readers (those k with k % clients equal
		// to its number), as people do: a reader's requests never overlap,
		// so none meets MAX_OPERATIONS_PER_VIEWER (20 readers for 8 clients
		// in -quick had five at once now and then).
		r, el := closedLoop(ctx, clients, e.o.dur, func(ctx context.Context, client int) error {
			k := rand.IntN(len(readers))
			if own := (len(readers) - client + clients - 1) / clients; own > 0 {
				k = client + clients*rand.IntN(own)
			}
			_, err := get.page(ctx, readers[k], false)
			return err
		})
		st := r.stat(fmt.Sprintf("peer-shaped first page, %d client(s)", clients), el)
		logf("  %s", fmtStat(st))
		e.check("peer", fmt.Sprintf("peer: %d client(s), no errors", clients), st.Errors == 0, "%d errors: %v", st.Errors, r.errMsg)
		if clients == 8 {
			pr.Clients8 = st
		} else {
			pr.Client1 = st
		}
	}
	return pr, nil
}

// loadPeer signs the users up, has the readers follow their authors, and
// posts every author's posts, through the API (8 clients); it returns the
// users' tokens, the readers first.
func (e *env) loadPeer(ctx context.Context, c *client, shape peerShape) ([]string, error) {
	rng := rand.New(rand.NewPCG(0xfeed, 0x9ee7))
	tokens := make([]string, shape.Users)
	ids := make([]int64, shape.Users)
	step := func(what string, n int, f func(k int) error) error {
		t := time.Now()
		var failed atomic.Value
		var done atomic.Int64
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Second):
					logf("  %s: %d of %d", what, done.Load(), n)
				}
			}
		}()
		parallel(n, 8, func(k int) {
			if failed.Load() != nil || ctx.Err() != nil {
				return
			}
			if err := f(k); err != nil {
				failed.CompareAndSwap(nil, fmt.Errorf("%s %d: %w", what, k, err))
			}
			done.Add(1)
		})
		close(stop)
		if err, _ := failed.Load().(error); err != nil {
			return err
		}
		logf("  %s: %d in %.1fs", what, n, time.Since(t).Seconds())
		return ctx.Err()
	}
	err := step("signUp", shape.Users, func(k int) error {
		var out struct {
			SignUp struct {
				Token string
				User  struct{ ID string }
			}
		}
		err := c.do(ctx, "", `mutation($u: String!, $p: String!) { signUp(input: {username: $u, password: $p}) { token user { id } } }`,
			map[string]any{"u": fmt.Sprintf("peer%04d", k), "p": BenchPassword}, &out)
		if err == nil {
			tokens[k] = out.SignUp.Token
			ids[k], err = parseNodeID(out.SignUp.User.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// Each reader follows their authors one after another (one signed-in
	// user may run only a few operations at once); the readers in parallel.
	authors := make([][]int, shape.Readers)
	for r := range authors {
		for _, a := range rng.Perm(shape.Users - 1)[:shape.FollowsEach] {
			if a >= r {
				a++ // anyone but the reader
			}
			authors[r] = append(authors[r], a)
		}
	}
	if err := step("follow (each reader's)", shape.Readers, func(r int) error {
		for _, a := range authors[r] {
			if err := c.follow(ctx, tokens[r], ids[a], true); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// Round by round, so the posts of every author interleave in time.
	posts := shape.Users * shape.PostsPerAuthor
	if err := step("createPost", posts, func(k int) error {
		author, round := k%shape.Users, k/shape.Users
		_, err := c.createPost(ctx, tokens[author], fmt.Sprintf("post %d of peer%04d: the peer-shaped workload's text, about as long as a short status update.", round, author))
		return err
	}); err != nil {
		return nil, err
	}
	return tokens, nil
}

// peerGetter is the peer workload's minimal client: GraphQL GET of the
// feed's first page, body read and discarded.
type peerGetter struct {
	hc  *http.Client
	url string
}

func newPeerGetter(base string) *peerGetter {
	q := url.Values{"query": {feedQuery}, "variables": {fmt.Sprintf(`{"first":%d}`, pageSize)}}
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	return &peerGetter{hc: &http.Client{Transport: tr, Timeout: 60 * time.Second}, url: base + "/query?" + q.Encode()}
}

// page gets tok's first page; keep returns its body, else it is discarded.
func (p *peerGetter) page(ctx context.Context, tok string, keep bool) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := p.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var body strings.Builder
	if keep {
		_, err = io.Copy(&body, res.Body)
	} else {
		_, err = io.Copy(io.Discard, res.Body)
	}
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d", res.StatusCode)
	}
	return body.String(), err
}

// peerTargets: one client's warm first page in the peer's set-up, and its
// pages/s at 8 clients (reported).
func (r *Result) peerTargets() []TargetRow {
	const target, rate = "peer-shaped workload, warm first page, one client, p50", "peer-shaped workload, warm first pages, 8 clients"
	bound := fmt.Sprintf("< %.2f ms", peerOneClientP50Ms)
	p := r.Peer
	if p == nil || p.Client1.Count == 0 {
		return []TargetRow{notMeasured(target, bound, "not in this run"), notMeasured(rate, "reported", "not in this run")}
	}
	v := p.Client1.P50
	return []TargetRow{
		{Target: target, Mode: p.Mode, Measured: fmt.Sprintf("%.2f ms (p99 %.2f ms, %s pages/s)", v, p.Client1.P99, thousands(p.Client1.Throughput)),
			Bound: bound, Status: targetStatus(v < peerOneClientP50Ms), Share: peerOneClientP50Ms / max(v, 1e-9)},
		{Target: rate, Mode: p.Mode, Measured: fmt.Sprintf("%s pages/s (p50 %.2f ms, p99 %.2f ms)", thousands(p.Clients8.Throughput), p.Clients8.P50, p.Clients8.P99),
			Bound: "reported", Status: "reported"},
	}
}

// awaitWholeInboxes polls (every 50 ms, for at most 120 s) until at least
// n inboxes under prefix are whole (their floor marker set), and says how
// many were and how long it waited.
func awaitWholeInboxes(ctx context.Context, rdb redis.UniversalClient, prefix string, n int) (int, time.Duration) {
	start := time.Now()
	whole := 0
	for time.Since(start) < 120*time.Second && ctx.Err() == nil {
		var keys []string
		iter := rdb.Scan(ctx, 0, prefix+"feed:{u*}", 1000).Iterator()
		for iter.Next(ctx) {
			if k := iter.Val(); !strings.HasSuffix(k, ":tmp") {
				keys = append(keys, k)
			}
		}
		pipe := rdb.Pipeline()
		counts := make([]*redis.IntCmd, len(keys))
		for i, k := range keys {
			counts[i] = pipe.ZCount(ctx, k, "-1", "-1")
		}
		pipe.Exec(ctx)
		whole = 0
		for _, c := range counts {
			if c.Val() > 0 {
				whole++
			}
		}
		if whole >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return whole, time.Since(start)
}
