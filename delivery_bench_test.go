package main

// BenchmarkRedDotDelivery measures live red dots end to end: N readers hold
// an open websocket with an unreadCount subscription, a followee of all of
// them posts, and the time from the post's commit until each reader's new
// count arrives is reported as p50 and p99 (ms), for an ordinary author
// (fanned out) and a celebrity (merged at read time).
//
//	go test -run '^$' -bench RedDotDelivery -benchtime 5x .        # N = 1,000
//	DELIVERY_SOCKETS=9000 go test -run '^$' -bench RedDotDelivery .
//
// Client and server share this process, so N is bounded by the open-file
// limit (two descriptors per socket): 10,000 sockets need the bench/ load
// generator in a process of its own.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"testing"
	"time"

	"github.com/gorilla/websocket"

	"feedservice/feed"
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
	s := newTestServer(b, backendReal, func(c *config) {
		c.FeedMode = string(feed.ModeHybrid)
		c.CelebrityFollowers = celebrityFollowers
	})
	ctx := context.Background()
	author, readers := deliveryGraph(b, s, sockets)
	counts := make(chan deliveryCount, sockets*4)
	conns := make([]*websocket.Conn, 0, sockets)
	b.Logf("opening %d websockets", sockets)
	for i, reader := range readers {
		token, err := s.app.engine.IssueToken(reader)
		if err != nil {
			b.Fatal(err)
		}
		conn := deliverySubscribe(b, s, token)
		conns = append(conns, conn)
		go deliveryRead(conn, i, counts)
		if (i+1)%(max(sockets/5, 1)) == 0 {
			b.Logf("  %d/%d open", i+1, sockets)
		}
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	latest := make([]int, sockets)
	for i := range latest {
		latest[i] = -1
	}
	waitCounts := func(want int, since time.Time) []time.Duration {
		var lat []time.Duration
		deadline := time.After(60 * time.Second)
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
	waitCounts(0, time.Now())
	b.Logf("every client holds count 0; posting")
	var all []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.app.engine.CreatePost(ctx, author, "post "+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		all = append(all, waitCounts(i+1, time.Now())...)
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
	ids, err := feed.NewIDGenerator(feed.MaxNodes - 1)
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

func deliverySubscribe(b *testing.B, s *testServer, token string) *websocket.Conn {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/query", nil)
	if err != nil {
		b.Fatal(err)
	}
	msgs := []map[string]any{
		{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}},
		{"type": "subscribe", "id": "1", "payload": map[string]any{"query": "subscription { unreadCount }"}},
	}
	for _, m := range msgs {
		if err := conn.WriteJSON(m); err != nil {
			b.Fatal(err)
		}
	}
	return conn
}

// deliveryRead reports every count a client receives, answering pings.
func deliveryRead(conn *websocket.Conn, client int, out chan<- deliveryCount) {
	for {
		_, raw, err := conn.ReadMessage()
		if err != nil {
			return
		}
		at := time.Now()
		var msg struct {
			Type    string
			Payload struct {
				Data struct{ UnreadCount *int }
			}
		}
		if json.Unmarshal(raw, &msg) != nil {
			continue
		}
		switch {
		case msg.Type == "ping":
			conn.WriteJSON(map[string]string{"type": "pong"})
		case msg.Type == "next" && msg.Payload.Data.UnreadCount != nil:
			out <- deliveryCount{client: client, count: *msg.Payload.Data.UnreadCount, at: at}
		}
	}
}
