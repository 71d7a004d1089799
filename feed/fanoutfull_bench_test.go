package feed

import (
	"context"
	"strconv"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/internal/keyspace"
	"feedservice/feed/timeline"

	"github.com/redis/go-redis/v9"
)

// BenchmarkFanoutTaskFullInboxes is BenchmarkFanoutTask (push mode) with
// every follower's inbox full from the start (InboxCap entries): each new
// post is added to 1,000 inboxes at their cap, where an add may trim. This
// is the inbox of a reader who has followed for a while, and the fan-out
// cost that bounds the red dot of a big author's followers in push mode.
//
//	go test -run '^$' -bench FanoutTaskFullInboxes -benchtime 50x -count 6 ./feed
func BenchmarkFanoutTaskFullInboxes(b *testing.B) {
	const batch = 1000
	start := time.Now()
	captureRedisLog(b)
	te := newBenchEngine(b, config.ModePush)
	ctx := context.Background()
	author, readers := benchFanoutAudience(te, batch)
	// The same InboxCap older entries (the author's, with no sources hash)
	// in every inbox, above a floor at the oldest.
	old := make([]redis.Z, te.cfg.InboxCap)
	for i := range old {
		id := te.ids.Next()
		old[i] = redis.Z{Score: float64(id), Member: strconv.FormatInt(id, 10)}
	}
	floor := "~" + old[0].Member.(string)
	for k := 0; k < len(readers); k += 10 {
		pipe := te.redis.Pipeline()
		for _, r := range readers[k:min(k+10, len(readers))] {
			pipe.ZAdd(ctx, te.keys.Inbox(r), append(old, redis.Z{Score: -1, Member: floor})...)
			pipe.PExpire(ctx, te.keys.Inbox(r), te.cfg.InboxTTL)
			// Active, as a rebuild would have made the reader.
			until := time.Now().Add(te.cfg.InboxTTL).UnixMilli()
			pipe.ZAdd(ctx, te.keys.ActiveInboxes(keyspace.ActiveInboxShard(r)), redis.Z{Score: float64(until), Member: strconv.FormatInt(r, 10)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatalf("fill inboxes: %v", err)
		}
	}
	b.Logf("author, %d followers and their full inboxes (%d entries) set up in %v", batch, te.cfg.InboxCap, time.Since(start).Round(time.Millisecond))

	benchRunFanoutTasks(b, te, author, readers)

	// Every inbox holds its cap, up to the overshoot of the amortised trim
	// more, beside its marker (and the trim's flag).
	benchWantInboxSizes(b, te, readers, int64(te.cfg.InboxCap+1), int64(te.cfg.InboxCap+timeline.MaxInboxOvershoot+2))
}
