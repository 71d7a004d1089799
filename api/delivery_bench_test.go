package api

// BenchmarkRedDotDelivery measures live red dots end to end: N readers hold
// an open websocket with an unreadCount subscription, a followee of all of
// them posts, and the time from the post's commit until each reader's new
// count arrives is reported as p50 and p99 (ms), for an ordinary author
// (fanned out) and a celebrity (merged at read time).
//
//	go test -run '^$' -bench RedDotDelivery -benchtime 5x ./api    # N = 1,000
//	DELIVERY_SOCKETS=10000 go test -run '^$' -bench RedDotDelivery -timeout 30m ./api
//
// The clients run in a child process (this test binary again, see
// TestMain), so that server and clients each hold N sockets within the
// open-file limit.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"feedservice/api/settings"
	feedconfig "feedservice/feed/config"
	"feedservice/feed/ids"
	"feedservice/internal/gqlclient"
	"feedservice/internal/testenv"
	"feedservice/models"
)

func deliverySockets() int {
	if n, err := strconv.Atoi(os.Getenv("DELIVERY_SOCKETS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

func BenchmarkRedDotDelivery(b *testing.B) {
	for _, author := range []string{"ordinary", "celebrity"} {
		b.Run("author="+author+"/sockets="+strconv.Itoa(deliverySockets()), func(b *testing.B) {
			threshold := deliverySockets() + 1
			if author == "celebrity" {
				threshold = 1
			}
			benchDelivery(b, deliverySockets(), threshold)
		})
	}
}

func benchDelivery(b *testing.B, sockets, celebrityFollowers int) {
	s := newTestServer(b, backendReal, func(c *settings.Settings) {
		c.Mode = feedconfig.ModeHybrid
		c.CelebrityFollowers = celebrityFollowers
	})
	b.Cleanup(s.app.cfg.TuneRuntime()) // the collector's target Serve sets
	ctx := context.Background()
	author, readers := deliveryGraph(b, s, sockets)
	tokens := make([]string, len(readers))
	for i, reader := range readers {
		token, err := s.app.engine.IssueToken(reader, 0)
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = token
	}
	counts := deliveryClients(b, s.URL, tokens)
	latest := make([]int, sockets)
	for i := range latest {
		latest[i] = -1
	}
	// Setup (every client's first, exact count) may take long with many
	// sockets; a delivery must not.
	waitCounts := func(want int, since time.Time, limit time.Duration) []time.Duration {
		var lat []time.Duration
		deadline := time.After(limit)
		for done := 0; done < sockets; {
			select {
			case c := <-counts:
				if c.count == want && latest[c.client] != want {
					latest[c.client] = want
					lat = append(lat, c.at.Sub(since))
					done++
				}
			case <-deadline:
				b.Fatalf("only %d of %d clients saw count %d", done, sockets, want)
			}
		}
		return lat
	}
	waitCounts(0, time.Now(), 10*time.Minute)
	b.Logf("every client holds count 0; posting")
	var all []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.app.engine.CreatePost(ctx, author, "post "+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		all = append(all, waitCounts(i+1, time.Now(), time.Minute)...)
	}
	b.StopTimer()
	slices.Sort(all)
	b.ReportMetric(ms(all[len(all)/2]), "p50-ms")
	b.ReportMetric(ms(all[len(all)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type deliveryCount struct {
	client, count int
	at            time.Time
}

// deliveryGraph inserts an author and readers who follow them, in bulk.
func deliveryGraph(b *testing.B, s *testServer, readers int) (int64, []int64) {
	b.Logf("inserting %d readers", readers)
	ids, err := ids.NewIDGenerator(ids.MaxNodes - 1)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	author := ids.Next()
	users := []models.User{{ID: author, Username: "author", UsernameKey: "author", DisplayName: "author", CreatedAt: now, LastActiveAt: now, FollowerCount: readers}}
	var followings []models.Following
	var followers []models.Follower
	readerIDs := make([]int64, readers)
	for i := range readers {
		id, seq := ids.Next(), ids.Next()
		name := fmt.Sprintf("reader%05d", i)
		readerIDs[i] = id
		users = append(users, models.User{ID: id, Username: name, UsernameKey: name, DisplayName: name, CreatedAt: now, LastActiveAt: now, FollowingCount: 1})
		followings = append(followings, models.Following{UserID: id, FolloweeID: author, ID: seq, CreatedAt: now})
		followers = append(followers, models.Follower{UserID: author, FollowerID: id, ID: seq, CreatedAt: now})
	}
	db := s.app.store.DB()
	for _, rows := range []any{users, followings, followers} {
		if err := db.CreateInBatches(rows, 1000).Error; err != nil {
			b.Fatal(err)
		}
	}
	return author, readerIDs
}

// deliveryClients starts the child process that holds one websocket per
// token, and returns the counts it reports.
func deliveryClients(b *testing.B, url string, tokens []string) <-chan deliveryCount {
	file := b.TempDir() + "/tokens"
	if err := os.WriteFile(file, []byte(strings.Join(tokens, "\n")), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "DELIVERY_CHILD=1", "DELIVERY_URL="+url, "DELIVERY_TOKENS="+file)
	cmd.Stderr = os.Stderr
	testenv.EndWithTest(cmd, false)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	b.Logf("opening %d websockets in child process %d", len(tokens), cmd.Process.Pid)
	counts := make(chan deliveryCount, len(tokens)*2)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var c deliveryCount
			var at int64
			if _, err := fmt.Sscanf(lines.Text(), "count %d %d %d", &c.client, &c.count, &at); err == nil {
				c.at = time.Unix(0, at)
				counts <- c
			}
		}
	}()
	return counts
}

// runDeliveryClients is the child process: it opens a websocket per token
// with an unreadCount subscription and prints "count <client> <count>
// <unix ns>" for every count received.
func runDeliveryClients() error {
	raw, err := os.ReadFile(os.Getenv("DELIVERY_TOKENS"))
	if err != nil {
		return err
	}
	tokens := strings.Split(string(raw), "\n")
	lines := make(chan string, len(tokens)*2)
	for i, token := range tokens {
		conn, err := gqlclient.Subscribe(context.Background(), os.Getenv("DELIVERY_URL"), token, gqlclient.UnreadCountSubscription, 30*time.Second)
		if err != nil {
			return fmt.Errorf("socket %d: %w", i, err)
		}
		go deliveryRead(conn, i, lines)
	}
	out := bufio.NewWriter(os.Stdout)
	for line := range lines {
		out.WriteString(line)
		if len(lines) == 0 {
			out.Flush()
		}
	}
	return nil
}

// deliveryRead reports every count a client receives.
func deliveryRead(conn *gqlclient.Socket, client int, out chan<- string) {
	for {
		msg, err := conn.Next()
		if err != nil {
			return
		}
		at := time.Now().UnixNano()
		if n, ok := msg.UnreadCount(); ok {
			out <- fmt.Sprintf("count %d %d %d\n", client, n, at)
		}
	}
}
