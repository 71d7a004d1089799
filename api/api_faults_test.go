package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/apperr"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// Faults at the API: MariaDB restarted and Redis killed and restarted
// during a burst of posts, each on a private server of the test. Each test
// ends with the reference-model check (internal/feedmodel) of every reader's
// feed and unread count: nothing lost, nothing extra.

// faultAttempt is one createPost of a burst and what came of it.
type faultAttempt struct {
	author *client
	body   string
	at     time.Time
	res    response
	err    error // a transport failure
}

// ok says whether the server acknowledged the post.
func (a faultAttempt) ok() bool {
	return a.err == nil && a.res.Status == http.StatusOK && len(a.res.Errors) == 0
}

// faultBurst has every author post, one after the other, until stop closes.
type faultBurst struct {
	mu       sync.Mutex
	attempts []faultAttempt
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startFaultBurst(s *testServer, authors []*client) *faultBurst {
	b := &faultBurst{stop: make(chan struct{})}
	for _, a := range authors {
		b.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-b.stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				body := fmt.Sprintf("burst %s %d", a.Name, i)
				res, err := rawDo(s.URL, a.Token, createPostMutation, map[string]any{"b": body})
				b.mu.Lock()
				b.attempts = append(b.attempts, faultAttempt{author: a, body: body, at: time.Now(), res: res, err: err})
				b.mu.Unlock()
			}
		})
	}
	return b
}

// since lists the attempts made after t.
func (b *faultBurst) since(t time.Time) []faultAttempt {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []faultAttempt
	for _, a := range b.attempts {
		if a.at.After(t) {
			out = append(out, a)
		}
	}
	return out
}

