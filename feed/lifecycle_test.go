package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/paging"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// The life of an inbox: rebuilt once and atomically when missing, told
// apart from an empty one, paged past its window, kept alive by reads, and
// fixed in place by follow, unfollow, delete and repost.

// lcEnv is the MariaDB database, Redis client and key prefix of one test,
// on which several engine instances can be started one after another or
// side by side (startTestEngine).
type lcEnv struct {
	st     *store.Store
	rdb    redis.UniversalClient
	prefix string
}

// lcNewEnv makes a store and a Redis prefix the way newTestEngine does.
func lcNewEnv(t *testing.T) lcEnv {
	t.Helper()
	st := newTestStore(t)
	rdb, prefix := testenv.Redis(t)
	return lcEnv{st: st, rdb: rdb, prefix: prefix}
}

// start starts an engine instance on the environment.
func (env lcEnv) start(t *testing.T, change ...func(*config.Config)) *testEngine {
	t.Helper()
	return startTestEngine(t, env.st, env.rdb, env.prefix, change...)
}

// lcCount is the value of a counter (what prometheus/testutil.ToFloat64
// reads, without its extra module).
func lcCount(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// lcReads is how many feed reads the engine served by path.
func lcReads(te *testEngine, path string) float64 {
	return lcCount(te.metrics.Reads.WithLabelValues(path))
}

// lcItems turns a feed page into feed items (a cursor that does not decode
// gives key 0, which no expected item has).
func lcItems(edges []*models.FeedEdge) []feedItem {
	out := make([]feedItem, 0, len(edges))
	for _, edge := range edges {
		key, _ := paging.DecodeCursor(paging.CursorFeed, edge.Cursor)
		out = append(out, feedItem{Post: edge.Node.PostID, Reposters: edge.Node.ReposterIDs, Key: key})
	}
	return out
}

// lcCheckFeeds checks that the feed of every reader, read a few entries a
// page and in one page, is the feed pulled from MySQL.
func lcCheckFeeds(t testing.TB, te *testEngine, stage string, readers ...int64) {
	t.Helper()
	checkFeeds(t, te, stage, "the feed pulled from MySQL", te.pulledFeed, readers...)
}

// lcScore is post's score in reader's inbox; ok is false when the post is
// not there.
func lcScore(t testing.TB, te *testEngine, reader, post int64) (score int64, ok bool) {
	t.Helper()
	s, err := te.redis.ZScore(context.Background(), te.keys.Inbox(reader), strconv.FormatInt(post, 10)).Result()
	if err == redis.Nil {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return int64(s), true
}

// lcWantScore checks post's place in reader's inbox; 0 means absent.
func lcWantScore(t testing.TB, te *testEngine, reader, post, want int64) {
	t.Helper()
	got, ok := lcScore(t, te, reader, post)
	switch {
	case want == 0 && ok:
		t.Fatalf("inbox of %d still holds post %d (score %d)", reader, post, got)
	case want != 0 && !ok:
		t.Fatalf("inbox of %d lacks post %d (want score %d)", reader, post, want)
	case want != 0 && got != want:
		t.Fatalf("inbox of %d holds post %d at %d, want %d", reader, post, got, want)
	}
}

// lcSources is the sources field of post in reader's inbox ("" if none).
func lcSources(t testing.TB, te *testEngine, reader, post int64) string {
	t.Helper()
	s, err := te.redis.HGet(context.Background(), te.keys.InboxSources(reader), strconv.FormatInt(post, 10)).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	// The arrival at the entry's score is kept as its user alone
	// (timeline's formatSources): written out here.
	parts := strings.Split(s, ",")
	for i, part := range parts {
		if part != "" && !strings.Contains(part, ":") {
			score, _ := lcScore(t, te, reader, post)
			parts[i] = part + ":" + strconv.FormatInt(score, 10)
		}
	}
	return strings.Join(parts, ",")
}

func lcSrc(user, event int64) string {
	return strconv.FormatInt(user, 10) + ":" + strconv.FormatInt(event, 10)
}

// lcExists says whether key exists.
func lcExists(t testing.TB, te *testEngine, key string) bool {
	t.Helper()
	n, err := te.redis.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// lcFind is the entry of post in a feed.
func lcFind(t testing.TB, feed []feedItem, post int64) feedItem {
	t.Helper()
	var found []feedItem
	for _, it := range feed {
		if it.Post == post {
			found = append(found, it)
		}
	}
	if len(found) != 1 {
		t.Fatalf("post %d appears %d times in the feed %v, want once", post, len(found), feed)
	}
	return found[0]
}

// 1. A missing inbox is rebuilt once, however many readers arrive at once,
// and none of them sees half of it.
func TestInboxRebuildIsAtomicAndOnce(t *testing.T) {
	t.Parallel()
	const readers, rounds, pageSize = 20, 25, 25
	te := newTestEngine(t, func(c *config.Config) { c.InboxCap = 40 })
	reader, other := te.user("reader"), te.user("other")
	authors := []int64{te.user("author_a"), te.user("author_b"), te.user("author_c")}
	for _, a := range authors {
		te.follow(reader, a)
	}
	for i := range 10 {
		for _, a := range authors {
			te.post(a, fmt.Sprintf("post %d", i))
		}
		if i%3 == 0 {
			te.repost(authors[i%2], te.post(other, "reposted")) // merged entries with sources
		}
	}
	te.settle()
	want := te.pulledFeed(reader)
	if len(want) <= pageSize {
		t.Fatalf("the feed has %d entries; the test wants more than a page of %d", len(want), pageSize)
	}
	want = want[:pageSize]

	ctx := context.Background()
	// The readers' arrivals are spread over about the time of one rebuild
	// and read, so that some arrive while the rebuild runs and some just as
	// it ends (a spread, not a synchronisation: nothing waits on it).
	began := time.Now()
	te.readFeed(reader, pageSize)
	spread := time.Since(began)
	for round := range rounds {
		// The inbox expired or was evicted.
		if err := te.redis.Del(ctx, te.keys.Inbox(reader), te.keys.InboxSources(reader)).Err(); err != nil {
			t.Fatal(err)
		}
		rebuilds := lcCount(te.metrics.Rebuilds)
		start := make(chan struct{})
		pages := make([][]feedItem, readers)
		errs := make([]error, readers)
		var wg sync.WaitGroup
		for i := range readers {
			wg.Go(func() {
				<-start
				time.Sleep(spread * time.Duration(i) / readers)
				size := pageSize
				conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &size})
				if err != nil {
					errs[i] = err
					return
				}
				pages[i] = lcItems(conn.Edges)
			})
		}
		close(start)
		wg.Wait()
		te.inboxes.Wait() // the rebuild runs after the pages that found no inbox
		for i := range readers {
			if errs[i] != nil {
				t.Fatalf("round %d, reader %d: %v", round, i, errs[i])
			}
			if !slices.EqualFunc(pages[i], want, feedItemEqual) {
				t.Fatalf("round %d: concurrent reader %d saw a partial or wrong page:\n got %v\nwant %v", round, i, pages[i], want)
			}
		}
		if got := lcCount(te.metrics.Rebuilds) - rebuilds; got != 1 {
			t.Fatalf("round %d: %d concurrent reads of a missing inbox rebuilt it %v times, want once", round, readers, got)
		}
		if lcReads(te, metrics.ReadPullFallback) != 0 {
			t.Fatalf("round %d: reads fell back to MySQL; the test wants the inbox path", round)
		}
	}
}

// 2. Following nobody leaves an empty inbox that holds only the marker "~0":
// an empty feed, not a missing one, so the next read does not rebuild.
func TestInboxMarkerTellsEmptyFromMissing(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	loner, other := te.user("loner"), te.user("other")
	te.follow(other, loner)
	te.post(other, "not in the loner's feed")
	te.post(loner, "the loner's own post is not in their home feed either")
	te.settle()
	ctx := context.Background()

	read := func() {
		t.Helper()
		conn, err := te.Feed(ctx, loner, paging.PageArgs{})
		if err != nil {
			t.Fatal(err)
		}
		if len(conn.Edges) != 0 || conn.PageInfo.HasNextPage || conn.PageInfo.HasPreviousPage {
			t.Fatalf("feed of a user following nobody: %d edges, pageInfo %+v; want an empty page", len(conn.Edges), conn.PageInfo)
		}
	}
	rebuilds := lcCount(te.metrics.Rebuilds)
	read()
	te.inboxes.Wait() // the read answered before the rebuild's write
	if got := lcCount(te.metrics.Rebuilds) - rebuilds; got != 1 {
		t.Fatalf("the first read rebuilt %v times, want 1", got)
	}
	members, err := te.redis.ZRangeWithScores(ctx, te.keys.Inbox(loner), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := []redis.Z{{Score: -1, Member: "~0"}}; !slices.Equal(members, want) {
		t.Fatalf("the inbox of a user following nobody holds %v, want only the marker %v", members, want)
	}
	if ttl := te.redis.PTTL(ctx, te.keys.Inbox(loner)).Val(); ttl <= 0 {
		t.Fatalf("the empty inbox has no TTL (PTTL %v): it would never mark its reader inactive", ttl)
	}
	inboxReads := lcReads(te, metrics.ReadInbox)
	read()
	read()
	if got := lcCount(te.metrics.Rebuilds) - rebuilds; got != 1 {
		t.Fatalf("reading an empty feed again rebuilt it: %v rebuilds in all, want 1", got)
	}
	if got := lcReads(te, metrics.ReadInbox) - inboxReads; got != 2 {
		t.Fatalf("the later reads of an empty feed took the inbox path %v times, want 2", got)
	}
}

// 3. An inbox keeps InboxCap entries; paging beyond them continues from
// MySQL with the same cursors, forward and backward, with exact page info.
func TestInboxPagingPastWindowContinuesFromMySQL(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.InboxCap = 3 })
	reader := te.user("reader")
	a, b, c := te.user("author_a"), te.user("author_b"), te.user("author_c")
	te.follow(reader, a)
	te.follow(reader, b)
	for i := range 5 {
		pa := te.post(a, fmt.Sprintf("a%d", i))
		te.post(b, fmt.Sprintf("b%d", i))
		if i == 1 || i == 3 {
			te.repost(b, te.post(c, "c")) // an entry brought by a repost
		}
		if i == 2 {
			te.repost(b, pa) // merged into a's entry: not a new one
		}
	}
	te.settle()
	want := te.pulledFeed(reader)
	if len(want) != 12 {
		t.Fatalf("the pulled feed has %d entries, want 12", len(want))
	}
	ctx := context.Background()
	te.readFeed(reader, 1) // the reader is active: the inbox holds the newest 3
	marker, err := te.redis.ZRangeByScore(ctx, te.keys.Inbox(reader), &redis.ZRangeBy{Min: "-1", Max: "-1"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(marker) != 1 || marker[0] == "~0" {
		t.Fatalf("inbox marker %v: want a floor above 0, the inbox holding only part of the feed", marker)
	}
	if n := te.redis.ZCard(ctx, te.keys.Inbox(reader)).Val(); n != 4 {
		t.Fatalf("the inbox holds %d members, want 3 entries and the marker", n)
	}
	fallbacks := lcReads(te, metrics.ReadPullFallback)

	// Paged either way, every page but the last says there is more ahead
	// (hasNextPage forward, hasPreviousPage backward), and every page but
	// the first says there is more behind.
	size := 2
	for _, backward := range []bool{false, true} {
		way, aheadFlag, behindFlag := "forward", "hasNextPage", "hasPreviousPage"
		if backward {
			way, aheadFlag, behindFlag = "backward", "hasPreviousPage", "hasNextPage"
		}
		read := 0
		got := te.pageFeed(reader, size, backward, len(want), func(page int, conn *models.FeedConnection) {
			read += len(conn.Edges)
			ahead, behind := conn.PageInfo.HasNextPage, conn.PageInfo.HasPreviousPage
			if backward {
				ahead, behind = behind, ahead
			}
			if end := read >= len(want); ahead == end {
				t.Fatalf("%s page %d (%d of %d entries read): %s %v", way, page, read, len(want), aheadFlag, ahead)
			}
			if behind != (page > 0) {
				t.Fatalf("%s page %d: %s %v", way, page, behindFlag, behind)
			}
		})
		if !slices.EqualFunc(got, want, feedItemEqual) {
			t.Fatalf("paging %s by %d from its start:\n got %v\nwant %v", way, size, got, want)
		}
	}
	if lcReads(te, metrics.ReadPullFallback) != fallbacks {
		t.Fatal("a page fell back to MySQL; the test wants the inbox path")
	}
}

// 4. Reading refreshes the inbox's TTL; an inbox that expired is not fed by
// fan-out, and the next read rebuilds it, complete.
func TestInboxTTLRefreshedOnRead(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Second
	env := lcNewEnv(t)
	setup := func(c *config.Config) { c.InboxTTL = ttl; c.InboxCap = 20 }
	te := env.start(t, setup)
	reader := te.user("reader")
	a, b, c := te.user("author_a"), te.user("author_b"), te.user("author_c")
	te.follow(reader, a)
	te.follow(reader, b)
	te.post(a, "a1")
	te.repost(b, te.post(c, "c1")) // gives the inbox a sources hash
	te.post(a, "a2")
	te.settle()
	lcCheckFeeds(t, te, "first read", reader)
	ctx := context.Background()
	inbox, sources := te.keys.Inbox(reader), te.keys.InboxSources(reader)
	for _, key := range []string{inbox, sources} {
		if !lcExists(t, te, key) {
			t.Fatalf("%s does not exist after a read", key)
		}
		if err := te.redis.PExpire(ctx, key, 300*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
	}
	te.readFeed(reader, 10)
	for _, key := range []string{inbox, sources} {
		if got := te.redis.PTTL(ctx, key).Val(); got < ttl-time.Second || got > ttl {
			t.Fatalf("PTTL of %s after a read is %v; want it back near %v", key, got, ttl)
		}
	}

	// The inbox expires: its reader is inactive. Its time in the index of
	// active inboxes (which a real expiry reaches at most a minute later)
	// runs out with it, here at once; and the instance that fans out is a
	// new one, as the instance that knew the time still thinks it ahead
	// (it would be, but for the test's shortcut). (An inbox that goes
	// before its time there: TestInboxGoneBetweenCheckAndWriteIsRebuilt.)
	for _, key := range []string{inbox, sources} {
		te.redis.PExpire(ctx, key, time.Millisecond)
	}
	te.redis.ZAddXX(ctx, te.keys.ActiveInboxes(keyspace.ActiveInboxShard(reader)), redis.Z{Score: float64(time.Now().UnixMilli() - 1), Member: strconv.FormatInt(reader, 10)})
	te.stop()
	te = env.start(t, setup)
	deadline := time.Now().Add(testenv.Scale(5 * time.Second))
	for lcExists(t, te, inbox) || lcExists(t, te, sources) {
		if time.Now().After(deadline) {
			t.Fatal("the inbox did not expire")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fresh := te.post(a, "while the reader is away")
	te.settle()
	if lcExists(t, te, inbox) {
		t.Fatal("fan-out created the inbox of an inactive reader")
	}
	rebuilds := lcCount(te.metrics.Rebuilds)
	lcCheckFeeds(t, te, "after expiry", reader)
	if got := lcCount(te.metrics.Rebuilds) - rebuilds; got != 1 {
		t.Fatalf("reading after expiry rebuilt %v times, want 1", got)
	}
	lcWantScore(t, te, reader, fresh, fresh)
	if got := te.redis.PTTL(ctx, inbox).Val(); got < ttl-time.Second || got > ttl {
		t.Fatalf("PTTL of the rebuilt inbox is %v, want about %v", got, ttl)
	}
}

// 5. Following an author backfills their recent posts into an active
// reader's inbox at once; unfollowing takes them out, except entries another
// followee reposted, which stay at that repost's place with fewer reposters.
func TestFollowBackfillsAndUnfollowRemoves(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.InboxCap = 20 })
	reader := te.user("reader")
	a, b, c := te.user("author_a"), te.user("author_b"), te.user("author_c")
	c1 := te.post(c, "c1")
	a1 := te.post(a, "a1")
	ra := te.repost(a, c1)
	a2 := te.post(a, "a2")
	rbc := te.repost(b, c1)
	a3 := te.post(a, "a3")
	rba := te.repost(b, a2)
	b1 := te.post(b, "b1")
	te.follow(reader, b)
	te.settle()
	te.readFeed(reader, 10) // the reader is active
	lcWantScore(t, te, reader, a1, 0)

	te.follow(reader, a)
	// The follower's own inbox is fixed at once, before any worker runs.
	wantFollowing := []feedItem{
		{Post: b1, Key: b1, Reposters: []int64{}},
		{Post: a3, Key: a3, Reposters: []int64{}},
		{Post: a2, Key: a2, Reposters: []int64{b}},
		{Post: c1, Key: ra, Reposters: []int64{b, a}},
		{Post: a1, Key: a1, Reposters: []int64{}},
	}
	lcWantFeed(t, te, "just after follow", reader, wantFollowing)
	for post, score := range map[int64]int64{a1: a1, a2: a2, a3: a3, c1: ra, b1: b1} {
		lcWantScore(t, te, reader, post, score)
	}
	te.settle()
	lcWantFeed(t, te, "after follow, settled", reader, wantFollowing)
	lcCheckFeeds(t, te, "after follow", reader)

	te.unfollow(reader, a)
	wantUnfollowed := []feedItem{
		{Post: b1, Key: b1, Reposters: []int64{}},
		{Post: a2, Key: rba, Reposters: []int64{b}},
		{Post: c1, Key: rbc, Reposters: []int64{b}},
	}
	lcWantFeed(t, te, "just after unfollow", reader, wantUnfollowed)
	te.settle()
	lcWantFeed(t, te, "after unfollow, settled", reader, wantUnfollowed)
	lcCheckFeeds(t, te, "after unfollow", reader)
	for post, score := range map[int64]int64{a1: 0, a3: 0, a2: rba, c1: rbc, b1: b1} {
		lcWantScore(t, te, reader, post, score)
	}
	if got, want := lcSources(t, te, reader, a2), lcSrc(b, rba); got != want {
		t.Fatalf("sources of a2 after unfollowing its author: %q, want %q", got, want)
	}
	if got, want := lcSources(t, te, reader, c1), lcSrc(b, rbc); got != want {
		t.Fatalf("sources of c1 after unfollowing one reposter: %q, want %q", got, want)
	}
}

// lcWantFeed checks a reader's feed against an explicit list.
func lcWantFeed(t testing.TB, te *testEngine, stage string, reader int64, want []feedItem) {
	t.Helper()
	for _, size := range []int{2, 100} {
		if got := te.readFeed(reader, size); !slices.EqualFunc(got, want, feedItemEqual) {
			t.Fatalf("%s: feed of %d, page size %d:\n got %v\nwant %v", stage, reader, size, got, want)
		}
	}
}

// 6. Deleting an original takes it out of every inbox it reached, through
// its author and through its reposters; deleting a repost merges it out of
// its entry.
func TestDeleteRemovesFromEveryInbox(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Mode = config.ModePush; c.InboxCap = 20 })
	a, r, s := te.user("author"), te.user("reposter_r"), te.user("reposter_s")
	f1, f2, f3, f4, g := te.user("f_author"), te.user("f_reposter"), te.user("f_both"), te.user("f_author2"), te.user("g_reposters")
	for _, f := range []int64{f1, f3, f4} {
		te.follow(f, a) // three followers: two fan-out batches
	}
	for _, f := range []int64{f2, f3, g} {
		te.follow(f, r)
	}
	te.follow(g, s)
	readers := []int64{f1, f2, f3, f4, g}
	te.settle()
	for _, f := range readers {
		te.readFeed(f, 10) // every reader is active
	}

	p := te.post(a, "p")
	rp := te.repost(r, p)
	te.settle()
	for f, score := range map[int64]int64{f1: p, f3: p, f4: p, f2: rp, g: rp} {
		lcWantScore(t, te, f, p, score)
	}
	te.deletePost(a, p)
	te.settle()
	for _, f := range readers {
		lcWantScore(t, te, f, p, 0)
		if src := lcSources(t, te, f, p); src != "" {
			t.Fatalf("the sources of deleted post %d linger in the inbox of %d: %q", p, f, src)
		}
	}
	lcCheckFeeds(t, te, "after deleting an original", readers...)

	q := te.post(a, "q")
	rq := te.repost(r, q)
	sq := te.repost(s, q)
	te.settle()
	if got := lcFind(t, te.readFeed(g, 10), q); got.Key != rq || !slices.Equal(got.Reposters, []int64{s, r}) {
		t.Fatalf("entry of q in g's feed: %+v; want at %d with reposters [s r]", got, rq)
	}
	te.deletePost(r, rq)
	te.settle()
	lcWantScore(t, te, g, q, sq) // moved to its next arrival
	if got, want := lcSources(t, te, g, q), lcSrc(s, sq); got != want {
		t.Fatalf("sources of q in g's inbox after r's repost was deleted: %q, want %q", got, want)
	}
	if got := lcFind(t, te.readFeed(g, 10), q); got.Key != sq || !slices.Equal(got.Reposters, []int64{s}) {
		t.Fatalf("entry of q in g's feed after r's repost was deleted: %+v; want at %d with reposters [s]", got, sq)
	}
	lcWantScore(t, te, f2, q, 0) // f2 had it from r alone
	lcWantScore(t, te, f3, q, q) // f3 follows its author too
	if src := lcSources(t, te, f3, q); src != "" {
		t.Fatalf("sources of q in f3's inbox after r's repost was deleted: %q, want none (its author alone)", src)
	}
	lcCheckFeeds(t, te, "after deleting a repost", readers...)
}

// 7. Reads drop what the workers have not reached yet (deleted posts,
// authors no longer followed) and still fill their pages; once the events
// are dispatched, the inboxes catch up.
func TestReadsFilterBeforeWorkersRun(t *testing.T) {
	t.Parallel()
	env := lcNewEnv(t)
	te := env.start(t, func(c *config.Config) { c.Dispatch = false; c.InboxCap = 40 })
	ctx := context.Background()
	reader := te.user("reader")
	a, b, c, d := te.user("author_a"), te.user("author_b"), te.user("author_c"), te.user("author_d")
	for _, f := range []int64{a, b, c, d} {
		te.follow(reader, f)
	}
	posts := map[int64][]int64{}
	for i := range 6 {
		for _, author := range []int64{a, b, c, d} {
			posts[author] = append(posts[author], te.post(author, fmt.Sprintf("post %d", i)))
		}
	}
	ra := te.repost(a, posts[c][1]) // c's post stays in the feed through a
	te.readFeed(reader, 5)          // the reader is active: the inbox holds every entry
	if n := te.redis.ZCard(ctx, te.keys.Inbox(reader)).Val(); n != 25 {
		t.Fatalf("the inbox holds %d members, want 24 entries and the marker", n)
	}

	// Nothing below reaches the inbox: the events stay in the outbox.
	byAuthor := map[int64]int64{posts[a][5]: a, posts[b][5]: b, posts[a][4]: a, posts[b][4]: b, posts[a][2]: a}
	var deleted []int64
	for p, author := range byAuthor {
		te.deletePost(author, p)
		deleted = append(deleted, p)
	}
	if _, err := te.RemoveFollower(ctx, c, reader); err != nil { // no own-inbox fix: reads must filter
		t.Fatal(err)
	}
	te.unfollow(reader, d) // this one fixes the reader's own inbox at once
	fresh := te.post(b, "not fanned out yet")
	for _, p := range deleted {
		if _, ok := lcScore(t, te, reader, p); !ok {
			t.Fatalf("deleted post %d left the inbox before any worker ran; the test wants reads to filter it", p)
		}
	}
	if _, ok := lcScore(t, te, reader, posts[c][5]); !ok {
		t.Fatal("the removed author's post left the inbox before any worker ran")
	}
	if n, _, err := env.st.OutboxLag(ctx); err != nil || n == 0 {
		t.Fatalf("outbox lag %d (%v): the events should wait", n, err)
	}

	isFresh := func(it feedItem) bool { return it.Post == fresh }
	want := slices.DeleteFunc(te.pulledFeed(reader), isFresh)
	inboxReads := lcReads(te, metrics.ReadInbox)
	for _, size := range []int{1, 3, 5, 100} {
		conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &size})
		if err != nil {
			t.Fatal(err)
		}
		raw := lcItems(conn.Edges)
		if len(raw) < min(size, len(want)) {
			t.Fatalf("first page of %d holds %d entries: stale entries were dropped without over-fetching", size, len(raw))
		}
		page := slices.DeleteFunc(raw, isFresh)
		if len(page) > len(want) {
			t.Fatalf("first page of %d:\n got %v\nwant %v", size, page, want)
		}
		if !slices.EqualFunc(page, want[:len(page)], feedItemEqual) {
			t.Fatalf("first page of %d:\n got %v\nwant %v", size, page, want[:len(page)])
		}
		got := slices.DeleteFunc(te.readFeed(reader, size), isFresh)
		if !slices.EqualFunc(got, want, feedItemEqual) {
			t.Fatalf("feed read %d a page before the workers ran:\n got %v\nwant %v", size, got, want)
		}
	}
	if lcReads(te, metrics.ReadInbox) == inboxReads || lcReads(te, metrics.ReadPullFallback) != 0 {
		t.Fatal("the reads did not take the inbox path")
	}
	if got := lcFind(t, want, posts[c][1]); got.Key != ra {
		t.Fatalf("c's post reposted by a: %+v, want at a's repost %d", got, ra)
	}
	for _, it := range want {
		if slices.Contains(deleted, it.Post) || slices.Contains(posts[d], it.Post) || (slices.Contains(posts[c], it.Post) && it.Post != posts[c][1]) {
			t.Fatalf("the expected feed holds %v: the test's reference is wrong", it)
		}
	}

	// Another instance dispatches: the inboxes catch up.
	te2 := env.start(t, func(c *config.Config) { c.InboxCap = 40 })
	te2.settle()
	lcCheckFeeds(t, te2, "after dispatch", reader)
	lcWantScore(t, te2, reader, fresh, fresh)
	for _, p := range append(deleted, posts[c][5], posts[d][5]) {
		lcWantScore(t, te2, reader, p, 0)
	}
}

