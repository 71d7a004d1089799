package api

import "testing"

func TestSignUpAndReadViewer(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		var out struct{ Viewer struct{ Username string } }
		alice.mustDo(t, `{ viewer { username } }`, nil, &out)
		if out.Viewer.Username != "alice" {
			t.Fatalf("viewer = %q", out.Viewer.Username)
		}
	})
}