// waitFor waits until cond holds for the attempts made after t.
func (b *faultBurst) waitFor(t *testing.T, after time.Time, what string, cond func([]faultAttempt) bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scale(30 * time.Second))
	for !cond(b.since(after)) {
		if time.Now().After(deadline) {
			t.Fatalf("burst: %s did not happen within 30s (%d attempts since)", what, len(b.since(after)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *faultBurst) finish() []faultAttempt {
	close(b.stop)
	b.wg.Wait()
	return b.since(time.Time{})
}

func countOK(as []faultAttempt) (ok, failed int) {
	for _, a := range as {
		if a.ok() {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// faultWorld sets up authors and readers on s: each reader follows two or
// three authors and has read its feed (an inbox exists, so that the fan-out
// must reach it).
func faultWorld(t *testing.T, s *testServer) (w *feedWorld, authors, readers []*client) {
	w = feedNewWorld(t, s)
	for i := range 3 {
		authors = append(authors, w.signUp(fmt.Sprintf("author%d", i)))
	}
	for i := range 4 {
		r := w.signUp(fmt.Sprintf("reader%d", i))
		for j, a := range authors {
			if j != i%len(authors) || i == 3 {
				w.follow(r, a)
			}
		}
		readers = append(readers, r)
	}
	w.post(authors[0], "before the burst")
	for _, r := range readers {
		w.check(r, 5)
	}
	return w, authors, readers
}

// faultTimelines reads each author's whole timeline (from MySQL, with no
// wait for the workers): post bodies to posts.
func faultTimelines(t *testing.T, authors []*client) map[string]feedPosted {
	t.Helper()
	out := map[string]feedPosted{}
	for _, a := range authors {
		after := ""
		guard := pageGuard{t: t, what: "timeline of " + a.Name}
		for {
			var page struct {
				Node struct {
					Timeline struct {
						TotalCount int
						Edges      []struct {
							Node struct {
								feedPosted
								Body string
							}
						}
						PageInfo feedPageInfo
					}
				}
			}
			vars := map[string]any{"id": a.ID, "after": after}
			if after == "" {
				vars["after"] = nil
			}
			mustRawDo(t, a.s.URL, a.Token, `query($id: ID!, $after: String) { node(id: $id) { ... on User {
  timeline(first: 100, after: $after) { totalCount edges { node { id createdAt body } } pageInfo { hasNextPage endCursor } } } } }`, vars, &page)
			for _, e := range page.Node.Timeline.Edges {
				out[e.Node.Body] = e.Node.feedPosted
			}
			if !page.Node.Timeline.PageInfo.HasNextPage {
				break
			}
			guard.follow(page.Node.Timeline.PageInfo.EndCursor, page.Node.Timeline.TotalCount)
			after = *page.Node.Timeline.PageInfo.EndCursor
		}
	}
	return out
}

// faultRecord puts the burst's posts in the model, in the server's order:
// every acknowledged post must exist with the id it was answered with; a
// failed one may exist (a commit whose answer was lost with the
// connection) and then counts as written. It returns how many failed posts
// exist.
func faultRecord(t *testing.T, w *feedWorld, authors []*client, attempts []faultAttempt) int {
	t.Helper()
	stored := faultTimelines(t, authors)
	type written struct {
		author string
		p      feedPosted
	}
	var all []written
	ambiguous := 0
	for _, a := range attempts {
		p, exists := stored[a.body]
		if a.ok() {
			answered, err := postedOf(a.res)
			if err != nil {
				t.Fatal(err)
			}
			if !exists || p.ID != answered.ID {
				t.Fatalf("post %q was acknowledged as %s but the timeline holds %+v (exists %v)", a.body, answered.ID, p, exists)
			}
		} else if exists {
			ambiguous++
		}
		if exists {
			all = append(all, written{a.author.ID, p})
		}
	}
	ps := make([]feedPosted, len(all))
	by := map[string]string{}
	for i, x := range all {
		ps[i] = x.p
		by[x.p.ID] = x.author
	}
	sortPostedByTime(ps)
	for _, p := range ps {
		w.m.AddPost(by[p.ID], p.ID, p.CreatedAt)
	}
	return ambiguous
}

// faultCheckModel checks every reader's feed and unread count against the
// model.
func faultCheckModel(t *testing.T, w *feedWorld, readers []*client) {
	t.Helper()
	for _, r := range readers {
		w.check(r, 7)
		if got, want := feedUnread(t, r), w.m.Unread(r.ID); got != want {
			t.Fatalf("unreadCount of %s is %d, the model says %d", r.Name, got, want)
		}
	}
}

// faultCheckOutbox checks in SQL that the database holds no partial write:
// every post has its post_created event, and each author's post_count is
// the number of their posts.
func faultCheckOutbox(t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	events := map[int64]bool{}
	rows, err := db.Query("SELECT payload FROM outbox_events WHERE kind = ?", models.EventPostCreated)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var payload string
		var p models.PostEventPayload
		if err := rows.Scan(&payload); err != nil || json.Unmarshal([]byte(payload), &p) != nil {
			t.Fatalf("outbox payload %q: %v", payload, err)
		}
		events[p.PostID] = true
	}
	rows.Close()
	rows, err = db.Query("SELECT id FROM posts")
	if err != nil {
		t.Fatal(err)
	}
	posts := 0
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		posts++
		if !events[id] {
			t.Fatalf("post %d exists without its post_created outbox event", id)
		}
	}
	rows.Close()
	if len(events) != posts {
		t.Fatalf("%d post_created events for %d posts", len(events), posts)
	}
	var mismatched int
	if err := db.QueryRow(`SELECT COUNT(*) FROM users u WHERE u.post_count <>
  (SELECT COUNT(*) FROM posts p WHERE p.author_id = u.id AND p.deleted_at IS NULL)`).Scan(&mismatched); err != nil {
		t.Fatal(err)
	}
	if mismatched > 0 {
		t.Fatalf("%d users' post_count differs from their posts", mismatched)
	}
}

// TestFaultMariaDBRestartDuringBurst: MariaDB stops (a clean shutdown)
// while authors post. While it is down every request that needs it is
// answered with UNAVAILABLE (HTTP 200, a coded error, never a 500 or
// INTERNAL_SERVER_ERROR), and a warm feed page, which does not, is served
// from the cache tiers; nothing is half written (each post exists with
// its outbox event and its author's count, or not at all); once MariaDB is
// back the same server serves again without a restart of its own, and every
// feed matches the model.
func TestFaultMariaDBRestartDuringBurst(t *testing.T) {
	t.Parallel()
	db := testenv.StartMariaDB(t)
	dsn := db.CreateDatabase("feedfault")
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.MySQLDSN = dsn })
	w, authors, readers := faultWorld(t, s)

	b := startFaultBurst(s, authors)
	start := time.Now()
	b.waitFor(t, start, "10 acknowledged posts", func(as []faultAttempt) bool { ok, _ := countOK(as); return ok >= 10 })
	const warmRead = `{ feed(first: 5) { edges { cursor node { post { id body author { username } } } } } }`
	if r, err := rawDo(s.URL, readers[0].Token, warmRead, nil); err != nil || len(r.Errors) > 0 {
		t.Fatalf("feed read before the stop: %+v, %v", r.Errors, err)
	}
	db.Stop()
	down := time.Now()
	b.waitFor(t, down, "9 refused posts", func(as []faultAttempt) bool { _, failed := countOK(as); return failed >= 9 })

	// While it is down: refused with UNAVAILABLE, reads too.
	for _, a := range b.since(down) {
		if a.ok() {
			continue
		}
		if a.err != nil || a.res.Status >= 500 || a.res.Code() != string(apperr.CodeUnavailable) {
			t.Fatalf("createPost with MariaDB down: status %d, errors %+v, err %v; want a %s error", a.res.Status, a.res.Errors, a.err, apperr.CodeUnavailable)
		}
	}
	// A read that needs MySQL (a follower list) too; a warm feed page does
	// not: the cache tiers serve it.
	for _, q := range []string{`{ viewer { username followers(first: 2) { edges { cursor } } } }`} {
		r, err := rawDo(s.URL, readers[0].Token, q, nil)
		if err != nil || r.Status >= 500 || r.Code() != string(apperr.CodeUnavailable) || strings.Contains(r.Errors[0].Message, "tcp") {
			t.Fatalf("%s with MariaDB down: status %d, errors %+v, err %v; want a %s error without internals", q, r.Status, r.Errors, err, apperr.CodeUnavailable)
		}
	}
	if r, err := rawDo(s.URL, readers[0].Token, warmRead, nil); err != nil || r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("a warm feed page with MariaDB down: status %d, errors %+v, err %v; want it served from the cache tiers", r.Status, r.Errors, err)
	}

	db.Start()
	back := time.Now()
	b.waitFor(t, back, "10 acknowledged posts after the restart", func(as []faultAttempt) bool { ok, _ := countOK(as); return ok >= 10 })
	attempts := b.finish()
	ok, failed := countOK(attempts)

	ambiguous := faultRecord(t, w, authors, attempts)
	t.Logf("%d posts acknowledged, %d refused (%d of them committed before the connection was cut)", ok, failed, ambiguous)
	faultCheckOutbox(t, dsn)
	faultCheckModel(t, w, readers)
}

// TestFaultRedisRestartDuringBurst: Redis is killed (all its data lost)
// while authors post. Posts keep being acknowledged (MySQL commits them,
// their events wait in the outbox) and feeds and unread counts, read while
// Redis is down, are served from MySQL and already match the model. Redis
// comes back empty; the backlog is fanned out and every feed and unread
// count matches the model again.
func TestFaultRedisRestartDuringBurst(t *testing.T) {
	t.Parallel()
	r := testenv.StartRedis(t)
	s := newTestServer(t, backendReal, func(c *settings.Settings) { c.RedisAddr = r.Addr() })
	w, authors, readers := faultWorld(t, s)

	b := startFaultBurst(s, authors)
	start := time.Now()
	b.waitFor(t, start, "10 acknowledged posts", func(as []faultAttempt) bool { ok, _ := countOK(as); return ok >= 10 })
	r.Kill()
	down := time.Now()
	b.waitFor(t, down, "10 posts with Redis down", func(as []faultAttempt) bool { return len(as) >= 10 })
	attempts := b.finish()
	for _, a := range attempts {
		if !a.ok() {
			t.Fatalf("createPost %q: status %d, errors %+v, err %v; want it acknowledged, Redis or not", a.body, a.res.Status, a.res.Errors, a.err)
		}
	}
	faultRecord(t, w, authors, attempts) // reads timelines: MySQL only

	// Reads with Redis down fall back to MySQL, and are right.
	for _, c := range readers {
		res, err := rawDo(s.URL, c.Token, feedPageQuery, map[string]any{"first": 100})
		if err != nil || len(res.Errors) > 0 {
			t.Fatalf("feed of %s with Redis down: errors %+v, err %v", c.Name, res.Errors, err)
		}
		var out struct {
			Feed struct {
				Edges []struct {
					Node struct {
						Post      struct{ ID string }
						Reposters []struct{ ID string }
					}
				}
			}
		}
		json.Unmarshal(res.Data, &out)
		var got, want []string
		for _, e := range out.Feed.Edges {
			got = append(got, e.Node.Post.ID)
		}
		for _, e := range w.m.Feed(c.ID) {
			want = append(want, e.PostID)
		}
		if !slices.Equal(got, want[:min(100, len(want))]) {
			t.Fatalf("feed of %s with Redis down:\n got %v\nwant %v", c.Name, got, want)
		}
		res, err = rawDo(s.URL, c.Token, `{ feed(first: 1) { unreadCount } }`, nil)
		var unread struct{ Feed struct{ UnreadCount int } }
		if err != nil || len(res.Errors) > 0 || json.Unmarshal(res.Data, &unread) != nil || unread.Feed.UnreadCount != w.m.Unread(c.ID) {
			t.Fatalf("unreadCount of %s with Redis down: %s, errors %+v, err %v; the model says %d", c.Name, res.Data, res.Errors, err, w.m.Unread(c.ID))
		}
	}

	r.Start()
	// The server's client may hold on to its last dial error for a moment.
	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for s.app.redis.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the server does not reach the restarted Redis")
		}
		time.Sleep(10 * time.Millisecond)
	}
	faultCheckModel(t, w, readers)
	// The fan-out reaches the rebuilt inboxes again.
	w.post(authors[1], "after the outage")
	faultCheckModel(t, w, readers)
}
