package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	feedconfig "feedservice/feed/config"

	"github.com/gorilla/websocket"
)

// This file checks what the API takes as a post body, over HTTP: any
// Unicode text within the length limit, stored and returned byte for byte;
// never invalid UTF-8, unpaired surrogates or control characters but line
// feed and tab, refused with BAD_USER_INPUT instead of stored repaired.

// bodiesPostCount is the viewer's post count, which every stored post moves.
func bodiesPostCount(t *testing.T, c *client) int {
	t.Helper()
	var out struct{ Viewer struct{ PostCount int } }
	c.mustDo(t, `{ viewer { postCount } }`, nil, &out)
	return out.Viewer.PostCount
}

// bodiesSendRaw posts a hand-written request body as c, for JSON that
// encoding/json would not write (raw invalid bytes, lone surrogates).
func bodiesSendRaw(t *testing.T, c *client, body []byte) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.s.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := errsDecode(t, res.StatusCode, raw)
	errsCheck(t, r)
	return r
}

func TestPostBodiesKeptByteForByte(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		bodies := map[string]string{
			"4-byte emoji":          "🙂 👩‍👩‍👧‍👦 🇺🇦 \U0001F9D1\U0001F3FD\u200D\U0001F680",
			"combining characters":  "e\u0301 a\u0308\u0323 Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇",
			"right-to-left":         "שלום עולם — مرحبا بالعالم \u202bembedded\u202c",
			"line feeds and tabs":   "one\ntwo\tthree\n\nfour",
			"at the limit, 4 bytes": strings.Repeat("\U0001F600", feedconfig.MaxPostChars),
			"the last code point":   "\U0010FFFF\uFFFD\uFEFF",
		}
		for name, body := range bodies {
			t.Run(name, func(t *testing.T) {
				id := errsPost(t, alice, body)
				var out struct{ Node struct{ Body string } }
				s.anon().mustDo(t, `query($id: ID!) { node(id: $id) { ... on Post { body } } }`, map[string]any{"id": id}, &out)
				if out.Node.Body != body {
					t.Fatalf("stored % x, sent % x", out.Node.Body, body)
				}
			})
		}
	})
}

func TestPostBodiesRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		before := bodiesPostCount(t, alice)
		refuse := func(t *testing.T, r response) {
			t.Helper()
			if r.Code() != "BAD_USER_INPUT" {
				t.Fatalf("status %d, errors %+v, data %s; want BAD_USER_INPUT", r.Status, r.Errors, r.Data)
			}
			if n := bodiesPostCount(t, alice); n != before {
				t.Fatalf("a refused body was stored: %d posts, want %d", n, before)
			}
		}
		for name, body := range map[string]string{
			"NUL byte":           "nul\x00byte",
			"carriage return":    "windows\r\nline",
			"escape sequence":    "\x1b[31mred",
			"DEL":                "del\x7f",
			"C1 control":         "next\u0085line",
			"one over the limit": strings.Repeat("\U0001F600", feedconfig.MaxPostChars+1),
		} {
			t.Run(name, func(t *testing.T) {
				refuse(t, alice.do(t, errsCreatePostDoc, map[string]any{"b": body}))
			})
		}
		doc, _ := json.Marshal(errsCreatePostDoc)
		for name, variable := range map[string]string{
			"invalid UTF-8 bytes": "\"bad \xff\xfe\xc0\xaf bytes\"",
			"truncated UTF-8":     "\"cut \xe2\x82\"",
			"lone low surrogate":  `"\udc00"`,
			"lone high surrogate": `"\ud83d x"`,
			"reversed pair":       `"\ude42\ud83d"`,
		} {
			t.Run(name, func(t *testing.T) {
				refuse(t, bodiesSendRaw(t, alice, []byte(`{"query":`+string(doc)+`,"variables":{"b":`+variable+`}}`)))
			})
		}
		t.Run("lone surrogate in a GraphQL string", func(t *testing.T) {
			refuse(t, alice.do(t, `mutation { createPost(input: {body: "half \udc00"}) { post { id } } }`, nil))
		})
		t.Run("surrogate pair in a GraphQL string", func(t *testing.T) {
			var out struct {
				CreatePost struct{ Post struct{ Body string } }
			}
			alice.mustDo(t, `mutation { createPost(input: {body: "pair \ud83d\ude42"}) { post { body } } }`, nil, &out)
			if out.CreatePost.Post.Body != "pair 🙂" {
				t.Fatalf("stored %q", out.CreatePost.Post.Body)
			}
			before++
		})
		t.Run("10 MB", func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"query": errsCreatePostDoc, "variables": map[string]any{"b": strings.Repeat("🙂", 10<<20/4)}})
			r := bodiesSendRaw(t, alice, body)
			if r.Status != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want %d", r.Status, http.StatusRequestEntityTooLarge)
			}
			refuse(t, r)
			alice.mustDo(t, errsCreatePostDoc, map[string]any{"b": "still serving"}, nil)
		})
	})
}

// A websocket message that is not Unicode text closes the socket and stores
// nothing; the same mutation with valid text runs.
func TestPostBodiesOverWebsocket(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		alice := s.signUp(t, "alice")
		send := func(t *testing.T, variable string) *liveConn {
			c := liveConnect(t, s, liveTransportWS, alice.Token)
			msg := `{"type":"subscribe","id":"1","payload":{"query":"mutation($b: String!) { createPost(input: {body: $b}) { post { body } } }","variables":{"b":` + variable + `}}}`
			c.wmu.Lock()
			defer c.wmu.Unlock()
			if err := c.ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			return c
		}
		t.Run("valid text", func(t *testing.T) {
			c := send(t, `"ok \ud83d\ude42"`)
			m, err := c.take(5*time.Second, liveOfType("next"))
			if err != nil || !strings.Contains(string(m.Payload), `"body":"ok 🙂"`) {
				t.Fatalf("next %s, %v", m, err)
			}
		})
		for name, variable := range map[string]string{"invalid UTF-8": "\"bad \xff\"", "lone surrogate": `"\udc00"`} {
			t.Run(name, func(t *testing.T) {
				c := send(t, variable)
				if _, _, closed := c.closeStatus(5 * time.Second); !closed {
					t.Fatalf("the socket is still open (queued %v)", c.queued())
				}
				if n := bodiesPostCount(t, alice); n != 1 {
					t.Fatalf("%d posts, want only the valid one", n)
				}
			})
		}
	})
}