// 8. An author crossing the celebrity threshold up and down (fanned out,
// then merged at read time, then fanned out again) changes no feed.
func TestCelebrityCrossingChangesNothing(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t) // CelebrityFollowers 3
	ctx := context.Background()
	star := te.user("star")
	b, c := te.user("author_b"), te.user("author_c")
	f := []int64{te.user("fan1"), te.user("fan2"), te.user("fan3"), te.user("fan4")}
	te.follow(f[0], b)
	te.follow(f[1], b)
	te.follow(f[2], c)
	te.follow(f[3], c)
	te.follow(f[0], star)
	te.follow(f[1], star)
	te.settle()
	for _, r := range f {
		te.readFeed(r, 10) // every follower is active
	}
	var last int64
	stage := func(name string, celebrity bool) {
		t.Helper()
		te.settle()
		is, err := te.redis.SIsMember(ctx, te.keys.Celebrities(), star).Result()
		if err != nil {
			t.Fatal(err)
		}
		if is != celebrity {
			n := te.redis.SMembers(ctx, te.keys.Celebrities()).Val()
			t.Fatalf("%s: star in the celebrities set: %v, want %v (set %v)", name, is, celebrity, n)
		}
		lcCheckFeeds(t, te, name+", before posting", f...)
		last = te.post(star, name)
		te.post(b, name)
		te.repost(star, te.post(c, name))
		te.repost(c, last) // f3 and f4 see the star's post through c, following the star or not
		te.settle()
		lcCheckFeeds(t, te, name, f...)
	}
	stage("2 followers", false)
	te.follow(f[2], star)
	stage("3 followers", true)
	te.follow(f[3], star)
	stage("4 followers", true)
	te.unfollow(f[2], star)
	stage("3 followers again", true)
	te.unfollow(f[3], star)
	stage("2 followers again", false)
	te.deletePost(star, last)
	stage("after a delete", false)
}

