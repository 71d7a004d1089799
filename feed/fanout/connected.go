package fanout

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
)

// connectedFirst runs a new entry's fan-out (t, the first page of
// followers read, and the pages still to read) so that the readers who
// have a live subscription open (the index of connected readers,
// keyspace.Keys.ConnectedReaders, which each instance's hub keeps) are
// written first, in batches of their own, and the others only once every
// connected reader's batch is done. A red dot then waits neither for the
// inbox writes of readers who will see the entry on their next page nor
// for the follower list to be read to its end: each page is asked about
// as it is read (one ZMSCORE per shard), and the connected readers found
// go out as a batch as soon as they fill one, or at once when none of
// their batches is being written (the first page's do not wait for the
// second, and readers found one a page do not each make a batch while
// one is being written). Each batch is announced on its own as its writes
// are done (see timeline.Inboxes.Deliver). The readers and what each
// gets are as before; only the order changes. A page the index cannot be
// answered for is taken as connected, so it keeps its place in the list.
func (st *Stream) connectedFirst(ctx context.Context, t Task, page []int64, pages *followerPages, run *batchRun) error {
	size := st.d.Cfg.FanoutBatchSize
	var (
		found    []int64 // connected readers not yet in a batch
		others   []int64 // the readers the index does not name
		writing  sync.WaitGroup
		inFlight atomic.Int32 // connected readers' batches started and not done
		warned   bool
	)
	startConnected := func(readers []int64) {
		writing.Add(1)
		inFlight.Add(1)
		run.start(withReaders(t, readers), func() {
			inFlight.Add(-1)
			writing.Done()
		})
	}
	for {
		connected, err := st.connectedAmong(ctx, page)
		if err != nil && !warned && ctx.Err() == nil {
			warned = true
			st.d.WarnRedis("read the index of connected readers; those pages keep their place in the fan-out", err)
		}
		for _, r := range page {
			if err != nil || connected[r] {
				found = append(found, r)
			} else {
				others = append(others, r)
			}
		}
		for len(found) >= size {
			startConnected(found[:size:size])
			found = found[size:]
		}
		if len(found) > 0 && inFlight.Load() == 0 {
			startConnected(found)
			found = nil
		}
		if !pages.more {
			break
		}
		if page, err = pages.next(ctx); err != nil {
			return err
		}
	}
	if len(found) > 0 {
		startConnected(found)
	}
	// The others' writes would share Redis, and this instance's slots,
	// with the connected readers' last batches.
	writing.Wait()
	for len(others) > 0 {
		n := min(len(others), size)
		run.start(withReaders(t, others[:n:n]), nil)
		others = others[n:]
	}
	return nil
}

// connectedAmong returns those of readers whom the index of connected
// readers names now: one ZMSCORE per shard, in one round trip.
func (st *Stream) connectedAmong(ctx context.Context, readers []int64) (map[int64]bool, error) {
	if len(readers) == 0 {
		return nil, nil
	}
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
