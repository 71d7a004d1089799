package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"feedservice/feed"
	"feedservice/internal/apperr"
	"feedservice/store"
)

// testSeedSize is a demo graph small enough for a test, with every kind of
// row: follows (some drawn twice), posts of both kinds of author, and
// reposts (some of one post twice by one user).
var testSeedSize = seedSize{users: 20, followsEach: 5, postsEach: 2, repostsEach: 3, celebPosts: 3}

// testSeedSizeOnMySQL is a smaller one for the comparison on MariaDB, where
// the reference seed's mutations cost some 80 s on a loaded box at
// testSeedSize: the bulk writes' SQL is what that backend adds, and any
// graph runs all of it.
var testSeedSizeOnMySQL = seedSize{users: 10, followsEach: 3, postsEach: 1, repostsEach: 2, celebPosts: 2}

// The demo loader builds a living graph: alice follows people who post and
// repost, so her feed and the celebrity's follower count are not empty.
func TestSeedLoadsALivingFeed(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	s := newTestServer(t, backendEmbedded)
	var progress strings.Builder
	if err := seed(context.Background(), s.app.engine, s.app.store, store.EventsPending, testSeedSize, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "seed: done; sign in as alice") {
		t.Fatalf("no progress or closing line:\n%s", progress.String())
	}
	var login struct {
		LogIn struct{ Token string }
	}
	s.anon().mustDo(t, `mutation { logIn(input: {username: "alice", password: "`+SeedPassword+`"}) { token } }`, nil, &login)
	alice := &client{s: s, Token: login.LogIn.Token, Name: "alice"}
	var out struct {
		Feed   struct{ Edges []struct{ Cursor string } }
		Viewer struct {
			ID                            string
			FollowingCount, FollowerCount int
		}
		User struct{ FollowerCount int }
	}
	alice.mustDo(t, `{ feed(first: 10) { edges { cursor } } viewer { id followingCount followerCount } user(username: "celebrity") { followerCount } }`, nil, &out)
	if len(out.Feed.Edges) == 0 || out.Viewer.FollowingCount == 0 || out.User.FollowerCount != testSeedSize.users+1 {
		t.Fatalf("seeded graph looks dead: %+v", out)
	}
	// Alice has followers (the README's page jump shows them), and the
	// closing line gives her id as the API takes it.
	if want := min(seedAliceFollowers, testSeedSize.users); out.Viewer.FollowerCount != want {
		t.Errorf("alice has %d followers, want %d", out.Viewer.FollowerCount, want)
	}
	if !strings.Contains(progress.String(), "(user id "+out.Viewer.ID+")") {
		t.Errorf("the closing line does not give alice's id %s:\n%s", out.Viewer.ID, progress.String())
	}
	// Seeding again reuses the accounts instead of failing.
	if err := seed(context.Background(), s.app.engine, s.app.store, store.EventsPending, testSeedSize, io.Discard); err != nil {
		t.Fatalf("second seed: %v", err)
	}
}