// 9. Several followees reposting one post of an author the reader does not
// follow give one entry, at the first repost, with the reposters most
// recent first, in every mode.
func TestRepostMergingInAllModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			te := newTestEngine(t, func(c *config.Config) { c.Mode = mode; c.InboxCap = 20 })
			reader, x, o := te.user("reader"), te.user("stranger"), te.user("friend")
			r := []int64{te.user("rep1"), te.user("rep2"), te.user("rep3")}
			for _, f := range append([]int64{o}, r...) {
				te.follow(reader, f)
			}
			te.settle()
			te.readFeed(reader, 5) // active
			p := te.post(x, "p")
			o1 := te.post(o, "o1")
			rp1 := te.repost(r[0], p)
			o2 := te.post(o, "o2")
			rp2 := te.repost(r[1], p)
			te.repost(r[2], p)
			te.repost(r[1], p) // again: the same repost
			o3 := te.post(o, "o3")
			te.settle()
			want := []feedItem{
				{Post: o3, Key: o3, Reposters: []int64{}},
				{Post: o2, Key: o2, Reposters: []int64{}},
				{Post: p, Key: rp1, Reposters: []int64{r[2], r[1], r[0]}},
				{Post: o1, Key: o1, Reposters: []int64{}},
			}
			if got := te.pulledFeed(reader); !slices.EqualFunc(got, want, feedItemEqual) {
				t.Fatalf("pulled feed:\n got %v\nwant %v", got, want)
			}
			lcWantFeed(t, te, string(mode), reader, want)
			if mode != config.ModePull {
				lcWantScore(t, te, reader, p, rp1)
				if lcReads(te, metrics.ReadPullFallback) != 0 {
					t.Fatal("reads fell back to MySQL")
				}
			}

			te.deletePost(r[0], rp1) // the entry moves to the next repost
			te.settle()
			want = []feedItem{
				{Post: o3, Key: o3, Reposters: []int64{}},
				{Post: p, Key: rp2, Reposters: []int64{r[2], r[1]}},
				{Post: o2, Key: o2, Reposters: []int64{}},
				{Post: o1, Key: o1, Reposters: []int64{}},
			}
			lcWantFeed(t, te, string(mode)+", first repost deleted", reader, want)
			lcCheckFeeds(t, te, string(mode)+", first repost deleted", reader)
		})
	}
}

// lcKeys lists the keys of the test's prefix.
func lcKeys(t testing.TB, te *testEngine) []string {
	t.Helper()
	out, err := testenv.Keys(context.Background(), te.redis, te.cfg.KeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
