package feed

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/fanout"
	"feedservice/models"
)

// A stream message that no handler can read (a payload that does not
// decode, a kind this version does not know) is acknowledged, counted by
// kind in feed_events_dropped_total and logged, not retried for ever and
// not dropped unseen; the messages after it are handled as usual.
func TestUnreadableStreamMessagesAreCountedAndAcknowledged(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	ctx := context.Background()
	for _, values := range [][]any{
		{"kind", models.EventPostCreated, "payload", "not json"},
		{"kind", fanout.TaskKind, "payload", "{"},
		{"kind", "from_a_newer_version", "payload", "{}"},
	} {
		if err := te.redis.XAdd(ctx, &redis.XAddArgs{Stream: te.keys.Stream(), Values: values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	reader, author := te.user("reader"), te.user("author")
	te.follow(reader, author)
	te.settle()
	// A kind this version does not know is counted as "unknown": a label
	// per unknown kind would let a writer grow the metric without bound.
	for kind, want := range map[string]float64{models.EventPostCreated: 1, fanout.TaskKind: 1, "unknown": 1} {
		if got := lcCount(te.metrics.EventsDropped.WithLabelValues(kind)); got != want {
			t.Errorf("feed_events_dropped_total{kind=%q} = %v, want %v", kind, got, want)
		}
	}
	pending, err := te.redis.XPending(ctx, te.keys.Stream(), fanout.Group).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pending.Count != 0 {
		t.Errorf("%d messages still pending, want every one acknowledged", pending.Count)
	}
	if got := lcCount(te.metrics.EventsHandled.WithLabelValues(models.EventFollowed)); got < 1 {
		t.Errorf("the follow after the unreadable messages was not handled")
	}
}
