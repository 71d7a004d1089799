package fanout

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
)

// connectedFirst regroups the batches of a new entry's fan-out so that the
// readers who have a live subscription open (the index of connected
// readers, keyspace.Keys.ConnectedReaders, which each instance's hub
// keeps) come first, in batches of their own of at most FanoutBatchSize,
// then the others in theirs, each group in its order of before. A red dot
// then waits for the inbox writes of connected readers only, not for those
// of readers who will see the entry on their next page. The readers and
// what each gets are as before; only the order changes. If the index
// cannot be read, the batches stay as they were.
func (st *Stream) connectedFirst(ctx context.Context, batches []Task) []Task {
	if len(batches) < 2 {
		return batches
	}
	var readers []int64
	for _, b := range batches {
		readers = append(readers, b.Readers...)
	}
	connected, err := st.connectedAmong(ctx, readers)
	if err != nil {
		if ctx.Err() == nil {
			st.d.WarnRedis("read the index of connected readers; the fan-out keeps its order", err)
		}
		return batches
	}
	if len(connected) == 0 || len(connected) == len(readers) {
		return batches
	}
	first := make([]int64, 0, len(connected))
	rest := make([]int64, 0, len(readers)-len(connected))
	for _, r := range readers {
		if connected[r] {
			first = append(first, r)
		} else {
			rest = append(rest, r)
		}
	}
	out := make([]Task, 0, len(batches)+1)
	out = appendBatches(out, batches[0], first, st.d.Cfg.FanoutBatchSize)
	return appendBatches(out, batches[0], rest, st.d.Cfg.FanoutBatchSize)
}

// appendBatches appends to out the tasks t for readers, size at a time.
func appendBatches(out []Task, t Task, readers []int64, size int) []Task {
	for len(readers) > 0 {
		n := min(len(readers), size)
		b := t
		b.Readers = readers[:n:n]
		out = append(out, b)
		readers = readers[n:]
	}
	return out
}

// connectedAmong returns those of readers whom the index of connected
// readers names now: one ZMSCORE per shard, in one round trip.
func (st *Stream) connectedAmong(ctx context.Context, readers []int64) (map[int64]bool, error) {
	var byShard [keyspace.ConnectedReaderShards][]string
	for _, r := range readers {
		s := keyspace.ConnectedReaderShard(r)
		byShard[s] = append(byShard[s], strconv.FormatInt(r, 10))
	}
	pipe := st.d.Redis.Pipeline()
	var cmds [keyspace.ConnectedReaderShards]*redis.FloatSliceCmd
	for s, members := range byShard {
		if len(members) > 0 {
			cmds[s] = pipe.ZMScore(ctx, st.d.Keys.ConnectedReaders(s), members...)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	nowMs := time.Now().UnixMilli()
	connected := map[int64]bool{}
	for s, members := range byShard {
		if cmds[s] == nil {
			continue
		}
		for i, until := range cmds[s].Val() {
			if int64(until) > nowMs { // a missing member is 0
				id, _ := strconv.ParseInt(members[i], 10, 64)
				connected[id] = true
			}
		}
	}
	return connected, nil
}
