package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"feedservice/models"
)

// The offset index answers every jump of a list of several hundred
// entries (more marks than the shortcut near the newest end covers) as
// the keyset pages do, on MariaDB and SQLite: at its first and last page,
// past its end, and again after unfollows in the middle and a run of new
// follows that leave a gap wider than two spacings (a rebuild).
func TestRelationsAtMatchesKeysetPages(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		const users = 800
		now := time.Now().UTC().Truncate(time.Millisecond)
		rows := make([]models.User, users+1)
		for i := range rows {
			name := fmt.Sprintf("u%d", i)
			rows[i] = models.User{ID: int64(i + 1), Username: name, UsernameKey: name, CreatedAt: now, LastActiveAt: now}
		}
		if err := s.db.CreateInBatches(rows, 200).Error; err != nil {
			t.Fatal(err)
		}
		star := int64(1)
		seq := int64(1000)
		follow := func(from int64) {
			seq++
			if _, err := s.Follow(ctx, from, star, seq, now); err != nil {
				t.Fatal(err)
			}
		}
		for id := int64(2); id <= 451; id++ {
			follow(id)
		}
		check := func(stage string) {
			t.Helper()
			all, err := s.FollowersPage(ctx, star, Older, 1<<62, users+10)
			if err != nil {
				t.Fatal(err)
			}
			n := len(all)
			for _, limit := range []int{1, 25, 100} {
				for _, offset := range []int{0, 1, 99, 100, 101, 199, 250, n/2 + 3, n - limit, n - 1, n, n + 1, 10 * n} {
					if offset < 0 {
						continue
					}
					got, total, err := s.RelationsAt(ctx, FollowersList, star, offset, limit)
					if err != nil {
						t.Fatalf("%s: offset %d limit %d: %v", stage, offset, limit, err)
					}
					want := all[min(offset, n):min(offset+limit, n)]
					if total != n || !slices.EqualFunc(got, want, func(a, b models.Relation) bool { return a.UserID == b.UserID && a.ID == b.ID }) {
						t.Fatalf("%s: offset %d limit %d: got %d rows of %d, want %d of %d", stage, offset, limit, len(got), total, len(want), n)
					}
				}
			}
		}
		check("first build")
		r := rand.New(rand.NewPCG(1, 2))
		for range 40 {
			if _, err := s.Unfollow(ctx, int64(2+r.IntN(450)), star, 0, now); err != nil {
				t.Fatal(err)
			}
		}
		check("after unfollows")
		for id := int64(452); id <= 751; id++ {
			follow(id)
		}
		check("after 300 new follows")
	})
}
