package timeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// wholeFeed is reader's whole feed, read a full page at a time.
func (p *testParts) wholeFeed(reader int64) []int64 {
	p.t.Helper()
	var posts []int64
	var after *string
	for {
		size := config.MaxPageSize
		conn, err := p.reads.Feed(context.Background(), reader, paging.PageArgs{First: &size, After: after})
		if err != nil {
			p.t.Fatal(err)
		}
		for _, e := range conn.Edges {
			posts = append(posts, e.Node.PostID)
		}
		if !conn.PageInfo.HasNextPage {
			return posts
		}
		after = conn.PageInfo.EndCursor
	}
}

// An inbox at the stated bound of the amortised trim (InboxCap +
// MaxInboxOvershoot entries, as the fan-out leaves it after that many
// deliveries none of which trimmed) reads right; the next delivery that
// trims cuts it back to InboxCap with a plain ZREMRANGEBYRANK and leaves
// the flag; the next read settles it, raising the floor to the lowest
// entry kept, and still reads every post (MySQL serves what the trim took
// out).
func TestDeliverTrimsAtTheBound(t *testing.T) {
	const capEntries = 8
	p := newTestParts(t, func(c *config.Config) { c.Mode = config.ModePush; c.InboxCap = capEntries })
	ctx := context.Background()
	reader, author := p.user("reader"), p.user("author")
	p.follow(reader, author)
	if got := p.feed(reader, 5); len(got) != 0 {
		t.Fatalf("first page %v, want none: the reader is active now, with an empty inbox", got)
	}
	// Ids until the first, past the bound's worth, whose delivery trims.
	var ids []int64
	for len(ids) <= capEntries+MaxInboxOvershoot || !trimDue(reader, ids[len(ids)-1], InboxTrimEvery) {
		ids = append(ids, p.d.IDs.Next())
	}
	now := p.d.Now()
	rows := make([]*models.Post, len(ids))
	for i, id := range ids {
		rows[i] = &models.Post{ID: id, AuthorID: author, Body: "p", CreatedAt: now}
	}
	if err := p.d.Store.CreatePosts(ctx, rows, store.EventsApplied); err != nil {
		t.Fatal(err)
	}
	trimmer := ids[len(ids)-1]
	kept := ids[len(ids)-1-capEntries-MaxInboxOvershoot : len(ids)-1]
	// The inbox at the bound: the older posts below its floor.
	inbox := p.d.Keys.Inbox(reader)
	members := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", kept[0])}}
	for _, id := range kept {
		members = append(members, redis.Z{Score: float64(id), Member: strconv.FormatInt(id, 10)})
	}
	if err := p.d.Redis.ZRemRangeByScore(ctx, inbox, "-1", "-1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.d.Redis.ZAdd(ctx, inbox, members...).Err(); err != nil {
		t.Fatal(err)
	}
	card := func() int64 { return p.d.Redis.ZCard(ctx, inbox).Val() }
	if n := card(); n != capEntries+MaxInboxOvershoot+1 {
		t.Fatalf("the inbox at the bound holds %d members, want %d and its marker", n, capEntries+MaxInboxOvershoot)
	}
	all := newestFirst(ids[:len(ids)-1])
	if got := p.wholeFeed(reader); !slices.Equal(got, all) {
		t.Fatalf("at the bound: the feed has %d posts, want all %d, newest first", len(got), len(all))
	}

	if n, err := p.inboxes.Deliver(ctx, trimmer, author, []int64{reader}); err != nil || n != 1 {
		t.Fatalf("Deliver: %d, %v; want it delivered once", n, err)
	}
	if n := card(); n != capEntries+2 {
		t.Fatalf("after the delivery that trims, the inbox holds %d members, want %d: the cap, the marker and the flag", n, capEntries+2)
	}
	if s, err := p.d.Redis.ZScore(ctx, inbox, trimFlag).Result(); err != nil || s != -2 {
		t.Fatalf("the trim's flag: %v, %v; want it at -2", s, err)
	}
	all = newestFirst(ids)
	if got := p.wholeFeed(reader); !slices.Equal(got, all) {
		t.Fatalf("after the trim: the feed has %d posts, want all %d, newest first", len(got), len(all))
	}
	low := ids[len(ids)-capEntries]
	got := p.d.Redis.ZRangeWithScores(ctx, inbox, 0, 0).Val()
	if want := []redis.Z{{Score: -1, Member: fmt.Sprintf("~%d", low)}}; !slices.Equal(got, want) || card() != capEntries+1 {
		t.Fatalf("after a read the inbox starts %v and holds %d members; want the flag settled: %v, the cap and the marker", got, card(), want)
	}
}

// The deliveries that trim are about one in InboxTrimEvery for any reader,
// and no reader goes MaxInboxOvershoot deliveries of posts in a row
// without one, over the ids the engine makes.
func TestTrimDueSpreadsTrims(t *testing.T) {
	p := newTestParts(t, func(c *config.Config) {})
	const posts = 50000
	ids := make([]int64, posts)
	for i := range ids {
		ids[i] = p.d.IDs.Next()
	}
	for _, reader := range []int64{1, 2, 77, p.d.IDs.Next(), p.d.IDs.Next()} {
		trims, run, longest := 0, 0, 0
		for _, id := range ids {
			if trimDue(reader, id, InboxTrimEvery) {
				trims++
				run = 0
				continue
			}
			run++
			longest = max(longest, run)
		}
		want := posts / int(InboxTrimEvery)
		if trims < want*8/10 || trims > want*12/10 || longest >= MaxInboxOvershoot {
			t.Fatalf("reader %d: %d trims in %d deliveries (want about %d), %d in a row without one (want under %d)", reader, trims, posts, want, longest, MaxInboxOvershoot)
		}
	}
}

// A sources field keeps the arrival at the entry's key as its user alone,
// every other as user:event, and reads back as written; a field written
// before (every arrival as user:event) reads the same.
func TestSourcesFieldKeepsTheFirstArrivalShort(t *testing.T) {
	const key = 375979391279123
	list := []Source{{User: 375979390586882, Event: key}, {User: 375979390693379, Event: key + 5}}
	s := formatSources(list, key)
	if want := "375979390586882,375979390693379:375979391279128"; s != want {
		t.Fatalf("formatSources = %q, want %q", s, want)
	}
	if got := parseSources(s, key); !slices.Equal(got, list) {
		t.Fatalf("parseSources(%q) = %v, want %v", s, got, list)
	}
	old := "375979390586882:375979391279123,375979390693379:375979391279128"
	if got := parseSources(old, key); !slices.Equal(got, list) {
		t.Fatalf("parseSources(%q) = %v, want %v", old, got, list)
	}
}
