package api

// Black-box tests that a request cannot buy an answer, or a use of memory,
// much larger than itself by having its input echoed back in errors.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
	"feedservice/store/storetest"
)

// echoRequest is 150 aliases of node(id: $x), with $x idBytes long: each
// alias fails on the id.
func echoRequest(idBytes int) []byte {
	var doc strings.Builder
	doc.WriteString("query($x: ID!) {")
	for i := range 150 {
		fmt.Fprintf(&doc, " a%d: node(id: $x) { id }", i)
	}
	doc.WriteString(" }")
	body, _ := json.Marshal(map[string]any{"query": doc.String(), "variables": map[string]any{"x": strings.Repeat("A", idBytes)}})
	return body
}

// TestEchoedIDAnswerStaysSmall: an anonymous 23 KB request of 150 aliases
// of one 20,000-byte id is answered with 150 errors that quote a few bytes
// of it each, under 4 times the request plus 64 KiB (it was 3.0 MB).
func TestEchoedIDAnswerStaysSmall(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	body := echoRequest(20_000)
	res, raw := limitsPost(t, s, "", nil, body)
	if bound := 4*len(body) + 64<<10; len(raw) > bound {
		t.Fatalf("a %d-byte request got a %d-byte answer (status %d), over %d", len(body), len(raw), res.StatusCode, bound)
	}
	r := errsDecode(t, res.StatusCode, raw)
	if len(r.Errors) != 150 || r.Code() != "BAD_USER_INPUT" {
		t.Fatalf("want 150 BAD_USER_INPUT errors, got %d: %+v", len(r.Errors), r.Errors[:min(2, len(r.Errors))])
	}
}

// TestErrorBytesBoundedByRequest: an answer's errors may hold
// ERROR_BYTES_PER_REQUEST_BYTE times its request's bytes plus
// ERROR_BYTES_ALLOWANCE; past that the answer is RESPONSE_TOO_LARGE alone.
func TestErrorBytesBoundedByRequest(t *testing.T) {
	t.Parallel()
	body := echoRequest(8)
	// What the 150 errors take, measured with room to spare, then with the
	// allowance one byte short of them.
	roomy := newTestServer(t, backendReal, func(c *settings.Settings) { c.ErrorBytesPerRequestByte, c.ErrorBytesAllowance = 0, 1<<20 })
	res, raw := limitsPost(t, roomy, "", nil, body)
	if r := errsDecode(t, res.StatusCode, raw); len(r.Errors) != 150 {
		t.Fatalf("with room: %d errors, want 150", len(r.Errors))
	}
	var answer struct{ Errors []json.RawMessage }
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	errorBytes := 0
	for _, e := range answer.Errors {
		errorBytes += len(e)
	}
	for _, c := range []struct {
		allowance int
		want      int // errors
	}{{errorBytes - len(body), 150}, {errorBytes - len(body) - 1, 1}} {
		s := newTestServer(t, backendReal, func(cfg *settings.Settings) { cfg.ErrorBytesPerRequestByte, cfg.ErrorBytesAllowance = 1, c.allowance })
		res, raw := limitsPost(t, s, "", nil, body)
		r := errsDecode(t, res.StatusCode, raw)
		if len(r.Errors) != c.want || (c.want == 1 && r.Code() != "RESPONSE_TOO_LARGE") {
			t.Errorf("errors of %d bytes against a cap of %d: %d errors (%s), want %d", errorBytes, len(body)+c.allowance, len(r.Errors), r.Code(), c.want)
		}
	}
}

// TestLongIDCostsLittleMemory: a request of 150 aliases of one id of
// 1,000,000 bytes grows the server's peak RSS by less than 300 MB (it
// took 929 MB and 3.3 s of CPU when every error quoted the id).
func TestLongIDCostsLittleMemory(t *testing.T) {
	t.Parallel()
	const rssGrowthMax = 300 << 20
	bin := buildServer(t)
	_, prefix := testenv.Redis(t)
	p := startServerProcess(t, bin, "MYSQL_DSN="+storetest.MySQL(t), "REDIS_ADDR="+testenv.RedisAddr(), "KEY_PREFIX="+prefix,
		"TOKEN_SECRET=test-secret-test-secret-test-secret!")
	peakRSS := func() int64 {
		t.Helper()
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return kb << 10
			}
		}
		t.Fatal("no VmHWM in the server's /proc status")
		return 0
	}
	before := peakRSS()
	body := echoRequest(1_000_000)
	r, err := rawDoBody(p.URL, "", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	after := peakRSS()
	t.Logf("peak RSS %d MB before, %d MB after a %d-byte request (%d errors, %s)", before>>20, after>>20, len(body), len(r.Errors), r.Code())
	if after-before > rssGrowthMax {
		t.Errorf("the server's peak RSS grew %d MB, over %d MB", (after-before)>>20, rssGrowthMax>>20)
	}
	if len(r.Errors) != 150 || r.Code() != "BAD_USER_INPUT" {
		t.Errorf("want 150 BAD_USER_INPUT errors, got %d (%s)", len(r.Errors), r.Code())
	}
}
