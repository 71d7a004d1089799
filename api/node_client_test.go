package api

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"feedservice/internal/testenv"
)

// nodeClientDir holds the Node test that drives the server with a real
// client: @apollo/client over HTTP, and graphql-ws for subscriptions.
const nodeClientDir = "../clients/node-test"

// TestNodeApolloClient runs clients/node-test (node --test) against a
// server on the real backends: sign-ups, follows and posts through Apollo,
// live unreadCount and feedItemAdded over graphql-ws, paging with fetchMore
// merged by relayStylePagination, the refusal of a bad token, and that of
// @defer (Apollo asks for multipart/mixed and must get the error). It needs
// node and npm; it installs the locked packages with `npm ci` when
// node_modules is missing.
func TestNodeApolloClient(t *testing.T) {
	t.Parallel() // it waits far more than it computes
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (needed by %s): %v", nodeClientDir, err)
	}
	dir, err := filepath.Abs(nodeClientDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(2*time.Minute))
	defer cancel()

	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, os.ErrNotExist) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatalf("npm is not installed, and %s/node_modules is missing: %v", nodeClientDir, err)
		}
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", nodeClientDir, err, out)
		}
	} else if err != nil {
		t.Fatal(err)
	}

	s := newTestServer(t, backendReal)

	// Run in the folder, where node --test finds *.test.mjs (and skips
	// node_modules) on every Node version.
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", testenv.NodeTestTimeout(time.Minute))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SERVER_URL="+s.URL, "NO_COLOR=1", testenv.TimeScaleEnv())
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test in %s failed after %s (SERVER_URL=%s): %v\n%s", nodeClientDir, time.Since(start).Round(time.Millisecond), s.URL, err, out)
	}
	t.Logf("node --test in %s passed in %s:\n%s", nodeClientDir, time.Since(start).Round(time.Millisecond), out)
}
