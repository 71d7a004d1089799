package paging

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"feedservice/feed/internal/metrics"
	"feedservice/store"
)

// A page read from a fetch that ignores its bound ends where it began: the
// page says there is no more in that direction (else a client following its
// cursor would get the same page for ever), and the metric counts it. A
// fetch that honours its bound still pages on.
func TestPaginateRefusesStalledCursor(t *testing.T) {
	keys := []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1} // a list, newest first
	honest := func(_ context.Context, dir store.Direction, bound int64, limit int) ([]int64, error) {
		var out []int64
		for _, k := range keys {
			if (dir == store.Older && k < bound) || (dir == store.Newer && k > bound) {
				out = append(out, k)
			}
		}
		if dir == store.Newer {
			slices.Reverse(out)
		}
		return out[:min(len(out), limit)], nil
	}
	// stalled answers from the top (or the bottom) whatever bound it is given.
	stalled := func(ctx context.Context, dir store.Direction, _ int64, limit int) ([]int64, error) {
		from := int64(1 << 62)
		if dir == store.Newer {
			from = 0
		}
		return honest(ctx, dir, from, limit)
	}
	two, mid := 2, EncodeCursor(CursorTimeline, 6)
	forward, backward := PageArgs{First: &two, After: &mid}, PageArgs{Last: &two, Before: &mid}
	identity := func(k int64) int64 { return k }

	for _, tc := range []struct {
		name     string
		args     PageArgs
		fetch    FetchFunc[int64]
		want     []int64
		more     bool // hasNextPage forward, hasPreviousPage backward
		refusals float64
	}{
		{"forward, honest", forward, honest, []int64{5, 4}, true, 0},
		{"backward, honest", backward, honest, []int64{8, 7}, true, 0},
		{"forward, stalled", forward, stalled, []int64{10, 9}, false, 1},
		{"backward, stalled", backward, stalled, []int64{2, 1}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := metrics.New()
			items, info, err := Paginate(context.Background(), m, CursorTimeline, tc.args, tc.fetch, identity)
			if err != nil {
				t.Fatal(err)
			}
			more, cursor := info.HasNextPage, info.EndCursor
			if tc.args.Last != nil {
				more, cursor = info.HasPreviousPage, info.StartCursor
			}
			if !slices.Equal(items, tc.want) || more != tc.more {
				t.Fatalf("page %v, more %v (cursor %s); want %v, more %v", items, more, derefCursor(cursor), tc.want, tc.more)
			}
			if got := counterValue(m.NoProgress.WithLabelValues(metrics.NoProgressCursor)); got != tc.refusals {
				t.Fatalf("feed_page_no_progress_total{at=cursor} = %v, want %v", got, tc.refusals)
			}
		})
	}
}

func derefCursor(c *string) string {
	if c == nil {
		return "none"
	}
	return *c
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
