package api

// Tests of the bounds on operations in flight (operationGate), each at its
// edge, with operations held in flight by a resolver that answers only once
// the test lets it: HTTP per address and per instance, websocket per
// socket; and of the address groups every per-address limit counts by.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/graph"
	"feedservice/models"
)

// holdingResolvers answer Query.viewer only once released: the operations
// that ask for it stay in flight until then.
type holdingResolvers struct {
	graph.ResolverRoot
	entered chan struct{} // a value each time viewer is asked for
	release chan struct{} // closed to let every one answer
}

func (r *holdingResolvers) Query() graph.QueryResolver {
	return holdingQuery{r.ResolverRoot.Query(), r}
}

type holdingQuery struct {
	graph.QueryResolver
	r *holdingResolvers
}

func (q holdingQuery) Viewer(ctx context.Context) (*models.User, error) {
	q.r.entered <- struct{}{}
	select {
	case <-q.r.release:
	case <-ctx.Done():
	}
	return q.QueryResolver.Viewer(ctx)
}

// newHoldingServer is a test server on MariaDB and Redis whose
// Query.viewer holds its operations until released; change adjusts its
// settings.
func newHoldingServer(t *testing.T, change ...func(*settings.Settings)) (*testServer, *holdingResolvers) {
	t.Helper()
	s := newTestServer(t, backendReal, change...)
	h := &holdingResolvers{ResolverRoot: s.app.resolvers, entered: make(chan struct{}, 100), release: make(chan struct{})}
	s.app.resolvers = h
	hs := httptest.NewServer(s.app.handler())
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		hs.Close()
	})
	s.URL = hs.URL
	return s, h
}

// waitEntered waits for n operations to be held.
func (h *holdingResolvers) waitEntered(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-h.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d operations held", i, n)
		}
	}
}

// rawPost sends query from local address ip and returns the HTTP response
// and its GraphQL answer.
func rawPost(t *testing.T, s *testServer, ip, token, query string) (*http.Response, response) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/query", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := probeClient(ip, 10*time.Second).Do(req)
	if err != nil {
		t.Fatalf("POST from %s: %v", ip, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("POST from %s: status %d, body %s", ip, res.StatusCode, raw)
	}
	r.Status = res.StatusCode
	return res, r
}

// expectRefused checks a refusal for operations in flight: RATE_LIMITED
// with retryAfter 1, naming the setting, with status (0 on a websocket).
func expectRefused(t *testing.T, what string, res *http.Response, errs []gqlError, status int, setting string) {
	t.Helper()
	if len(errs) == 0 || errs[0].Code() != "RATE_LIMITED" || !strings.Contains(errs[0].Message, setting) || errs[0].Extensions["retryAfter"] != float64(1) {
		t.Fatalf("%s: %+v, want RATE_LIMITED naming %s with retryAfter 1", what, errs, setting)
	}
	if res != nil && (res.StatusCode != status || res.Header.Get("Retry-After") != "1") {
		t.Fatalf("%s: status %d, Retry-After %q; want %d and 1", what, res.StatusCode, res.Header.Get("Retry-After"), status)
	}
}

