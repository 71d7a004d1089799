package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"feedservice/internal/testenv"
	"feedservice/models"
)

// BenchmarkShardedMySQLHead measures what the Spider head costs: a post,
// a follow between users of two nodes, the pull feed's scan over
// followees of every node, a page of posts by id from every node and a
// cold timeline read (straight from MySQL), through the head over four
// data nodes and on one MariaDB,
// reporting p50 and p99 beside the mean.
//
//	go test -run '^$' -bench ShardedMySQLHead -benchtime 500x ./store
func BenchmarkShardedMySQLHead(b *testing.B) {
	for _, layout := range []string{"one", "sharded"} {
		b.Run("layout="+layout, func(b *testing.B) {
			ctx := context.Background()
			var s *Store
			if layout == "sharded" {
				s, _ = openSharded(b)
			} else {
				var err error
				if s, err = Open(ctx, Config{MySQLDSN: testenv.MySQL(b)}); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				if _, err := s.Migrate(ctx); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now().UTC()
			const users = 64
			for i := range int64(users) {
				if err := s.CreateUser(ctx, &models.User{ID: 1000 + i, Username: fmt.Sprint("b", i), CreatedAt: now, LastActiveAt: now}); err != nil {
					b.Fatal(err)
				}
			}
			next := int64(1 << 30)
			var created []int64            // the posts createPost made
			followees := make([]int64, 16) // users 1000-1015: four on each node
			for i := range followees {
				followees[i] = 1000 + int64(i)
			}
			ops := []struct {
				name string
				run  func(i int) error
			}{
				{"createPost", func(i int) error {
					author := 1000 + int64(i%users)
					next += MaxShards
					id := next - next%MaxShards + author%MaxShards
					created = append(created, id)
					return s.CreatePost(ctx, &models.Post{ID: id, AuthorID: author, Body: "bench", CreatedAt: now})
				}},
				{"follow", func(i int) error {
					next++
					a, c := 1000+int64(i%users), 1000+int64((i/users+i+1)%users)
					if a == c {
						return nil
					}
					_, err := s.Follow(ctx, a, c, next, now)
					return err
				}},
				// The pull feed's scan, a page of 20 over 16 followees of
				// every node: the statement that must touch several.
				{"pullPage", func(i int) error {
					_, err := s.FeedEvents(ctx, followees, Older, 1<<62, 0, 20)
					return err
				}},
				// A page of 20 posts by id whose authors live on every node.
				{"postsByID", func(i int) error {
					from := (i * 20) % max(len(created)-20, 1)
					_, err := s.PostsByIDs(ctx, created[from:min(from+20, len(created))])
					return err
				}},
				{"coldTimeline", func(i int) error {
					_, err := s.TimelinePage(ctx, 1000+int64(i%users), Older, 1<<62, 20)
					return err
				}},
			}
			for _, op := range ops {
				b.Run("op="+op.name, func(b *testing.B) {
					took := make([]time.Duration, 0, b.N)
					for i := 0; b.Loop(); i++ {
						start := time.Now()
						if err := op.run(i); err != nil {
							b.Fatal(err)
						}
						took = append(took, time.Since(start))
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
				})
			}
		})
	}
}
