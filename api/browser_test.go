//go:build unix

package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"feedservice/api/settings"
	"feedservice/internal/testenv"
)

// browserTestDir holds the browser tests: playwright-core driving Debian's
// Chromium against the server's GraphiQL page and React app.
const browserTestDir = "../clients/browser-test"

// The browser test's server puts an insertion (a promoted post or a
// suggested user) in every second place of a home, and promotes one post
// with its operator token before the tests start.
const (
	browserHomeInsertEvery = 2
	browserOperatorToken   = "operator-secret-for-browser-tests"
	browserPromotedBody    = "Promoted: the feed service's API is documented in its README."
)

// defaultChromium is where Debian's chromium package puts the browser.
// CHROMIUM_PATH overrides it.
const defaultChromium = "/usr/bin/chromium"

// TestBrowserClients runs clients/browser-test (node --test) against a
// server on the real backends, in a real browser: the GraphiQL page at /
// with every other host blocked (a query from its example document, and a
// subscription event over graphql-ws), and the React app at /app/ in two
// browser contexts (sign-up, follow, the live red dot and "new posts" bar,
// and a feed scrolled to its end with every entry once; a home's suggested
// user followed with its button, a promoted post with its label, and one
// entry dismissed; Mute and Unmute on a followee's profile taking their post
// out of the feed and back, and Block doing the same, undone from the
// blocked list; a protected account switched on, asked with its button, and
// its requests approved and rejected on its profile; a list made, a followee
// added from their profile, its feed read, renamed, emptied and deleted), and a page of
// another origin calling /query through CORS (and one of an unlisted origin
// refused by the browser). It takes
// screenshots of the app's feed and of a profile page: into docs/ (the
// README's pictures) with UPDATE_SCREENSHOTS=1, otherwise into a temporary
// directory, so that a test run leaves the checkout as it was.
//
// It needs node and Chromium (apt-get install -y chromium); it installs
// the locked npm packages with `npm ci` when node_modules is missing.
// playwright-core never downloads a browser.
func TestBrowserClients(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = defaultChromium
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("Chromium is not installed at %s: the browser tests drive Debian's Chromium; "+
			"install it with `apt-get install -y chromium` (or set CHROMIUM_PATH): %v", chromium, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (needed by %s): %v", browserTestDir, err)
	}
	dir, err := filepath.Abs(browserTestDir)
	if err != nil {
		t.Fatal(err)
	}
	docs := t.TempDir()
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		var err error
		if docs, err = filepath.Abs("../docs"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(3*time.Minute))
	defer cancel()

	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, os.ErrNotExist) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatalf("npm is not installed, and %s/node_modules is missing: %v", browserTestDir, err)
		}
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", browserTestDir, err, out)
		}
	} else if err != nil {
		t.Fatal(err)
	}

	// Blank pages on two other origins, from which the browser test calls
	// /query across origins (CORS): the first listed in ALLOWED_ORIGINS,
	// the second not. Real servers on loopback: a page the browser context
	// made up has no address, and Chromium then holds its requests to the
	// server's loopback address to Private Network Access, which CORS alone
	// does not satisfy.
	blank := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>elsewhere</title>"))
	})
	corsPage, deniedPage := httptest.NewServer(blank), httptest.NewServer(blank)
	t.Cleanup(corsPage.Close)
	t.Cleanup(deniedPage.Close)
	// Home entries of other kinds: an insertion in every second place, and
	// an operator token, with which a post is promoted into every home
	// (through the mutation and its header, as an operator would).
	s := newTestServer(t, backendReal, func(c *settings.Settings) {
		c.AllowedOrigins = corsPage.URL
		c.HomeInsertEvery = browserHomeInsertEvery
		c.OperatorToken = browserOperatorToken
	})
	sponsor := s.signUp(t, "sponsor")
	promoted := feedCreatePost(t, sponsor, browserPromotedBody).ID
	operator := &client{s: s, Name: "operator", Header: http.Header{"X-Operator-Token": {browserOperatorToken}}}
	operator.mustDo(t, `mutation($id: ID!) { promotePost(postId: $id) { promoted } }`, map[string]any{"id": promoted}, nil)

	// The file's tests run in one process under one --test-timeout: four
	// of them took 81 s on a loaded 2-core box, so the bound is 150 s,
	// within the 3 minutes of ctx.
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", testenv.NodeTestTimeout(150*time.Second))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"SERVER_URL="+s.URL,
		"CORS_ORIGIN="+corsPage.URL,
		"CORS_DENIED_ORIGIN="+deniedPage.URL,
		"CHROMIUM_PATH="+chromium,
		"PROMOTED_POST_ID="+promoted,
		"PROMOTED_POST_BODY="+browserPromotedBody,
		"SCREENSHOT_DIR="+docs,
		testenv.TimeScaleEnv(),
		"NO_COLOR=1",
	)
	// Node and the browsers it starts share a process group, all ended if
	// the test runs out of time.
	testenv.EndWithTest(cmd, true)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test in %s failed after %s (SERVER_URL=%s): %v\n%s", browserTestDir, time.Since(start).Round(time.Millisecond), s.URL, err, out)
	}
	t.Logf("node --test in %s passed in %s; screenshots in %s:\n%s", browserTestDir, time.Since(start).Round(time.Millisecond), docs, out)
}