// TestOperationsInFlightOverHTTP: with two places per address and three on
// the instance, two held requests from one address leave a third from it
// refused (429) and one from another address answered; a third held fills
// the instance, whose next request is refused (503) whatever its address;
// once they answer, the first address is served again. Requests whose
// bodies are still on their way hold no place.
func TestOperationsInFlightOverHTTP(t *testing.T) {
	t.Parallel()
	s, hold := newHoldingServer(t, func(c *settings.Settings) { c.MaxOperationsPerAddress = 2; c.MaxOperationsInFlight = 3 })
	var held, late sync.WaitGroup
	// Three requests from the first address send half their body and wait.
	var dripping []*io.PipeWriter
	for range 3 {
		body, w := io.Pipe()
		dripping = append(dripping, w)
		late.Go(func() {
			res, err := probeClient("127.0.0.1", 10*time.Second).Post(s.URL+"/query", "application/json", body)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Errorf("a request whose body came late: %v %v", res, err)
				return
			}
			res.Body.Close()
		})
		w.Write([]byte(`{"query": "{ __typ`))
	}
	holdFrom := func(ip string) {
		held.Go(func() {
			if _, r := rawPost(t, s, ip, "", `{ viewer { username } }`); r.Err() != nil || !strings.Contains(string(r.Data), `"viewer":null`) {
				t.Errorf("a held request from %s answered %s %v", ip, r.Data, r.Err())
			}
		})
	}
	holdFrom("127.0.0.1")
	holdFrom("127.0.0.1")
	hold.waitEntered(t, 2)
	res, r := rawPost(t, s, "127.0.0.1", "", `{ __typename }`)
	expectRefused(t, "a third from one address", res, r.Errors, http.StatusTooManyRequests, "MaxOperationsPerAddress")
	if _, r := rawPost(t, s, "127.0.0.2", "", `{ __typename }`); r.Err() != nil {
		t.Fatalf("another address, with a place left on the instance: %v", r.Err())
	}
	holdFrom("127.0.0.2")
	hold.waitEntered(t, 1)
	res, r = rawPost(t, s, "127.0.0.3", "", `{ __typename }`)
	expectRefused(t, "a fourth on a full instance", res, r.Errors, http.StatusServiceUnavailable, "MaxOperationsInFlight")
	close(hold.release)
	held.Wait()
	for _, w := range dripping {
		w.Write([]byte(`ename }"}`))
		w.Close()
	}
	late.Wait()
	if _, r := rawPost(t, s, "127.0.0.1", "", `{ __typename }`); r.Err() != nil {
		t.Fatalf("once the held ones answered: %v", r.Err())
	}
	metrics := scrape(t, s)
	expectSample(t, metrics, "graphql_operations_refused_total", map[string]string{"limit": gateAddress}, 1)
	expectSample(t, metrics, "graphql_operations_refused_total", map[string]string{"limit": gateInstance}, 1)
	expectSample(t, metrics, "graphql_operations_in_flight", nil, 0)
}

// TestOperationsInFlightForSignedInUsers: a signed-in user's operations
// are counted apart from their address's: with the address's 4 places
// taken by held anonymous requests, the user is served from it; their own
// 4 held operations leave their fifth refused (429) naming
// MaxOperationsPerViewer, from any address, while the address's anonymous
// requests are not. (Slots were keyed by address alone: one abuser behind
// a NAT locked out everyone there.)
func TestOperationsInFlightForSignedInUsers(t *testing.T) {
	t.Parallel()
	s, hold := newHoldingServer(t, func(c *settings.Settings) {
		c.MaxOperationsPerAddress, c.MaxOperationsPerViewer, c.MaxOperationsInFlight = 4, 4, 64
	})
	ann := s.signUp(t, "ann")
	var held sync.WaitGroup
	holdAs := func(ip, token string) {
		held.Go(func() {
			if _, r := rawPost(t, s, ip, token, `{ viewer { username } }`); r.Err() != nil {
				t.Errorf("a held request from %s answered %s %v", ip, r.Data, r.Err())
			}
		})
	}
	for range 4 {
		holdAs("127.0.0.2", "")
	}
	hold.waitEntered(t, 4)
	res, r := rawPost(t, s, "127.0.0.2", "", `{ __typename }`)
	expectRefused(t, "a fifth anonymous request from the address", res, r.Errors, http.StatusTooManyRequests, "MaxOperationsPerAddress")
	if _, r := rawPost(t, s, "127.0.0.2", ann.Token, `{ __typename }`); r.Err() != nil {
		t.Fatalf("a signed-in user at an address whose anonymous places are taken: %v", r.Err())
	}
	for range 4 {
		holdAs("127.0.0.3", ann.Token)
	}
	hold.waitEntered(t, 4)
	res, r = rawPost(t, s, "127.0.0.4", ann.Token, `{ __typename }`)
	expectRefused(t, "the user's fifth", res, r.Errors, http.StatusTooManyRequests, "MaxOperationsPerViewer")
	if _, r := rawPost(t, s, "127.0.0.3", "", `{ __typename }`); r.Err() != nil {
		t.Fatalf("anonymous from the address of a user whose places are taken: %v", r.Err())
	}
	close(hold.release)
	held.Wait()
	expectSample(t, scrape(t, s), "graphql_operations_refused_total", map[string]string{"limit": gateViewer}, 1)
}

