package feed

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/internal/testenv"
)

// stAdd appends n entries to the fan-out stream and returns their ids.
func stAdd(t *testing.T, te *testEngine, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := te.redis.XAdd(context.Background(), &redis.XAddArgs{Stream: te.keys.Stream(), Values: []any{"kind", "none"}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// stRead reads up to n new entries as consumer of group.
func stRead(t *testing.T, te *testEngine, group string, n int) []string {
	t.Helper()
	streams, err := te.redis.XReadGroup(context.Background(), &redis.XReadGroupArgs{
		Group: group, Consumer: "c", Streams: []string{te.keys.Stream(), ">"}, Count: int64(n), Block: -1,
	}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range streams[0].Messages {
		ids = append(ids, m.ID)
	}
	return ids
}

func stAck(t *testing.T, te *testEngine, group string, ids ...string) {
	t.Helper()
	if err := te.redis.XAck(context.Background(), te.keys.Stream(), group, ids...).Err(); err != nil {
		t.Fatal(err)
	}
}

// stTrim trims and checks the stream's length after, and that it starts
// at first ("" for empty).
func stTrim(t *testing.T, te *testEngine, stage string, wantLen int64, first string) {
	t.Helper()
	_, length, err := te.stream.TrimStream(context.Background())
	if err != nil {
		t.Fatalf("%s: trim: %v", stage, err)
	}
	left, err := te.redis.XRangeN(context.Background(), te.keys.Stream(), "-", "+", 1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if length != wantLen || (first == "") != (len(left) == 0) || (first != "" && left[0].ID != first) {
		t.Fatalf("%s: after the trim the stream holds %d entries from %v, want %d from %q", stage, length, left, wantLen, first)
	}
}

// TestStreamTrimKeepsPendingAndUnread: a trim drops the entries that every
// group acknowledged and nothing else. An entry read and not acknowledged
// (pending) stays, with everything after it, and can still be claimed; an
// entry a group has not read yet stays, even when another group is done
// with it.
func TestStreamTrimKeepsPendingAndUnread(t *testing.T) {
	t.Parallel()
	// No worker, no dispatcher, no trim loop: the test alone moves the stream.
	te := newTestEngine(t, func(c *config.Config) { c.FanoutWorkers = 0; c.Dispatch = false; c.StreamTrimInterval = time.Hour })
	ctx := context.Background()
	stTrim(t, te, "no stream", 0, "")
	ids := stAdd(t, te, 50)
	stTrim(t, te, "no group", 50, ids[0])
	te.stream.EnsureGroup(ctx)
	stTrim(t, te, "nothing read", 50, ids[0])

	read := stRead(t, te, fanout.Group, 50)
	if len(read) != 50 {
		t.Fatalf("read %d entries, want 50", len(read))
	}
	stTrim(t, te, "all read, none acknowledged", 50, ids[0])
	// Every entry acknowledged but the 10th and the 30th.
	for i, id := range ids {
		if i != 9 && i != 29 {
			stAck(t, te, fanout.Group, id)
		}
	}
	stTrim(t, te, "the 10th and 30th pending", 41, ids[9])
	claimed, err := te.redis.XClaim(ctx, &redis.XClaimArgs{Stream: te.keys.Stream(), Group: fanout.Group, Consumer: "other", Messages: []string{ids[9]}}).Result()
	if err != nil || len(claimed) != 1 || claimed[0].Values["kind"] != "none" {
		t.Fatalf("claim the pending 10th entry after the trim: %v %v", claimed, err)
	}
	stAck(t, te, fanout.Group, ids[9])
	stTrim(t, te, "the 30th pending", 21, ids[29])
	stAck(t, te, fanout.Group, ids[29])
	stTrim(t, te, "all acknowledged", 0, "")

	// A second group that starts here and reads slowly.
	if err := te.redis.XGroupCreate(ctx, te.keys.Stream(), "slow", "$").Err(); err != nil {
		t.Fatal(err)
	}
	more := stAdd(t, te, 20)
	stTrim(t, te, "new entries unread by either group", 20, more[0])
	stAck(t, te, fanout.Group, stRead(t, te, fanout.Group, 20)...)
	stTrim(t, te, "new entries done in one group, unread in the other", 20, more[0])
	stAck(t, te, "slow", stRead(t, te, "slow", 10)...)
	stTrim(t, te, "the slow group halfway", 10, more[10])
	stAck(t, te, "slow", stRead(t, te, "slow", 10)...)
	stTrim(t, te, "both groups done", 0, "")
}

// TestStreamStaysNearEventsInFlight: after a burst of posts fanned out in
// many tasks (run by the worker that took each post's event, in parallel,
// or from the stream when one failed), the running engine trims the stream down to nothing (every
// entry handled and acknowledged) and says so on its length gauge; without
// the trim it would keep every entry up to the MAXLEN cap.
func TestStreamStaysNearEventsInFlight(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Mode = config.ModePush; c.StreamTrimInterval = 20 * time.Millisecond })
	ctx := context.Background()
	author := te.user("author")
	for i := range 5 {
		te.follow(te.user("reader"+strconv.FormatInt(int64(i), 10)), author) // five followers: three tasks of two per post
	}
	for i := range 30 {
		te.post(author, "burst "+strconv.FormatInt(int64(i), 10))
	}
	te.settle()
	handled := lcCount(te.metrics.EventsHandled.WithLabelValues(fanout.TaskKind))
	if handled < 30*3 {
		t.Fatalf("%v fan-out tasks handled, want at least 90: the burst's tasks did not all run", handled)
	}
	deadline := time.Now().Add(testenv.Scale(10 * time.Second))
	for {
		n, err := te.redis.XLen(ctx, te.keys.Stream()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && stGauge(te) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream length %d (gauge %v) after the burst settled, want 0", n, stGauge(te))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stGauge(te *testEngine) float64 {
	var m dto.Metric
	if err := te.metrics.StreamLength.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// TestStreamTrimOnTheEmbeddedRedis: the embedded default's in-process
// Redis (miniredis) reports a group created at "0" with the
// last-delivered-id "0", without the sequence part real Redis adds; the
// trim reads it as 0-0 and trims the embedded stream too, where it used to
// fail on every tick with a Lua error and let the stream grow to its cap.
func TestStreamTrimOnTheEmbeddedRedis(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	te := startTestEngine(t, newTestStore(t), rdb, "embedded:", func(c *config.Config) {
		c.FanoutWorkers = 0
		c.Dispatch = false
		c.StreamTrimInterval = time.Hour
	})
	ids := stAdd(t, te, 5)
	te.stream.EnsureGroup(context.Background())
	stTrim(t, te, "nothing read", 5, ids[0])
	stAck(t, te, fanout.Group, stRead(t, te, fanout.Group, 3)...)
	stTrim(t, te, "three acknowledged", 2, ids[3])
	stAck(t, te, fanout.Group, stRead(t, te, fanout.Group, 2)...)
	stTrim(t, te, "all acknowledged", 0, "")
}
