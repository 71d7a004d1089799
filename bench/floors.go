package main

// The floors, measured on the same box in the same run: what Redis and
// MariaDB do with no service in between. Every figure of the service is
// printed as a ratio to them.
//
//   - read floor: go-redis ZREVRANGE 0 19 of an 800-member sorted set, then
//     one MGET of 20 string keys of 200 bytes, 8 workers;
//   - fan-out floor: redis-benchmark -t zadd -P 16 -n 200000 (pipelined ZADD);
//   - SQL floor: the plain pull query on MariaDB, in its fast (deferred
//     join) form: the followees' latest post ids through the (author_id, id)
//     index, then the 20 rows, 8 workers.

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

func (e *env) floors(ctx context.Context) Floors {
	var f Floors
	p := e.o.prefixBase + "floor:"
	// Read floor.
	zkey := p + "z"
	pipe := e.rdb.Pipeline()
	for i := range 800 {
		pipe.ZAdd(ctx, zkey, redis.Z{Score: float64(i), Member: strconv.Itoa(1_000_000_000_000 + i)})
	}
	val := strings.Repeat("x", 200)
	skeys := make([]string, 20)
	for i := range skeys {
		skeys[i] = p + "s:" + strconv.Itoa(i)
		pipe.Set(ctx, skeys[i], val, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		f.Notes = append(f.Notes, "read floor setup: "+err.Error())
	}
	r, el := closedLoop(ctx, 8, e.o.dur, func(ctx context.Context, _ int) error {
		ids, err := e.rdb.ZRevRange(ctx, zkey, 0, 19).Result()
		if err != nil {
			return err
		}
		keys := make([]string, len(ids))
		for i := range ids {
			keys[i] = skeys[i%len(skeys)]
		}
		return e.rdb.MGet(ctx, keys...).Err()
	})
	f.RedisPage = r.stat("ZREVRANGE 0 19 + MGET 20, 8 workers", el)
	logf("  Redis page floor: %s", fmtStat(f.RedisPage))
	e.rdb.Del(ctx, append(skeys, zkey)...)
	if e.o.targetsOnly() {
		return f // the targets compare with the read floor only
	}

	// Fan-out floor.
	f.ZaddCommand = "redis-benchmark -t zadd -P 16 -n 200000 -q"
	host, port, _ := strings.Cut(e.o.redis, ":")
	cmd := exec.CommandContext(ctx, "redis-benchmark", "-h", host, "-p", port, "-t", "zadd", "-P", "16", "-n", "200000", "-q")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.Notes = append(f.Notes, "redis-benchmark: "+err.Error()+" (it comes with redis-server; apt-get install redis-tools)")
		logf("  redis-benchmark failed: %v", err)
	} else {
		m := regexp.MustCompile(`ZADD: ([0-9.]+) requests per second`).FindAllStringSubmatch(string(out), -1)
		if len(m) > 0 {
			f.ZaddPerSec, _ = strconv.ParseFloat(m[len(m)-1][1], 64)
		}
		logf("  pipelined ZADD floor: %.0f/s", f.ZaddPerSec)
	}
	e.rdb.Del(ctx, "myzset") // redis-benchmark's key

	// SQL floor: the deferred join for random active readers.
	q := `SELECT p.id, p.author_id, p.body, p.repost_of_id, p.created_at FROM posts p
  JOIN (SELECT id FROM posts WHERE author_id IN (SELECT followee_id FROM followings WHERE user_id = ?)
        AND deleted_at IS NULL ORDER BY id DESC LIMIT 20) t ON p.id = t.id ORDER BY p.id DESC`
	f.SQLQuery = strings.Join(strings.Fields(q), " ")
	r, el = closedLoop(ctx, 8, e.o.dur, func(ctx context.Context, _ int) error {
		u := e.active[rand.IntN(len(e.active))]
		rows, err := e.db.QueryContext(ctx, q, e.g.UserIDs[u])
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		return rows.Err()
	})
	f.SQLPull = r.stat("deferred-join pull query, 8 workers", el)
	logf("  SQL pull floor: %s", fmtStat(f.SQLPull))
	return f
}