// TestSeedMatchesMutations: the bulk seed writes the graph that the same
// demo made one mutation at a time through the engine writes (seedByMutations,
// the seed as it was): the same users, follows, posts and reposts, the same
// counts (each equal to its rows), the same outbox events, and after the
// fan-out the same home feed for alice. Twice, since a second seed reuses
// the accounts and follows and adds posts. Three instances: the reference,
// the bulk seed with its events left to the dispatcher (what any Redis
// gets), and Service.Seed before the engine starts, as `go run . -seed`
// runs it (on the embedded Redis its events are recorded as applied, and
// every inbox is built from the database on its first read).
func TestSeedMatchesMutations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, backend := range backends() {
		t.Run(backend, func(t *testing.T) {
			size := testSeedSize
			if backend == backendReal {
				size = testSeedSizeOnMySQL
			}
			reference := newTestServer(t, backend)
			bulk := newTestServer(t, backend)
			cfg := testConfig(t, backend)
			opened, err := openApp(ctx, cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			service := &Service{app: opened}
			t.Cleanup(service.Close)
			for round := 1; round <= 2; round++ {
				if err := seedByMutations(ctx, reference.app.engine, size); err != nil {
					t.Fatalf("round %d, reference: %v", round, err)
				}
				if err := seed(ctx, bulk.app.engine, bulk.app.store, store.EventsPending, size, io.Discard); err != nil {
					t.Fatalf("round %d, bulk: %v", round, err)
				}
				if err := seed(ctx, opened.engine, opened.store, service.seedEvents(), size, io.Discard); err != nil {
					t.Fatalf("round %d, before serving: %v", round, err)
				}
				want := dumpGraph(t, reference.app.store)
				for name, a := range map[string]*app{"bulk": bulk.app, "before serving": opened} {
					if got := dumpGraph(t, a.store); !slices.Equal(got, want) {
						t.Fatalf("round %d, %s seed: the graph differs from the one made by mutations:\n%s", round, name, lineDiff(want, got))
					}
					if bad := countsOffTheirRows(t, a.store); len(bad) > 0 {
						t.Fatalf("round %d, %s seed: counts that are not their rows' count: %v", round, name, bad)
					}
				}
			}
			if backend == backendEmbedded {
				var pending int64
				if err := opened.store.DB().Table("outbox_events").Where("dispatched_at IS NULL").Count(&pending).Error; err != nil || pending != 0 {
					t.Fatalf("the seed before serving on the embedded Redis left %d events for the dispatcher (%v), want 0", pending, err)
				}
			}
			opened.startEngine()
			hs := httptest.NewServer(opened.handler())
			t.Cleanup(hs.Close)
			served := &testServer{app: opened, URL: hs.URL}
			want := aliceFeed(t, reference)
			for name, s := range map[string]*testServer{"bulk": bulk, "before serving": served} {
				if got := aliceFeed(t, s); !slices.Equal(got, want) {
					t.Errorf("%s seed: alice's feed differs from the one made by mutations:\n%s", name, lineDiff(want, got))
				}
			}
		})
	}
}

// TestSeedRefusesAForeignAccount: a demo name that someone holds with
// another password stops the seed, which would otherwise print a login that
// does not work.
func TestSeedRefusesAForeignAccount(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendEmbedded)
	s.signUp(t, "demo_003")
	err := seed(context.Background(), s.app.engine, s.app.store, store.EventsPending, testSeedSize, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "demo_003 exists without the demo password") {
		t.Fatalf("seed over a foreign demo_003: %v", err)
	}
}

