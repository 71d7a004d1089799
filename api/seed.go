package api

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"feedservice/feed"
	"feedservice/feed/ids"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// seedSize shapes the demo graph.
type seedSize struct {
	users       int // ordinary users besides alice and the celebrity
	followsEach int // followees of each ordinary user
	postsEach   int
	repostsEach int
	celebPosts  int
}

var defaultSeedSize = seedSize{users: 300, followsEach: 25, postsEach: 3, repostsEach: 2, celebPosts: 10}

// seedAliceFollowers is how many of the demo users follow alice: enough
// for the documented page jump to show her followers' page 3 of 25.
const seedAliceFollowers = 150

// SeedPassword is the password of every demo account.
const SeedPassword = "demo-password"

// seedIDNode is the id node number (see feed/ids) of the rows the seed
// writes in bulk: no server leases it while fewer than ids.MaxNodes
// instances run, so the seed's ids cannot meet a server's. (The benchmark's
// bulk load takes it too, in a database of its own.)
const seedIDNode = ids.MaxNodes - 1

// seed loads a demo graph, printing its progress: alice (whom to sign in
// as), a celebrity everyone follows, and ordinary users who follow, post
// and repost. Accounts and follows that exist already are reused; each
// seed adds its posts and reposts.
//
// Alice signs up through the engine, which hashes the shared password once
// (bcrypt, the configured cost); every other account takes her hash. The
// rest is written in bulk, a few statements per kind (store/bulk.go), with
// the counts and the outbox events that the same changes made one by one
// would write. With store.EventsPending the engine's dispatcher and fan-out
// workers derive the Redis state (inboxes, outboxes, cached copies,
// followee sets) from those events as from any other change, on any Redis,
// while other instances run; store.EventsApplied is for a Redis that holds
// nothing yet (see Service.Seed).
func seed(ctx context.Context, e *feed.Engine, st *store.Store, events store.BulkEvents, size seedSize, out io.Writer) error {
	gen, err := ids.NewIDGenerator(seedIDNode)
	if err != nil {
		return err
	}
	users, err := seedUsers(ctx, e, st, gen, size, out)
	if err != nil {
		return err
	}
	alice, celebrity := users[0], users[1]
	rng := rand.New(rand.NewPCG(1, 2))
	var follows []store.NewFollow
	for i := range users {
		if i == 1 {
			continue // the celebrity follows nobody
		}
		followees := demoFollowees(rng, users, i, size)
		for _, f := range followees {
			id := gen.Next()
			follows = append(follows, store.NewFollow{FollowerID: users[i], FolloweeID: f, ID: id, At: ids.IDTime(id)})
		}
	}
	made, err := st.CreateFollows(ctx, follows, events)
	if err != nil {
		return fmt.Errorf("follows: %w", err)
	}
	fmt.Fprintf(out, "seed: %d follows (%d new)\n", len(follows), made)

	var posts []*models.Post
	authors := append([]int64{celebrity}, users[2:]...)
	for round := range max(size.postsEach, size.celebPosts) {
		for _, author := range authors {
			if (author == celebrity && round >= size.celebPosts) || (author != celebrity && round >= size.postsEach) {
				continue
			}
			id := gen.Next()
			posts = append(posts, &models.Post{ID: id, AuthorID: author, Body: demoBody(rng), CreatedAt: ids.IDTime(id)})
		}
	}
	if err := st.CreatePosts(ctx, posts, events); err != nil {
		return fmt.Errorf("posts: %w", err)
	}
	fmt.Fprintf(out, "seed: %d posts\n", len(posts))

	// Reposting a post twice is one repost, as the repost mutation makes it.
	type repost struct{ author, original int64 }
	reposted := map[repost]bool{}
	var reposts []*models.Post
	for _, author := range users[2:] {
		for range size.repostsEach {
			original := posts[rng.IntN(len(posts))].ID
			if reposted[repost{author, original}] {
				continue
			}
			reposted[repost{author, original}] = true
			id := gen.Next()
			reposts = append(reposts, &models.Post{ID: id, AuthorID: author, RepostOfID: &original, CreatedAt: ids.IDTime(id)})
		}
	}
	if err := st.CreatePosts(ctx, reposts, events); err != nil {
		return fmt.Errorf("reposts: %w", err)
	}
	fmt.Fprintf(out, "seed: %d reposts\n", len(reposts))
	fmt.Fprintf(out, "seed: done; sign in as alice / %s (user id %s)\n", SeedPassword, models.NodeID(models.KindUser, alice))
	return nil
}

// demoFollowees draws whom the demo user users[i] follows: the celebrity,
// size.followsEach others at random, and alice for the first
// seedAliceFollowers ordinary users (drawn after the random ones, so the
// random graph is the one earlier seeds drew).
func demoFollowees(rng *rand.Rand, users []int64, i int, size seedSize) []int64 {
	followees := []int64{users[1]}
	for range size.followsEach {
		if j := 2 + rng.IntN(len(users)-2); j != i {
			followees = append(followees, users[j])
		}
	}
	if i >= 2 && i < 2+seedAliceFollowers && !slices.Contains(followees, users[0]) {
		followees = append(followees, users[0])
	}
	return followees
}

// seedUsers returns the ids of alice, the celebrity and the ordinary demo
// users, in that order, making the accounts that do not exist. An account
// that exists must have the demo password.
func seedUsers(ctx context.Context, e *feed.Engine, st *store.Store, gen *ids.IDGenerator, size seedSize, out io.Writer) ([]int64, error) {
	names := []string{"alice", "celebrity"}
	for i := range size.users {
		names = append(names, fmt.Sprintf("demo_%03d", i))
	}
	made := 1
	auth, err := e.SignUp(ctx, names[0], SeedPassword, nil)
	if apperr.CodeOf(err) == apperr.CodeBadUserInput && strings.Contains(err.Error(), "taken") {
		made = 0
		auth, err = e.LogIn(ctx, names[0], SeedPassword)
	}
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", names[0], err)
	}
	hash := auth.User.PasswordHash
	existing, err := st.UsersByUsernames(ctx, names[1:])
	if err != nil {
		return nil, err
	}
	byName := map[string]int64{names[0]: auth.User.ID}
	for _, u := range existing {
		// Accounts the seed made share alice's hash; others (made by an
		// older seed, or by someone) are checked one by one.
		if u.PasswordHash != hash {
			if _, err := e.LogIn(ctx, u.Username, SeedPassword); err != nil {
				return nil, fmt.Errorf("user %s exists without the demo password: %w", u.Username, err)
			}
		}
		byName[strings.ToLower(u.Username)] = u.ID
	}
	var fresh []*models.User
	for _, name := range names {
		if _, ok := byName[name]; ok {
			continue
		}
		id := gen.Next()
		at := ids.IDTime(id)
		fresh = append(fresh, &models.User{ID: id, Username: name, DisplayName: name, PasswordHash: hash, CreatedAt: at, LastActiveAt: at})
		byName[name] = id
	}
	if err := st.CreateUsers(ctx, fresh); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	fmt.Fprintf(out, "seed: %d users (%d new)\n", len(names), made+len(fresh))
	userIDs := make([]int64, len(names))
	for i, name := range names {
		userIDs[i] = byName[name]
	}
	return userIDs, nil
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
