package main

// The red dot's floor: a bare broadcaster. One Go process, built from the
// same gorilla/websocket and graphql-transport-ws framing as the service,
// holding the same number of subscriptions; on one Redis PUBLISH it writes
// to every socket one pre-encoded "next" frame of the size of an
// unreadCount update. The red-dot harness, with the same sockets open,
// times it as it times the service: from the PUBLISH's answer to each
// socket's new count. No service can tell a socket sooner than that.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/gqlclient"
	"feedservice/internal/serverproc"
)

// broadcasterConn is one socket of the broadcaster, written by one writer
// at a time.
type broadcasterConn struct {
	mu sync.Mutex
	c  *websocket.Conn
}

func (b *broadcasterConn) write(frame []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return b.c.WriteMessage(websocket.TextMessage, frame)
}

// runBroadcaster serves graphql-transport-ws on addr (/query; /readyz
// answers 200) and, for each message on channel of the Redis at
// redisAddr (a count), writes every subscribed socket that count's frame.
func runBroadcaster(addr, redisAddr, channel string) error {
	var (
		mu    sync.Mutex
		conns = map[*broadcasterConn]bool{}
	)
	up := websocket.Upgrader{Subprotocols: []string{gqlclient.Protocol}, CheckOrigin: func(*http.Request) bool { return true }}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/query", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		bc := &broadcasterConn{c: c}
		defer func() {
			mu.Lock()
			delete(conns, bc)
			mu.Unlock()
			c.Close()
		}()
		for {
			var m gqlclient.Message
			if err := c.ReadJSON(&m); err != nil {
				return
			}
			switch m.Type {
			case "connection_init":
				err = bc.write([]byte(`{"type":"connection_ack"}`))
			case "ping":
				err = bc.write([]byte(`{"type":"pong"}`))
			case "subscribe": // the count starts at 0, as after markFeedRead
				if err = bc.write(countFrame(m.ID, 0)); err == nil {
					mu.Lock()
					conns[bc] = true
					mu.Unlock()
				}
			}
			if err != nil {
				return
			}
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	sub := rdb.Subscribe(context.Background(), channel)
	if _, err := sub.Receive(context.Background()); err != nil {
		return err
	}
	go func() {
		for msg := range sub.Channel() {
			n, _ := strconv.Atoi(msg.Payload)
			frame := countFrame("1", n) // every harness socket's subscription is "1"
			mu.Lock()
			all := make([]*broadcasterConn, 0, len(conns))
			for c := range conns {
				all = append(all, c)
			}
			mu.Unlock()
			for _, c := range all {
				go c.write(frame)
			}
		}
	}()
	return http.Serve(ln, mux)
}

// countFrame is the "next" frame of an unreadCount update of n for the
// subscription id.
func countFrame(id string, n int) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "type": "next", "payload": map[string]any{"data": map[string]any{"unreadCount": n}}})
	return b
}

// broadcasterFloor opens n sockets (as the red-dot workload does) to a
// bare broadcaster started as a process of its own, publishes redDotPosts
// counts, and returns the delivery latencies: from each PUBLISH's answer
// to each socket's new count.
func (e *env) broadcasterFloor(ctx context.Context, n int) (Stat, error) {
	self, err := os.Executable()
	if err != nil {
		return Stat{}, err
	}
	addr, err := serverproc.FreeAddr()
	if err != nil {
		return Stat{}, err
	}
	channel := e.o.prefixBase + "broadcaster"
	logf("  bare broadcaster: %d sockets", n)
	p, err := serverproc.Start(ctx, serverproc.Options{
		Bin: self, Args: []string{"-broadcaster-addr", addr, "-redis", e.o.redis, "-broadcaster-channel", channel},
		Addr: addr, Log: os.Stderr, Ready: 30 * time.Second, OwnGroup: true,
	})
	if err != nil {
		return Stat{}, fmt.Errorf("start the broadcaster: %w", err)
	}
	defer p.Stop(10 * time.Second)
	readers, tokens := make([]int, n), map[int]string{}
	for i := range readers {
		readers[i], tokens[i] = i, "floor" // the broadcaster asks for no token
	}
	s := newRedDotSockets(&modeRun{env: &env{o: e.o, res: e.res, tokens: tokens}, s: &serverProc{url: "http://" + addr}}, readers)
	s.open(ctx)
	defer s.close()
	if got := s.awaitFirstCounts(); got != n || s.dialErrs > 0 {
		return Stat{}, fmt.Errorf("the broadcaster's sockets: %d of %d answered, %d dial errors", got, n, s.dialErrs)
	}
	var lat []time.Duration
	missing, everyone := 0, make([]bool, n)
	for i := range everyone {
		everyone[i] = true
	}
	for k := 1; k <= e.o.redDotPosts; k++ {
		base := slices.Clone(s.latest)
		if err := e.rdb.Publish(ctx, channel, k).Err(); err != nil {
			return Stat{}, err
		}
		l, m := s.collect(base, everyone, time.Now())
		lat, missing = append(lat, l...), missing+m
	}
	if missing > 0 {
		return Stat{}, fmt.Errorf("the broadcaster's sockets: %d deliveries missing", missing)
	}
	st := latStat(lat)
	logf("  bare broadcaster, %d sockets: p50 %.1f ms p99 %.1f ms max %.1f ms", n, st.P50, st.P99, st.Max)
	return st, nil
}
