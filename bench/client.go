package main

// The load generator's GraphQL client over HTTP POST /query, and latency
// statistics.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"feedservice/internal/gqlclient"
)

type client struct{ gql *gqlclient.Client }

func newClient(url string) *client {
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second}
	return &client{gql: gqlclient.New(url, &http.Client{Transport: tr, Timeout: 60 * time.Second})}
}

// do posts one GraphQL request and decodes data into out.
func (c *client) do(ctx context.Context, token, query string, vars map[string]any, out any) error {
	return c.gql.Do(ctx, token, query, vars, out)
}

// feedSelection is what a page asks of a feed connection, the home
// feed's or a list's.
const feedSelection = `{
    edges {
      cursor
      node {
        addedAt
        post { id body createdAt repostCount author { id username displayName followerCount postCount } }
        reposters { id username }
      }
    }
    pageInfo { hasNextPage endCursor }
  }`

const feedQuery = `query Feed($first: Int, $after: String) {
  feed(first: $first, after: $after) ` + feedSelection + `
}`

// listFeedQuery asks a list's feed for the same page as feedQuery.
const listFeedQuery = `query ListFeed($list: ID!, $first: Int, $after: String) {
  node(id: $list) { ... on List { feed(first: $first, after: $after) ` + feedSelection + ` } }
}`

type feedPage struct {
	Feed struct {
		Edges []struct {
			Cursor string
			Node   struct {
				Post struct {
					ID     string
					Author struct{ ID string }
				}
			}
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

// keys decodes the page's cursors to their sort keys (the benchmark knows
// the layout: base64url "feed:<key>"; the API treats them as opaque).
func (p *feedPage) keys() ([]int64, error) {
	out := make([]int64, 0, len(p.Feed.Edges))
	for _, e := range p.Feed.Edges {
		raw, err := base64.RawURLEncoding.DecodeString(e.Cursor)
		if err != nil {
			return nil, err
		}
		_, num, _ := strings.Cut(string(raw), ":")
		k, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// check says what is wrong with a page: empty, or not strictly newest first
// (also across the previous page's last key, when given).
func (p *feedPage) check(prevKey int64) error {
	keys, err := p.keys()
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return errors.New("empty feed page")
	}
	last := prevKey
	for _, k := range keys {
		if last > 0 && k >= last {
			return fmt.Errorf("feed page not sorted by cursor: %d after %d", k, last)
		}
		last = k
	}
	return nil
}

func (c *client) feed(ctx context.Context, token string, first int, after *string) (*feedPage, error) {
	vars := map[string]any{"first": first}
	if after != nil {
		vars["after"] = *after
	}
	var p feedPage
	err := c.do(ctx, token, feedQuery, vars, &p)
	return &p, err
}

// listFeed reads a page of list's feed (its node id) as a feedPage.
func (c *client) listFeed(ctx context.Context, token, list string, first int, after *string) (*feedPage, error) {
	vars := map[string]any{"list": list, "first": first}
	if after != nil {
		vars["after"] = *after
	}
	var out struct{ Node *feedPage }
	if err := c.do(ctx, token, listFeedQuery, vars, &out); err != nil {
		return nil, err
	}
	if out.Node == nil {
		return nil, fmt.Errorf("list %s not found", list)
	}
	return out.Node, nil
}

func (c *client) logIn(ctx context.Context, username string) (string, error) {
	var out struct{ LogIn struct{ Token string } }
	err := c.do(ctx, "", `mutation($u: String!, $p: String!) { logIn(input: {username: $u, password: $p}) { token } }`,
		map[string]any{"u": username, "p": BenchPassword}, &out)
	return out.LogIn.Token, err
}

// createPost returns the new post's numeric id.
func (c *client) createPost(ctx context.Context, token, text string) (int64, error) {
	var out struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	if err := c.do(ctx, token, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": text}, &out); err != nil {
		return 0, err
	}
	return parseNodeID(out.CreatePost.Post.ID)
}

func (c *client) follow(ctx context.Context, token string, userID int64, on bool) error {
	op := "follow"
	if !on {
		op = "unfollow"
	}
	return c.do(ctx, token, `mutation($id: ID!) { `+op+`(userId: $id) { viewer { followingCount } } }`, map[string]any{"id": nodeID("User", userID)}, nil)
}

func (c *client) markRead(ctx context.Context, token string) (int, error) {
	var out struct{ MarkFeedRead struct{ UnreadCount int } }
	err := c.do(ctx, token, `mutation { markFeedRead { unreadCount } }`, nil, &out)
	return out.MarkFeedRead.UnreadCount, err
}

func nodeID(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10)))
}

func parseNodeID(s string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	_, num, _ := strings.Cut(string(raw), ":")
	return strconv.ParseInt(num, 10, 64)
}

// ---- statistics ----

// Stat is one measured figure: throughput and latency percentiles (ms).
type Stat struct {
	Label      string  `json:"label,omitempty"`
	Count      int     `json:"count"`
	Errors     int     `json:"errors"`
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50Ms"`
	P95        float64 `json:"p95Ms"`
	P99        float64 `json:"p99Ms"`
	Max        float64 `json:"maxMs"`
	Mean       float64 `json:"meanMs"`
}

// recorder collects latencies from many goroutines.
type recorder struct {
	mu     sync.Mutex
	lat    []time.Duration
	errs   int
	errMsg []string
}

func (r *recorder) add(d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs++
		if len(r.errMsg) < 5 {
			r.errMsg = append(r.errMsg, err.Error())
		}
		return
	}
	r.lat = append(r.lat, d)
}

// merge adds what o recorded to r.
func (r *recorder) merge(o *recorder) {
	o.mu.Lock()
	lat, errs, msgs := slices.Clone(o.lat), o.errs, slices.Clone(o.errMsg)
	o.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat, r.errs = append(r.lat, lat...), r.errs+errs
	r.errMsg = append(r.errMsg, msgs...)[:min(len(r.errMsg)+len(msgs), 5)]
}

func (r *recorder) stat(label string, elapsed time.Duration) Stat {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := latStat(r.lat)
	s.Label, s.Errors, s.Seconds = label, r.errs, elapsed.Seconds()
	if elapsed > 0 {
		s.Throughput = float64(len(r.lat)) / elapsed.Seconds()
	}
	return s
}

func latStat(lat []time.Duration) Stat {
	s := Stat{Count: len(lat)}
	if len(lat) == 0 {
		return s
	}
	v := slices.Clone(lat)
	slices.Sort(v)
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(v)))) - 1
		return msf(v[max(0, min(len(v)-1, i))])
	}
	var sum time.Duration
	for _, d := range v {
		sum += d
	}
	s.P50, s.P95, s.P99, s.Max = pct(0.50), pct(0.95), pct(0.99), msf(v[len(v)-1])
	s.Mean = msf(sum / time.Duration(len(v)))
	return s
}

func msf(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// closedLoop runs workers goroutines calling op until the duration ends;
// each call's latency (or error) is recorded. Calls in flight at the end are
// let finish (not cancelled), and the elapsed time runs until the last one.
func closedLoop(ctx context.Context, workers int, d time.Duration, op func(ctx context.Context, worker int) error) (*recorder, time.Duration) {
	r := &recorder{}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t := time.Now()
				err := op(ctx, w)
				r.add(time.Since(t), err)
			}
		}()
	}
	wg.Wait()
	return r, time.Since(start)
}

// parallel runs f over n items with the given concurrency.
func parallel(n, conc int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
