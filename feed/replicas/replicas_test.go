package replicas

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/testenv"
	"feedservice/internal/viewer"
	"feedservice/store"
)

// The users a read concerns are the users its caller names, each once,
// without the zero of no one signed in; the context adds no one.
func TestConcerned(t *testing.T) {
	for _, tc := range []struct {
		users []int64
		want  []int64
	}{
		{nil, []int64{}},
		{[]int64{3, 0, 3}, []int64{3}},
		{[]int64{5}, []int64{5}},
		{[]int64{7, 5, 2}, []int64{2, 5, 7}},
	} {
		if got := concerned(tc.users); !slices.Equal(got, tc.want) {
			t.Errorf("users %v: concerned %v, want %v", tc.users, got, tc.want)
		}
	}
}

// A read that concerns a user marked as having written lately stays on
// the primary; so does one when Redis cannot tell. A viewer in the
// context who is not named changes nothing.
func TestWroteLately(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := New(nil, rdb, keyspace.New(prefix), func(string, error) {})
	ctx := context.Background()
	const writer, other = 5, 6
	if err := rdb.Set(ctx, r.keys.RecentWrite(writer), 1, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ctx   context.Context
		users []int64
		want  bool
	}{
		{ctx, []int64{other}, false},
		{ctx, []int64{other, writer}, true},
		{ctx, []int64{writer}, true},
		{viewer.With(ctx, writer), []int64{other}, false},
	} {
		if got := r.wroteLately(tc.ctx, tc.users); got != tc.want {
			t.Errorf("viewer %d, users %v: wrote lately %v, want %v", viewer.ID(tc.ctx), tc.users, got, tc.want)
		}
	}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	away := New(nil, down, keyspace.New(prefix), func(string, error) {})
	if !away.wroteLately(ctx, []int64{other}) {
		t.Error("with Redis away, a read was let lag")
	}
}

// Without replicas every read goes to the primary, whatever the marks,
// and a write marks no one.
func TestNoReplicasReadsThePrimary(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{MySQLDSN: testenv.MySQL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rdb, prefix := testenv.Redis(t)
	r := New(st, rdb, keyspace.New(prefix), func(string, error) {})
	r.MarkWrote(ctx, []int64{5, 6})
	for _, u := range []int64{5, 6} {
		if n, err := rdb.Exists(ctx, r.keys.RecentWrite(u)).Result(); err != nil || n != 0 {
			t.Fatalf("a write without replicas marked user %d (%d, %v)", u, n, err)
		}
	}
	if got := r.AllowLag(ctx, 7); got != ctx {
		t.Error("AllowLag let a read go to a replica that does not exist")
	}
	if got := r.AllowLagSince(ctx, time.Now(), 7); got != ctx {
		t.Error("AllowLagSince let a read go to a replica that does not exist")
	}
	if fill := AllowLaggingFills(ctx); r.FillContext(fill, 7) != fill {
		t.Error("FillContext let a fill go to a replica that does not exist")
	}
}
