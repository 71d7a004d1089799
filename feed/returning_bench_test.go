package feed

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/feed/paging"
	"feedservice/store"
)

// BenchmarkReturningReaderPage reads the first page of a returning
// reader: one whose inbox (and followee set) has expired, as after a week
// away, following 200 authors (30 posts each, a few reposts). In pull mode
// the page is MySQL's as always; in push and hybrid the inbox must be
// rebuilt. ns/op is the answer's time; rebuilt-ms is the time until the
// inbox is whole again (not in ns/op when the rebuild comes after the
// answer), and sql/read the answer's SQL statements (a rebuild in the
// background adds its one). The CPU of both, by
// process, is engine-us/read (this process), redis-us/read and
// mysql-us/read (the local mariadbd's, from /proc; absent when it is not
// on this machine): on a busy box of many readers, what a returning reader
// costs all three decides how long the others wait.
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
				own, rcpu, mcpu := ownCPU(b), redisCPU(b, te.redis), mysqldCPU(te.store)
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
				perRead := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
				b.ReportMetric(perRead(ownCPU(b)-own), "engine-us/read")
				b.ReportMetric(perRead(redisCPU(b, te.redis)-rcpu), "redis-us/read")
				if mcpu >= 0 {
					b.ReportMetric(perRead(mysqldCPU(te.store)-mcpu), "mysql-us/read")
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

// waitInbox waits for the background rebuild a page left (push and
// hybrid; pull keeps no inbox), without polling, whose commands would
// count in the CPU the benchmark reports, and fails unless the reader's
// inbox is whole after it (its floor marker set).
func (te *testEngine) waitInbox(tb testing.TB, reader int64) {
	tb.Helper()
	if te.cfg.Mode == "pull" {
		return
	}
	te.inboxes.Wait()
	n, err := te.redis.ZCount(context.Background(), te.keys.Inbox(reader), "-1", "-1").Result()
	if err != nil {
		tb.Fatal(err)
	}
	if n == 0 {
		tb.Fatalf("reader %d's inbox is not whole after its rebuild", reader)
	}
}

// mysqldCPU is the CPU time (user and system) of the MySQL server st
// talks to, from /proc by its pid file; -1 when that server is not on this
// machine or its files cannot be read.
func mysqldCPU(st *store.Store) time.Duration {
	var pidFile string
	if err := st.DB().Raw("SELECT @@pid_file").Scan(&pidFile).Error; err != nil {
		return -1
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		return -1
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "stat"))
	if err != nil {
		return -1
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the whole line.
	_, rest, ok := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100 on
// every Linux this runs on).
const clockTicks = 100
