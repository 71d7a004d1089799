package live

import (
	"context"
	"feedservice/feed/pull"
	"testing"
	"time"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/internal/depstest"
	"feedservice/feed/livemsg"
	"feedservice/feed/outbox"
	"feedservice/feed/paging"
	"feedservice/feed/replicas"
	"feedservice/feed/timeline"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// testStreams are the live streams of one instance over a MariaDB
// database and a Redis key prefix of the test's own, its hub running and
// the read model beneath them. Nothing else writes: no fan-out, no
// workers; the test posts in MySQL and announces the posts itself, as
// the fan-out would.
type testStreams struct {
	*Streams
	t   *testing.T
	d   *deps.Deps
	pub *livemsg.Publisher
}

func newTestStreams(t *testing.T, mode config.Mode) *testStreams {
	t.Helper()
	d := depstest.New(t, config.Config{Mode: mode})
	rep := replicas.New(d.Store, d.Redis, d.Keys, d.WarnRedis)
	pub := livemsg.NewPublisher(d.Redis, d.Keys, d.Log)
	c := cache.New(d, pub, rep)
	pull := pull.NewFeeds(d, c)
	inboxes, outboxes := timeline.NewInboxes(d, c, rep, pull), outbox.New(d, c)
	t.Cleanup(func() { c.Stop(); outboxes.Stop() })
	hub := runHub(t, d, c.OnInvalidation, c.OnResubscribed, outboxes.DropCopy)
	reads := timeline.NewReads(d, rep, c, pull, inboxes, outboxes)
	return &testStreams{Streams: NewStreams(d, hub, reads, inboxes, outboxes), t: t, d: d, pub: pub}
}

// followedAuthor creates an author with one post and a reader who
// follows them.
func (ts *testStreams) followedAuthor() (reader, author int64) {
	ts.t.Helper()
	reader, author = depstest.User(ts.t, ts.d, "reader"), depstest.User(ts.t, ts.d, "author")
	depstest.Follow(ts.t, ts.d, reader, author)
	depstest.Post(ts.t, ts.d, author)
	return reader, author
}

// unreadCounts opens reader's stream of unread counts until the test ends.
func (ts *testStreams) unreadCounts(reader int64) <-chan int {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ts.t.Cleanup(cancel)
	counts, err := ts.UnreadCounts(ctx, reader)
	if err != nil {
		ts.t.Fatal(err)
	}
	return counts
}

// feedItemsAdded opens reader's stream of entries entering their feed
// until the test ends.
func (ts *testStreams) feedItemsAdded(reader int64) <-chan *models.FeedEdge {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ts.t.Cleanup(cancel)
	added, err := ts.FeedItemsAdded(ctx, reader)
	if err != nil {
		ts.t.Fatal(err)
	}
	return added
}

// waitSubscribed waits until this instance listens on channel.
func (ts *testStreams) waitSubscribed(channel string) {
	ts.t.Helper()
	testenv.WaitFor(ts.t, "a subscription to "+channel, func() bool {
		n, err := testenv.NumSub(context.Background(), ts.d.Redis, channel)
		return err == nil && n > 0
	})
}

// announceOnAuthor tells the listeners of author's channel that post
// entered their readers' feeds, as the fan-out does for an author whose
// posts reach readers without it.
func (ts *testStreams) announceOnAuthor(author, post int64) {
	ts.pub.Publish(context.Background(), ts.d.Keys.AuthorChannel(author), livemsg.Added(livemsg.Add{Post: post, Key: post}))
}

// nextCount waits for the stream's next count.
func nextCount(t *testing.T, counts <-chan int, what string) int {
	t.Helper()
	select {
	case n, ok := <-counts:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return n
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatalf("%s: no count within 5 s", what)
		return 0
	}
}

// noCount checks that the stream sends nothing for a moment.
func noCount(t *testing.T, counts <-chan int, what string) {
	t.Helper()
	select {
	case n := <-counts:
		t.Fatalf("%s: the stream sent %d, want nothing", what, n)
	case <-time.After(200 * time.Millisecond):
	}
}

// A reader's unread count in pull mode: the exact count at once; one
// more for each entry announced on a followed author's channel, the same
// entry announced twice counting once; a client that reads late gets
// the newest count, not the ones between; a change on the reader's own
// channel recounts from MySQL.
func TestUnreadCountsFollowTheAnnouncements(t *testing.T) {
	t.Parallel()
	ts := newTestStreams(t, config.ModePull)
	reader, author := ts.followedAuthor()
	counts := ts.unreadCounts(reader)
	if n := nextCount(t, counts, "the first count"); n != 1 {
		t.Fatalf("first count %d, want 1 (the author's one post)", n)
	}
	ts.waitSubscribed(ts.d.Keys.AuthorChannel(author))

	second := depstest.Post(t, ts.d, author)
	ts.announceOnAuthor(author, second)
	if n := nextCount(t, counts, "after a new post"); n != 2 {
		t.Fatalf("count %d after a new post, want 2", n)
	}
	ts.announceOnAuthor(author, second)
	noCount(t, counts, "the same post announced again")

	// Two posts while the client does not read: it is handed the newest
	// count, with nothing left behind it.
	for range 2 {
		ts.announceOnAuthor(author, depstest.Post(t, ts.d, author))
	}
	testenv.WaitFor(t, "the count to reach 4", func() bool {
		select {
		case n := <-counts:
			if n != 3 && n != 4 {
				t.Fatalf("count %d after two more posts, want 3 on the way to 4", n)
			}
			return n == 4
		default:
			return false
		}
	})
	noCount(t, counts, "after the newest count was taken")

	if _, err := ts.d.Store.DeletePost(context.Background(), second, author, ts.d.Now()); err != nil {
		t.Fatal(err)
	}
	ts.pub.Publish(context.Background(), ts.d.Keys.ReaderChannel(reader), livemsg.Change())
	if n := nextCount(t, counts, "after a change"); n != 3 {
		t.Fatalf("count %d after a deleted post and a change, want 3", n)
	}
}

// In push mode the count is of the reader's inbox, which the stream
// builds, and grows with the entries announced for the reader on the
// inboxes channel (only those for this reader).
func TestUnreadCountsOfAnInboxReader(t *testing.T) {
	t.Parallel()
	ts := newTestStreams(t, config.ModePush)
	reader, author := ts.followedAuthor()
	other := depstest.User(t, ts.d, "other")
	counts := ts.unreadCounts(reader)
	if n := nextCount(t, counts, "the first count"); n != 1 {
		t.Fatalf("first count %d, want 1 (the post in the inbox built for the reader)", n)
	}
	ts.waitSubscribed(ts.d.Keys.ReaderChannel(reader))
	ctx := context.Background()
	post := depstest.Post(t, ts.d, author)
	ts.pub.AnnounceAdded(ctx, livemsg.Add{Post: post, Key: post}, []int64{other})
	noCount(t, counts, "an entry announced for another reader")
	ts.pub.AnnounceAdded(ctx, livemsg.Add{Post: post, Key: post}, []int64{other, reader})
	if n := nextCount(t, counts, "an entry announced for the reader"); n != 2 {
		t.Fatalf("count %d after an entry announced for the reader, want 2", n)
	}
}

// feedItemAdded sends an announced entry that is in the reader's feed,
// with its cursor, and nothing for one that is not (a post of an author
// the reader does not follow, announced on a channel the reader hears).
func TestFeedItemsAddedSendsWhatEnteredTheFeed(t *testing.T) {
	t.Parallel()
	ts := newTestStreams(t, config.ModePull)
	reader, author := ts.followedAuthor()
	stranger := depstest.User(t, ts.d, "stranger")
	added := ts.feedItemsAdded(reader)
	ts.waitSubscribed(ts.d.Keys.AuthorChannel(author))
	notInFeed := depstest.Post(t, ts.d, stranger)
	ts.announceOnAuthor(author, notInFeed)
	post := depstest.Post(t, ts.d, author)
	ts.announceOnAuthor(author, post)
	select {
	case edge := <-added:
		if edge.Node.PostID != post {
			t.Fatalf("feedItemAdded sent post %d, want %d (post %d is not in the reader's feed)", edge.Node.PostID, post, notInFeed)
		}
		if want := paging.EncodeCursor(paging.CursorFeed, post); edge.Cursor != want {
			t.Fatalf("cursor %q, want %q", edge.Cursor, want)
		}
	case <-time.After(testenv.Scale(5 * time.Second)):
		t.Fatal("no feedItemAdded within 5 s of the post's announcement")
	}
}