// seedByMutations is the seed as it was before the bulk writes: the same
// demo graph, drawn in the same order from the same random numbers, made
// one mutation at a time through the engine.
func seedByMutations(ctx context.Context, e *feed.Engine, size seedSize) error {
	names := []string{"alice", "celebrity"}
	for i := range size.users {
		names = append(names, fmt.Sprintf("demo_%03d", i))
	}
	ids := make([]int64, len(names))
	for i, name := range names {
		auth, err := e.SignUp(ctx, name, SeedPassword, nil)
		if apperr.CodeOf(err) == apperr.CodeBadUserInput && strings.Contains(err.Error(), "taken") {
			auth, err = e.LogIn(ctx, name, SeedPassword)
		}
		if err != nil {
			return err
		}
		ids[i] = auth.User.ID
	}
	celebrity := ids[1]
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ids {
		if i == 1 {
			continue
		}
		for _, f := range demoFollowees(rng, ids, i, size) {
			if _, err := e.Follow(ctx, ids[i], f); err != nil {
				return err
			}
		}
	}
	var postIDs []int64
	authors := append([]int64{celebrity}, ids[2:]...)
	for round := range max(size.postsEach, size.celebPosts) {
		for _, author := range authors {
			if (author == celebrity && round >= size.celebPosts) || (author != celebrity && round >= size.postsEach) {
				continue
			}
			p, err := e.CreatePost(ctx, author, demoBody(rng))
			if err != nil {
				return err
			}
			postIDs = append(postIDs, p.ID)
		}
	}
	for _, author := range ids[2:] {
		for range size.repostsEach {
			if _, err := e.Repost(ctx, author, postIDs[rng.IntN(len(postIDs))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// dumpGraph lists what the demo graph is made of, by name rather than id,
// one line per row: users with their counts, follows (both tables), posts
// and reposts in the order they were made, and the outbox events by kind.
func dumpGraph(t *testing.T, st *store.Store) []string {
	t.Helper()
	var lines []string
	query := func(what, sql string) {
		rows, err := st.DB().Raw(sql).Rows()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			line := what
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				line += fmt.Sprintf(" %v", v)
			}
			lines = append(lines, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	query("user", `SELECT username, display_name, follower_count, following_count, post_count FROM users ORDER BY username`)
	query("following", `SELECT a.username, b.username FROM followings f JOIN users a ON a.id = f.user_id JOIN users b ON b.id = f.followee_id ORDER BY a.username, b.username`)
	query("follower", `SELECT a.username, b.username FROM followers f JOIN users a ON a.id = f.follower_id JOIN users b ON b.id = f.user_id ORDER BY a.username, b.username`)
	query("post", `SELECT a.username, p.body, COALESCE(oa.username, '-'), COALESCE(o.body, '-'), p.repost_count
		FROM posts p JOIN users a ON a.id = p.author_id
		LEFT JOIN posts o ON o.id = p.repost_of_id LEFT JOIN users oa ON oa.id = o.author_id ORDER BY p.id`)
	query("events", `SELECT kind, COUNT(*) FROM outbox_events GROUP BY kind ORDER BY kind`)
	return lines
}

// countsOffTheirRows lists the users and posts whose stored counts are not
// the count of their rows.
func countsOffTheirRows(t *testing.T, st *store.Store) []string {
	t.Helper()
	var bad []string
	for what, sql := range map[string]string{
		"follower_count":  `SELECT username FROM users u WHERE follower_count <> (SELECT COUNT(*) FROM followers f WHERE f.user_id = u.id)`,
		"following_count": `SELECT username FROM users u WHERE following_count <> (SELECT COUNT(*) FROM followings f WHERE f.user_id = u.id)`,
		"post_count":      `SELECT username FROM users u WHERE post_count <> (SELECT COUNT(*) FROM posts p WHERE p.author_id = u.id AND p.deleted_at IS NULL)`,
		"repost_count":    `SELECT CAST(id AS CHAR) FROM posts p WHERE repost_count <> (SELECT COUNT(*) FROM posts r WHERE r.repost_of_id = p.id AND r.deleted_at IS NULL)`,
	} {
		var names []string
		if err := st.DB().Raw(sql).Scan(&names).Error; err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, n := range names {
			bad = append(bad, what+" of "+n)
		}
	}
	return bad
}

// aliceFeed is alice's whole home feed once the fan-out settled, one line
// per entry: the post's author and body (or the original's, for a repost)
// and who of the people she follows reposted it.
func aliceFeed(t *testing.T, s *testServer) []string {
	t.Helper()
	if err := s.app.engine.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var login struct{ LogIn struct{ Token string } }
	s.anon().mustDo(t, `mutation { logIn(input: {username: "alice", password: "`+SeedPassword+`"}) { token } }`, nil, &login)
	alice := &client{s: s, Token: login.LogIn.Token, Name: "alice"}
	var out struct {
		Feed struct {
			Edges []struct {
				Node struct {
					Post struct {
						Author struct{ Username string }
						Body   string
					}
					Reposters []struct{ Username string }
				}
			}
		}
	}
	alice.mustDo(t, `{ feed(first: 100) { edges { node { post { author { username } body } reposters { username } } } } }`, nil, &out)
	var lines []string
	for _, e := range out.Feed.Edges {
		var reposters []string
		for _, r := range e.Node.Reposters {
			reposters = append(reposters, r.Username)
		}
		slices.Sort(reposters)
		lines = append(lines, fmt.Sprintf("%s: %s (reposted by %v)", e.Node.Post.Author.Username, e.Node.Post.Body, reposters))
	}
	if len(lines) == 0 {
		t.Fatal("alice's feed is empty")
	}
	return lines
}

// lineDiff shows the first lines where two listings part.
func lineDiff(want, got []string) string {
	for i := range max(len(want), len(got)) {
		w, g := "(none)", "(none)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("line %d: want %q\n         got  %q\n(%d lines wanted, %d got)", i+1, w, g, len(want), len(got))
		}
	}
	return "(equal)"
}
