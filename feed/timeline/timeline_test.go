package timeline

import (
	"context"
	"feedservice/feed/pull"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/paging"
	"feedservice/feed/replicas"
	"feedservice/store"
)

// testParts are the read model's parts over a MariaDB database and a Redis
// key prefix of the test's own, with nothing writing to them but the test:
// no fan-out, no workers.
type testParts struct {
	t        *testing.T
	d        *deps.Deps
	cache    *cache.Tiers
	inboxes  *Inboxes
	outboxes *outbox.Outboxes
	reads    *Reads
}

func newTestParts(t *testing.T, set func(*config.Config)) *testParts {
	t.Helper()
	var cfg config.Config
	set(&cfg)
	d := depstest.New(t, cfg)
	return partsOver(t, d.Cfg, d.Store, d.Redis)
}

// another is a second instance's parts over p's database and Redis: its
// own local copies, the same data.
func (p *testParts) another() *testParts {
	return partsOver(p.t, p.d.Cfg, p.d.Store, p.d.Redis)
}

func partsOver(t *testing.T, cfg config.Config, st *store.Store, rdb redis.UniversalClient) *testParts {
	t.Helper()
	d := depstest.Over(t, cfg, st, rdb)
	rep := replicas.New(d.Store, d.Redis, d.Keys, d.WarnRedis)
	c := cache.New(d, livemsg.NewPublisher(d.Redis, d.Keys, d.Log), rep)
	f := pull.NewFeeds(d, c)
	p := &testParts{t: t, d: d, cache: c, inboxes: NewInboxes(d, c, rep, f), outboxes: outbox.New(d, c)}
	p.reads = NewReads(d, rep, c, f, p.inboxes, p.outboxes)
	t.Cleanup(func() { c.Stop(); p.outboxes.Stop() })
	return p
}

// user creates a user called name and returns their id.
func (p *testParts) user(name string) int64 { return depstest.User(p.t, p.d, name) }

// follow makes follower follow followee in MySQL alone.
func (p *testParts) follow(follower, followee int64) { depstest.Follow(p.t, p.d, follower, followee) }

// settleFollowing writes to follower's followee set (if it exists) whether
// they follow followee, as the engine does after a follow's commit.
func (p *testParts) settleFollowing(follower, followee int64, follows bool) {
	p.t.Helper()
	if err := p.inboxes.SettleFollowing(context.Background(), follower, followee, follows); err != nil {
		p.t.Fatal(err)
	}
}

// post creates a post by author in MySQL alone and returns its id.
func (p *testParts) post(author int64) int64 { return depstest.Post(p.t, p.d, author) }

// deletePost deletes author's post in MySQL and refreshes the cached
// copies, as the engine does before it answers; the inboxes are left as
// they are.
func (p *testParts) deletePost(author, post int64) {
	p.t.Helper()
	ctx := context.Background()
	if _, err := p.d.Store.DeletePost(ctx, post, author, p.d.Now()); err != nil {
		p.t.Fatal(err)
	}
	p.cache.RefreshAfterCommit(ctx, []int64{author}, []int64{post})
}

// feed reads reader's first size entries and returns their posts.
func (p *testParts) feed(reader int64, size int) []int64 {
	p.t.Helper()
	conn, err := p.reads.Feed(context.Background(), reader, paging.PageArgs{First: &size})
	if err != nil {
		p.t.Fatal(err)
	}
	p.inboxes.Wait() // a read that rebuilt the inbox answered before writing it
	var posts []int64
	for _, e := range conn.Edges {
		posts = append(posts, e.Node.PostID)
	}
	return posts
}

// newestFirst is posts, the newest first.
func newestFirst(posts []int64) []int64 {
	out := slices.Clone(posts)
	slices.Reverse(out)
	return out
}

// counterValue is the value of counter c.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