// usedMemory is Redis' INFO memory used_memory.
func usedMemory(ctx context.Context, rdb *redis.Client) int64 {
	info, _ := rdb.Info(ctx, "memory").Result()
	return infoInt(info, "used_memory")
}

func infoInt(info, field string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func infoStr(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// memory measures the inboxes after warming: entries (ZCARD less the floor
// marker), the MEMORY USAGE of each inbox's keys (feed: and feedsrc:), the
// change in used_memory (noisy: the Redis is shared), and a bare listpack
// sorted set of the same kind of members for reference.
func (w *modeRun) memory(ctx context.Context, before, after int64) {
	m := &w.mr.Memory
	m.UsedBefore, m.UsedAfter = before, after
	var inboxes []string
	iter := w.rdb.Scan(ctx, 0, w.prefix+"feed:{u*", 1000).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); !strings.HasSuffix(k, ":tmp") {
			inboxes = append(inboxes, k)
		}
	}
	var zcard, zmem, smem, hlen []*redis.IntCmd
	pipe := w.rdb.Pipeline()
	for _, k := range inboxes {
		zcard = append(zcard, pipe.ZCard(ctx, k))
		zmem = append(zmem, pipe.MemoryUsage(ctx, k, 0))
		src := strings.Replace(k, "feed:{", "feedsrc:{", 1)
		smem = append(smem, pipe.MemoryUsage(ctx, src, 0))
		hlen = append(hlen, pipe.HLen(ctx, src))
	}
	if len(inboxes) > 0 {
		pipe.Exec(ctx)
	}
	for i := range inboxes {
		m.Inboxes++
		m.Entries += max(zcard[i].Val()-1, 0) // less the floor marker
		m.InboxBytes += zmem[i].Val()
		m.SourcesBytes += smem[i].Val()
		m.SourceFields += hlen[i].Val()
		if zcard[i].Val() > 128 && m.SampleEncoding == "" {
			m.SampleEncoding, _ = w.rdb.ObjectEncoding(ctx, inboxes[i]).Result()
			m.SampleEncoding += " (ZCARD " + strconv.FormatInt(zcard[i].Val(), 10) + ")"
		}
	}
	if m.Entries > 0 {
		m.BytesPerEntry = float64(m.InboxBytes+m.SourcesBytes) / float64(m.Entries)
		m.BytesPerEntryInfo = float64(after-before) / float64(m.Entries)
	}
	// References: bare sorted sets of id members, listpack (100) and, past
	// zset-max-listpack-entries, skiplist (800).
	cfg, _ := w.rdb.ConfigGet(ctx, "zset-max-listpack-entries").Result()
	m.ListpackMaxEntries, _ = strconv.Atoi(cfg["zset-max-listpack-entries"])
	ref := func(n int) float64 {
		k := w.prefix + "ref:" + strconv.Itoa(n)
		base := w.g.MaxID
		pipe := w.rdb.Pipeline()
		for i := range n {
			id := base - int64(i)*4096
			pipe.ZAdd(ctx, k, redis.Z{Score: float64(id), Member: strconv.FormatInt(id, 10)})
		}
		pipe.Exec(ctx)
		b, _ := w.rdb.MemoryUsage(ctx, k, 0).Result()
		w.rdb.Del(ctx, k)
		return float64(b) / float64(n)
	}
	m.RefListpack100 = ref(100)
	m.RefSorted800 = ref(800)
	if m.Inboxes > 0 {
		logf("  Redis: %d inboxes, %d entries, %.1f bytes/entry (inbox %.1f + sources hash %.1f, %d hash fields; used_memory delta %.1f); bare listpack member %.1f, 800-member set %.1f; sample encoding %s",
			m.Inboxes, m.Entries, m.BytesPerEntry, float64(m.InboxBytes)/float64(m.Entries), float64(m.SourcesBytes)/float64(m.Entries), m.SourceFields,
			m.BytesPerEntryInfo, m.RefListpack100, m.RefSorted800, m.SampleEncoding)
	}
}