// TestOperationsInFlightOverWebsocket: with two queries per socket, a
// third pipelined on the socket is refused by itself while a subscription
// on it still starts (subscriptions have their own cap); another socket's
// query takes the instance's last place, and the next socket's is refused;
// once released, the held ones answer and the socket takes queries again.
func TestOperationsInFlightOverWebsocket(t *testing.T) {
	t.Parallel()
	s, hold := newHoldingServer(t, func(c *settings.Settings) { c.MaxOperationsPerSocket = 2; c.MaxOperationsInFlight = 3 })
	ann := s.signUp(t, "ann")
	ws := liveConnect(t, s, liveTransportWS, ann.Token)
	first, second := ws.subscribe(`{ viewer { username } }`), ws.subscribe(`{ viewer { username } }`)
	hold.waitEntered(t, 2)
	third := ws.subscribe(`{ __typename }`)
	res, end, err := ws.event(third, 10*time.Second)
	if err != nil || end != nil {
		t.Fatalf("a third query on the socket: %v %v", end, err)
	}
	expectRefused(t, "a third query on the socket", nil, res.Errors, 0, "MaxOperationsPerSocket")
	if n := ws.firstCount(ws.subscribe(liveUnreadSub), 10*time.Second, "a subscription beside two held queries"); n != 0 {
		t.Fatalf("unreadCount %d, want 0", n)
	}
	other := liveConnect(t, s, liveTransportWS, ann.Token)
	held := other.subscribe(`{ viewer { username } }`)
	hold.waitEntered(t, 1)
	last := liveConnect(t, s, liveTransportWS, ann.Token)
	res, _, err = last.event(last.subscribe(`{ __typename }`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	expectRefused(t, "a query on a full instance", nil, res.Errors, 0, "MaxOperationsInFlight")
	close(hold.release)
	for _, op := range []struct {
		c  *liveConn
		id string
	}{{ws, first}, {ws, second}, {other, held}} {
		if res, end, err := op.c.event(op.id, 10*time.Second); err != nil || end != nil || !strings.Contains(string(res.Data), "ann") {
			t.Fatalf("a held query answered %s %+v %v %v", res.Data, res.Errors, end, err)
		}
	}
	for i := range 3 { // the places are free again, however often taken
		if res, _, err := ws.event(ws.subscribe(`{ viewer { username } }`), 10*time.Second); err != nil || len(res.Errors) > 0 {
			t.Fatalf("query %d after the release: %+v %v", i, res.Errors, err)
		}
	}
}

// TestAddressGroups: every per-address limit counts an IPv4 address alone
// and an IPv6 address by its /64 (with IPv4-mapped IPv6 as IPv4), at the
// edges of the /64.
func TestAddressGroups(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ip, group string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"not an address", "not an address"},
	} {
		if got := addressGroup(c.ip); got != c.group {
			t.Errorf("addressGroup(%q) = %q, want %q", c.ip, got, c.group)
		}
	}
	if a, b := addressPrefix(netip.MustParseAddr("2001:db8::1")), addressPrefix(netip.MustParseAddr("2001:db8::ffff:1")); a != b {
		t.Errorf("one /64, two prefixes: %v, %v", a, b)
	}
}
