package api

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/api/sockets"
	"feedservice/internal/ratelimit"
	"feedservice/resolvers"
)

// socketEnd waits for the complete that ends operation id on c and
// returns every message of id up to it.
func socketEnd(t *testing.T, c *liveConn, id string) []liveMsg {
	t.Helper()
	var got []liveMsg
	for {
		m, err := c.take(10*time.Second, func(m liveMsg) bool { return m.ID == id })
		if err != nil {
			t.Fatalf("operation %s: no complete (%v); its messages %v", id, err, got)
		}
		got = append(got, m)
		if m.Type == "complete" || m.Type == "error" {
			return got
		}
	}
}

// socketCodes lists the extensions.code of the errors of msgs.
func socketCodes(msgs []liveMsg) []string {
	var codes []string
	for _, m := range msgs {
		var errs []gqlError
		switch m.Type {
		case "next", "data":
			var res liveResult
			json.Unmarshal(m.Payload, &res)
			errs = res.Errors
		case "error":
			json.Unmarshal(m.Payload, &errs)
		}
		for _, e := range errs {
			code, _ := e.Extensions["code"].(string)
			codes = append(codes, code)
		}
	}
	return codes
}

// TestSubscribeAndCompleteIsPaidAndQuiet: subscribe and complete in a
// loop on one socket, under a complexity budget of 10 unreadCount
// subscriptions. Each start spends its price as it starts, though the
// client completes it at once: the 11th and later are refused with
// RATE_LIMITED (they went through unpaid, their context cancelled before
// the budget was asked). No subscription the client completed gets an
// INTERNAL_SERVER_ERROR ("request cancelled"), and the server logs no
// Redis failure for the cancelled contexts.
func TestSubscribeAndCompleteIsPaidAndQuiet(t *testing.T) {
	t.Parallel()
	const paid, cycles = 10, 30
	var log syncBuffer
	s := newTestServerWithLog(t, backendReal, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		func(c *settings.Settings) {
			c.ComplexityRate = ratelimit.Rate{Count: paid * resolvers.UnreadCountCost, Period: time.Hour}
			c.WebsocketSubscribeRate = ratelimit.Rate{Count: 10 * cycles, Period: time.Hour}
		})
	reader := s.signUp(t, "reader")
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	refused := 0
	for i := range cycles {
		id := conn.subscribe(liveUnreadSub)
		conn.complete(id)
		msgs := socketEnd(t, conn, id)
		codes := socketCodes(msgs)
		for _, code := range codes {
			if code == "INTERNAL_SERVER_ERROR" {
				t.Errorf("cycle %d: the subscription the client completed got %v", i+1, msgs)
			}
		}
		if len(codes) > 0 && codes[0] == "RATE_LIMITED" {
			refused++
		}
	}
	if refused != cycles-paid {
		t.Errorf("%d of %d subscribe-and-complete cycles refused under a budget of %d starts, want %d", refused, cycles, paid, cycles-paid)
	}
	for _, bad := range []string{"redis failed", "redis cache read failed", "context canceled"} {
		if strings.Contains(log.String(), bad) {
			t.Errorf("the log says %q for contexts the client cancelled:\n%s", bad, log.String())
		}
	}
}

// TestSubscribeRatePerSocket: a socket may start WS_SUBSCRIBE_RATE
// subscriptions; the next is refused with RATE_LIMITED and retryAfter,
// naming the setting, and the socket stays open; another socket has a
// budget of its own.
func TestSubscribeRatePerSocket(t *testing.T) {
	t.Parallel()
	const starts = 3
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) {
		c.WebsocketSubscribeRate = ratelimit.Rate{Count: starts, Period: time.Hour}
	})
	reader := s.signUp(t, "reader")
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	for i := range starts {
		conn.firstCount(conn.subscribe(liveUnreadSub), 5*time.Second, "subscription "+string(rune('1'+i)))
	}
	res, end, err := conn.event(conn.subscribe(liveUnreadSub), 5*time.Second)
	if code := liveErrorCode(res, end); err != nil || code != "RATE_LIMITED" {
		t.Fatalf("start %d on one socket: %s %+v %v, want RATE_LIMITED", starts+1, code, res, err)
	}
	if retry, _ := res.Errors[0].Extensions["retryAfter"].(float64); retry <= 0 || !strings.Contains(res.Errors[0].Message, "WS_SUBSCRIBE_RATE") {
		t.Errorf("the refusal %+v, want retryAfter and a message naming WS_SUBSCRIBE_RATE", res.Errors[0])
	}
	if _, _, closed := conn.closeStatus(0); closed {
		t.Error("the socket closed after a refused start")
	}
	other := liveConnect(t, s, liveTransportWS, reader.Token)
	other.firstCount(other.subscribe(liveUnreadSub), 5*time.Second, "another socket's first subscription")
}

// TestPingRatePerSocket: a socket may send WS_PING_RATE pings, each
// answered; the next closes it with 4429. 20,000 pings were answered and
// the socket stayed open.
func TestPingRatePerSocket(t *testing.T) {
	t.Parallel()
	const pings = 5
	s := newTestServer(t, backendEmbedded, func(c *settings.Settings) {
		c.WebsocketPingRate = ratelimit.Rate{Count: pings, Period: time.Hour}
	})
	reader := s.signUp(t, "reader")
	conn := liveConnect(t, s, liveTransportWS, reader.Token)
	for i := range pings {
		conn.mustSend(liveMsg{Type: "ping"})
		if _, err := conn.take(5*time.Second, liveOfType("pong")); err != nil {
			t.Fatalf("ping %d of %d: no pong: %v", i+1, pings, err)
		}
	}
	conn.mustSend(liveMsg{Type: "ping"})
	conn.expectClose(sockets.ClosePingFlood, 5*time.Second)
}
