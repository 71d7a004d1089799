package feed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"feedservice/feed/paging"
)

// BenchmarkReturningReaderPage reads the first page of a returning
// reader: one whose inbox (and followee set) has expired, as after a week
// away, following 200 authors (30 posts each, a few reposts). In pull mode
// the page is MySQL's as always; in push and hybrid the inbox must be
// rebuilt. ns/op is the answer's time; rebuilt-ms is the time until the
// inbox is whole again (not in ns/op when the rebuild comes after the
// answer), and sql/read the SQL statements of both.
//
//	go test -run '^$' -bench ReturningReaderPage -benchtime 50x ./feed
func BenchmarkReturningReaderPage(b *testing.B) {
	for _, mode := range benchModes {
		b.Run("mode="+string(mode), func(b *testing.B) {
			b.Run("followees=200", func(b *testing.B) {
				te, reader, _, _ := feedFixture(b, mode, 200)
				sql := ctSQL(b, te.store)
				ctx := sql.ctx()
				size := benchPageSize
				var rebuilt time.Duration
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					te.forgetInbox(b, reader)
					b.StartTimer()
					start := time.Now()
					conn, err := te.Feed(ctx, reader, paging.PageArgs{First: &size})
					if err != nil {
						b.Fatal(err)
					}
					if len(conn.Edges) != size {
						b.Fatalf("page of %d entries, want %d", len(conn.Edges), size)
					}
					b.StopTimer()
					te.waitInbox(b, reader)
					rebuilt += time.Since(start)
					b.StartTimer()
				}
				b.ReportMetric(float64(rebuilt.Milliseconds())/float64(b.N), "rebuilt-ms")
				b.ReportMetric(float64(sql.n.Load())/float64(b.N), "sql/read")
			})
		})
	}
}

// forgetInbox deletes the reader's inbox, its sources and their followee
// set, as their expiry would.
func (te *testEngine) forgetInbox(tb testing.TB, reader int64) {
	tb.Helper()
	ks := []string{te.keys.Inbox(reader), te.keys.InboxSources(reader), te.keys.Following(reader), te.keys.FollowingVersion(reader)}
	for _, k := range ks { // one key at a time: on a Cluster they lie on different slots
		if err := te.redis.Del(context.Background(), k).Err(); err != nil {
			tb.Fatal(err)
		}
	}
}

// waitInbox waits until the reader's inbox is whole (its floor marker
// set), in push and hybrid modes; pull keeps none.
func (te *testEngine) waitInbox(tb testing.TB, reader int64) {
	tb.Helper()
	if te.cfg.Mode == "pull" {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		n, err := te.redis.ZCount(context.Background(), te.keys.Inbox(reader), "-1", "-1").Result()
		if err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal(fmt.Errorf("reader %d's inbox not rebuilt within 10s", reader))
		}
	}
}
