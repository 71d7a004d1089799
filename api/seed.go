package api

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"feedservice/feed"
)

// seedSize shapes the demo graph.
type seedSize struct {
	Users       int // ordinary users besides alice and the celebrity
	FollowsEach int // followees of each ordinary user
	PostsEach   int
	RepostsEach int
	CelebPosts  int
	Concurrency int
}

var defaultSeedSize = seedSize{Users: 300, FollowsEach: 25, PostsEach: 3, RepostsEach: 2, CelebPosts: 10, Concurrency: 4}

// SeedPassword is the password of every demo account.
const SeedPassword = "demo-password"

// seed loads a demo graph through the engine, printing its progress: alice
// (whom to sign in as), a celebrity everyone follows, and ordinary users who
// follow, post and repost. Accounts that exist already are reused.
func seed(ctx context.Context, e *feed.Engine, size seedSize, out io.Writer) error {
	names := []string{"alice", "celebrity"}
	for i := range size.Users {
		names = append(names, fmt.Sprintf("demo_%03d", i))
	}
	ids := make([]int64, len(names))
	fmt.Fprintf(out, "seed: %d users ...\n", len(names))
	if err := forEach(ctx, len(names), size.Concurrency, out, "users", func(i int) error {
		auth, err := e.SignUp(ctx, names[i], SeedPassword, nil)
		if feed.CodeOf(err) == feed.CodeBadUserInput && strings.Contains(err.Error(), "taken") {
			auth, err = e.LogIn(ctx, names[i], SeedPassword)
		}
		if err != nil {
			return fmt.Errorf("user %s: %w", names[i], err)
		}
		ids[i] = auth.User.ID
		return nil
	}); err != nil {
		return err
	}
	alice, celebrity := ids[0], ids[1]
	rng := rand.New(rand.NewPCG(1, 2))
	follows := make([][]int64, len(ids))
	for i := range ids {
		if i == 1 {
			continue
		}
		follows[i] = append(follows[i], celebrity)
		for range size.FollowsEach {
			if j := 2 + rng.IntN(len(ids)-2); j != i {
				follows[i] = append(follows[i], ids[j])
			}
		}
	}
	if err := forEach(ctx, len(ids), size.Concurrency, out, "follows", func(i int) error {
		for _, f := range follows[i] {
			if _, err := e.Follow(ctx, ids[i], f); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var postIDs []int64
	authors := append([]int64{celebrity}, ids[2:]...)
	for round := range max(size.PostsEach, size.CelebPosts) {
		for _, author := range authors {
			if (author == celebrity && round >= size.CelebPosts) || (author != celebrity && round >= size.PostsEach) {
				continue
			}
			p, err := e.CreatePost(ctx, author, demoBody(rng))
			if err != nil {
				return err
			}
			postIDs = append(postIDs, p.ID)
		}
		fmt.Fprintf(out, "seed: posts round %d done (%d posts)\n", round+1, len(postIDs))
	}
	for i, author := range ids[2:] {
		for range size.RepostsEach {
			if _, err := e.Repost(ctx, author, postIDs[rng.IntN(len(postIDs))]); err != nil {
				return err
			}
		}
		if (i+1)%100 == 0 {
			fmt.Fprintf(out, "seed: reposts %d/%d users\n", i+1, len(ids)-2)
		}
	}
	fmt.Fprintf(out, "seed: done; sign in as alice / %s (user id %d)\n", SeedPassword, alice)
	return nil
}

// forEach runs fn for 0..n-1 on workers, printing progress every tenth.
func forEach(ctx context.Context, n, workers int, out io.Writer, what string, fn func(i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	step := max(n/10, 1)
	var mu sync.Mutex // workers report progress one at a time
	done := 0
	for i := range n {
		g.Go(func() error {
			if err := fn(i); err != nil {
				return err
			}
			mu.Lock()
			if done++; done%step == 0 {
				fmt.Fprintf(out, "seed: %s %d/%d\n", what, done, n)
			}
			mu.Unlock()
			return ctx.Err()
		})
	}
	return g.Wait()
}

var demoWords = strings.Fields("coffee morning build ship deploy graph feed redis mysql latency cache follow river mountain bike lunch read book music weekend launch bug fix release team")

func demoBody(rng *rand.Rand) string {
	n := 4 + rng.IntN(12)
	words := make([]string, n)
	for i := range words {
		words[i] = demoWords[rng.IntN(len(demoWords))]
	}
	return strings.Join(words, " ")
}
