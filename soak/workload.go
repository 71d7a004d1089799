package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"feedservice/internal/gqlclient"
)

// user is a signed-up user of the soak.
type user struct {
	id, token string
}

// world is the graph the workload acts on, and what it recorded.
type world struct {
	users   []user
	http    *http.Client
	mu      sync.Mutex
	posts   []string // ids of posts made, for reposts
	current *interval
}

// The operations of the mixed workload, with their weights (per cent).
var operations = []struct {
	name   string
	weight int
}{
	{"feed", 28}, {"deepPage", 10}, {"timeline", 7}, {"createPost", 18}, {"repost", 9},
	{"follow", 9}, {"unfollow", 6}, {"markFeedRead", 10}, {"viewer", 3},
}

// gql posts a document to url as token and decodes data into out. Any
// transport failure, non-200 status or GraphQL error is an error.
func (w *world) gql(ctx context.Context, url, token, query string, vars map[string]any, out any) error {
	return gqlclient.New(url, w.http).Do(ctx, token, query, vars, out)
}

// prepare signs up the users (alternating instances) and makes each follow
// s.Follows others.
func prepare(ctx context.Context, s settings, d *deployment) (*world, error) {
	w := &world{http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	run := randomName("")
	w.users = make([]user, s.Users)
	errs := make(chan error, s.Users)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range s.Users {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var out struct {
				SignUp struct {
					Token string
					User  struct{ ID string }
				}
			}
			name := fmt.Sprintf("soak%s_%d", run, i)
			err := w.gql(ctx, d.instances[i%2].url, "", `mutation($u: String!, $p: String!) { signUp(input: {username: $u, password: $p}) { token user { id } } }`,
				map[string]any{"u": name, "p": "password-" + name}, &out)
			if err != nil {
				errs <- err
				return
			}
			w.users[i] = user{id: out.SignUp.User.ID, token: out.SignUp.Token}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, u := range w.users {
		for range min(s.Follows, s.Users-1) {
			o := w.other(rng, i)
			if err := w.gql(ctx, d.instances[i%2].url, u.token, followMutation, map[string]any{"id": o.id}, nil); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

const (
	followMutation   = `mutation($id: ID!) { follow(userId: $id) { user { id } } }`
	unfollowMutation = `mutation($id: ID!) { unfollow(userId: $id) { user { id } } }`
	feedQuery        = `query($after: String) { feed(first: 20, after: $after) {
  unreadCount edges { cursor node { addedAt post { id body author { username } } reposters { username } } }
  pageInfo { hasNextPage endCursor } } }`
)

func (w *world) other(rng *rand.Rand, i int) user {
	for {
		if j := rng.IntN(len(w.users)); j != i {
			return w.users[j]
		}
	}
}

// op runs one operation of the mix as a random user on a random instance.
func (w *world) op(ctx context.Context, rng *rand.Rand, d *deployment, name string) error {
	i := rng.IntN(len(w.users))
	u := w.users[i]
	url := d.instances[rng.IntN(len(d.instances))].url
	type page struct {
		Feed struct {
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	switch name {
	case "feed":
		return w.gql(ctx, url, u.token, feedQuery, nil, nil)
	case "deepPage":
		// Pages 2 to 5, each from the cursor of the one before.
		var after *string
		for range 2 + rng.IntN(4) {
			var p page
			if err := w.gql(ctx, url, u.token, feedQuery, map[string]any{"after": after}, &p); err != nil {
				return err
			}
			if !p.Feed.PageInfo.HasNextPage {
				return nil
			}
			after = p.Feed.PageInfo.EndCursor
		}
		return nil
	case "timeline":
		return w.gql(ctx, url, u.token, `query($id: ID!) { node(id: $id) { ... on User { username timeline(first: 20) { edges { node { id body } } } } } }`,
			map[string]any{"id": w.other(rng, i).id}, nil)
	case "createPost":
		var out struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		body := fmt.Sprintf("soak post %d %s", rng.IntN(1e9), strings.Repeat("x", rng.IntN(200)))
		if err := w.gql(ctx, url, u.token, `mutation($b: String!) { createPost(input: {body: $b}) { post { id } } }`, map[string]any{"b": body}, &out); err != nil {
			return err
		}
		w.mu.Lock()
		w.posts = append(w.posts, out.CreatePost.Post.ID)
		if len(w.posts) > 1000 {
			w.posts = w.posts[len(w.posts)-500:]
		}
		w.mu.Unlock()
		return nil
	case "repost":
		w.mu.Lock()
		if len(w.posts) == 0 {
			w.mu.Unlock()
			return nil
		}
		target := w.posts[len(w.posts)-1-rng.IntN(min(len(w.posts), 50))]
		w.mu.Unlock()
		return w.gql(ctx, url, u.token, `mutation($id: ID!) { repost(postId: $id) { post { id } } }`, map[string]any{"id": target}, nil)
	case "follow":
		return w.gql(ctx, url, u.token, followMutation, map[string]any{"id": w.other(rng, i).id}, nil)
	case "unfollow":
		return w.gql(ctx, url, u.token, unfollowMutation, map[string]any{"id": w.other(rng, i).id}, nil)
	case "markFeedRead":
		return w.gql(ctx, url, u.token, `mutation { markFeedRead { unreadCount } }`, nil, nil)
	case "viewer":
		return w.gql(ctx, url, u.token, `{ viewer { username followers(first: 10) { totalCount } following(first: 10) { totalCount } } }`, nil, nil)
	}
	return fmt.Errorf("unknown operation %q", name)
}

func pickOperation(rng *rand.Rand) string {
	n := rng.IntN(100)
	for _, o := range operations {
		if n < o.weight {
			return o.name
		}
		n -= o.weight
	}
	return operations[0].name
}

// subscriber is one live unreadCount subscription over graphql-transport-ws.
type subscriber struct {
	ws       *gqlclient.Socket
	received atomic.Int64
	closing  atomic.Bool
	failed   chan error // the first failure: the socket closed or an error arrived
}

func subscribe(ctx context.Context, url, token string) (*subscriber, error) {
	ws, err := gqlclient.Subscribe(ctx, url, token, gqlclient.UnreadCountSubscription, 10*time.Second)
	if err != nil {
		return nil, err
	}
	s := &subscriber{ws: ws, failed: make(chan error, 1)}
	go s.read()
	return s, nil
}

func (s *subscriber) fail(err error) {
	if s.closing.Load() {
		return
	}
	select {
	case s.failed <- err:
	default:
	}
}

func (s *subscriber) read() {
	for {
		m, err := s.ws.Next()
		if err != nil {
			s.fail(fmt.Errorf("subscription socket closed: %w", err))
			return
		}
		switch m.Type {
		case "next":
			if err := m.Err(); err != nil {
				s.fail(err)
			}
			s.received.Add(1)
		case "error", "complete":
			s.fail(fmt.Errorf("subscription ended: %s %s", m.Type, m.Payload))
		}
	}
}

func (s *subscriber) close() {
	s.closing.Store(true)
	s.ws.Close()
}
