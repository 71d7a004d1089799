package feed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/config"
	"feedservice/feed/fanout"
	"feedservice/feed/internal/deps"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/internal/feedmodel"
	"feedservice/internal/testenv"
	"feedservice/models"
	"feedservice/store"
)

// refModel is the reference model of what every feed must be
// (internal/feedmodel, the one the API tests check the server against),
// over the engine's numeric ids.
type refModel struct{ m *feedmodel.Model }

func newRefModel() *refModel {
	return &refModel{feedmodel.New(feedmodel.Limits{MaxReposters: config.MaxReposters, MaxUnreadCount: config.DefaultMaxUnreadCount})}
}

// follow records a's follow of b, and reports whether the server must
// accept it (false: one blocks the other, FORBIDDEN).
func (r *refModel) follow(a, b int64) bool {
	return r.m.Follow(strconv.FormatInt(a, 10), strconv.FormatInt(b, 10))
}
func (r *refModel) unfollow(a, b int64) {
	r.m.Unfollow(strconv.FormatInt(a, 10), strconv.FormatInt(b, 10))
}

// post records author's original post id.
func (r *refModel) post(author, id int64) {
	r.m.AddPost(strconv.FormatInt(author, 10), strconv.FormatInt(id, 10), time.Time{})
}

// repost records user's repost of target, which the engine answered with
// id; it fails the test unless that is what the model expects: a new
// repost, or the user's live repost of the same original.
func (r *refModel) repost(t testing.TB, user, target, id int64) {
	t.Helper()
	if want := r.m.Repost(strconv.FormatInt(user, 10), strconv.FormatInt(id, 10), strconv.FormatInt(target, 10), time.Time{}); want != strconv.FormatInt(id, 10) {
		t.Fatalf("repost of %d by %d answered %d, the model says %s", target, user, id, want)
	}
}

// canRepost reports whether target and its original are live.
func (r *refModel) canRepost(target int64) bool { return r.m.CanRepost(strconv.FormatInt(target, 10)) }

// repostRefusal is the code the engine must refuse user's repost of the
// live target with: NOT_FOUND across a block, or to whom a protected
// author hides it; FORBIDDEN to a protected author's followers; "" when
// it must take it.
func (r *refModel) repostRefusal(user, target int64) string {
	return r.m.RepostRefusal(strconv.FormatInt(user, 10), strconv.FormatInt(target, 10))
}

// protection changes, on te and in the model, one protection in circle
// (turned on or off) or answers one waiting request (approved or
// rejected).
func (r *refModel) protection(t *testing.T, te *testEngine, rng *rand.Rand, circle []int64, step int) {
	t.Helper()
	ctx := context.Background()
	u := circle[rng.IntN(len(circle))]
	id := strconv.FormatInt(u, 10)
	waiting := r.m.Requesters(id)
	if len(waiting) == 0 || rng.IntN(3) == 0 {
		on := !r.m.IsProtected(id)
		te.protect(u, on)
		r.m.Protect(id, on)
		return
	}
	asker := waiting[rng.IntN(len(waiting))]
	if rng.IntN(2) == 0 {
		if _, err := te.ApproveFollowRequest(ctx, u, refID(asker)); err != nil {
			t.Fatalf("step %d: %d approves %s: %v", step, u, asker, err)
		}
		r.m.Approve(id, asker)
		return
	}
	if _, err := te.RejectFollowRequest(ctx, u, refID(asker)); err != nil {
		t.Fatalf("step %d: %d rejects %s: %v", step, u, asker, err)
	}
	r.m.Reject(id, asker)
}

// checkRequests compares the requests waiting for each of users, most
// recent first, with the model's.
func (r *refModel) checkRequests(t *testing.T, te *testEngine, users []int64, step int) {
	t.Helper()
	for _, u := range users {
		var want []int64
		for _, id := range r.m.Requesters(strconv.FormatInt(u, 10)) {
			want = append(want, refID(id))
		}
		if got := te.requesters(u); !slices.Equal(got, want) {
			t.Fatalf("step %d: requests waiting for %d: %v, the model %v", step, u, got, want)
		}
	}
}

// author is the author of a recorded post or repost.
func (r *refModel) author(id int64) int64 { return refID(r.m.Lookup(strconv.FormatInt(id, 10)).Author) }

func (r *refModel) delete(id int64) { r.m.Delete(strconv.FormatInt(id, 10)) }

// shownIn are the users a's feed shows: the authors of its entries and
// their reposters, once each.
func (r *refModel) shownIn(a int64) []int64 {
	var out []int64
	for _, e := range r.feed(a) {
		out = append(out, r.author(e.Post))
		out = append(out, e.Reposters...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hiding are the four relations that hide posts, as the model and the
// engine each apply them.
var hiding = []struct {
	name   string
	model  func(m *feedmodel.Model, a, b string) bool
	engine func(e *Engine, ctx context.Context, a, b int64) error
}{
	{"block", (*feedmodel.Model).Block, func(e *Engine, ctx context.Context, a, b int64) error {
		_, err := e.Block(ctx, a, b)
		return err
	}},
	{"unblock", (*feedmodel.Model).Unblock, func(e *Engine, ctx context.Context, a, b int64) error {
		_, err := e.Unblock(ctx, a, b)
		return err
	}},
	{"mute", (*feedmodel.Model).Mute, func(e *Engine, ctx context.Context, a, b int64) error {
		_, err := e.Mute(ctx, a, b)
		return err
	}},
	{"unmute", (*feedmodel.Model).Unmute, func(e *Engine, ctx context.Context, a, b int64) error {
		_, err := e.Unmute(ctx, a, b)
		return err
	}},
}

// hide applies the kind-th of hiding to a and b on e and in the model.
func (r *refModel) hide(t testing.TB, e *Engine, kind int, a, b int64) {
	t.Helper()
	h := hiding[kind]
	h.model(r.m, strconv.FormatInt(a, 10), strconv.FormatInt(b, 10))
	if err := h.engine(e, context.Background(), a, b); err != nil {
		t.Fatalf("%s %d -> %d: %v", h.name, a, b, err)
	}
}

// feed is user's whole feed: each live original that a followee wrote or
// reposted (live), at its earliest such arrival, newest first, with the
// reposting followees most recent first.
func (r *refModel) feed(user int64) []feedItem {
	out := []feedItem{}
	for _, e := range r.m.Feed(strconv.FormatInt(user, 10)) {
		reposters := []int64{}
		for _, id := range e.Reposters {
			reposters = append(reposters, refID(id))
		}
		out = append(out, feedItem{Post: refID(e.PostID), Reposters: reposters, Key: refID(e.Arrival)})
	}
	return out
}

func refID(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic("model: not a numeric id: " + s)
	}
	return n
}

// modelSteps is how many random operations each mode runs: bounded in the
// test command, long under `make soak` (MODEL_STEPS).
func modelSteps() int { return envCount("MODEL_STEPS", 400) }

// modelUsers is how many users the random operations act among.
func modelUsers() int { return envCount("MODEL_USERS", 200) }

// modelSample is how many users' feeds a checkpoint compares; the final
// check compares everyone's.
const modelSample = 12

func envCount(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func modelSeed(t *testing.T) uint64 {
	if s, err := strconv.ParseUint(os.Getenv("MODEL_SEED"), 10, 64); err == nil {
		return s
	}
	return uint64(time.Now().UnixNano())
}

// TestEngineMatchesModel runs random sequences of sign-ups, follows,
// unfollows, removed followers, posts, reposts, deletes, reads, blocks,
// unblocks, mutes and unmutes, mixed with inbox expiry, a flush of all
// Redis keys, a worker dying mid-task and engine restarts, in every mode,
// on two instances (with their cache tiers on) taking turns; after the
// workers settle, every user's whole feed, paged both ways on either
// instance, equals the reference model's. Its runs, and it, run beside the
// package's other tests: the timings they shorten are their engines' own
// (see runModel).
func TestEngineMatchesModel(t *testing.T) {
	t.Parallel()
	runModelModes(t, newTestStore, modelSteps(), modelUsers())
	// Push mode with the fan-out trimming an inbox at every other delivery
	// (deps.Deps.InboxTrimEvery), where it trims one in
	// timeline.InboxTrimEvery (64) in production: the trims' plain
	// ZREMRANGEBYRANK and the floor the next read or script raises after
	// them, exercised often.
	t.Run("push-trims", func(t *testing.T) {
		t.Parallel()
		seed := modelSeed(t)
		t.Logf("seed %d (replay with MODEL_SEED=%d)", seed, seed)
		trimOften := func(d *deps.Deps) { d.InboxTrimEvery = 2 }
		runModel(t, newTestStore(t), config.ModePush, rand.New(rand.NewPCG(seed, seed>>1)), hidingRand(seed), toggleRand(seed), listRand(seed), protRand(seed), modelSteps(), modelUsers(), trimOften)
	})
	// The runs that once failed, replayed as they were on every run.
	for _, r := range modelRegressions {
		t.Run(fmt.Sprintf("regression-%s-%d", r.mode, r.seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("%s (issue %d)", r.what, r.issue)
			runModel(t, newTestStore(t), r.mode, rand.New(rand.NewPCG(r.seed, r.seed>>1)), nil, nil, nil, nil, r.steps, r.users, nil)
		})
	}
}

// runModelModes runs the model test for steps and userCount in each
// feed mode, a subtest each, on a store of newStore's, with the seed of
// MODEL_SEED (or a drawn one) that replays it.
//
// The runs wait on MariaDB and Redis far more than they compute: they run
// side by side, each on a database and a Redis of its own.
func runModelModes(t *testing.T, newStore func(testing.TB) *store.Store, steps, userCount int) {
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			seed := modelSeed(t)
			t.Logf("seed %d (replay with MODEL_SEED=%d)", seed, seed)
			defer func() {
				if t.Failed() {
					t.Logf("failed with MODEL_SEED=%d", seed)
				}
			}()
			runModel(t, newStore(t), mode, rand.New(rand.NewPCG(seed, seed>>1)), hidingRand(seed), toggleRand(seed), listRand(seed), protRand(seed), steps, userCount, nil)
		})
	}
}

// modelRegressions are seeds of TestEngineMatchesModel that found a bug,
// each with the steps and users its failure needed.
var modelRegressions = []struct {
	mode         config.Mode
	seed         uint64
	steps, users int
	issue        int
	what         string
}{
	{config.ModeHybrid, 1795409467451867427, 800, 200, 16,
		"step 795 pages a feed backward by 3 below a followed celebrity's window; the probe for older entries hung"},
}

// hidingRand draws the blocks and mutes of a run with seed: a stream of
// its own, so that the operations drawn from the main one (and with them
// the regressions recorded before blocks and mutes existed) stay as they
// were.
func hidingRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, seed>>3))
}

// toggleRand draws, for a run with seed, which blocks and unblocks are
// toggled again at once: a stream of its own, so that the hiding stream
// (and the runs recorded with it) stays as it was.
func toggleRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, seed>>5))
}

// listRand draws, for a run with seed, the list changes and the page
// sizes of the lists' checks: a stream of its own, so that the others
// (and the runs recorded with them) stay as they were.
func listRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x2545f4914f6cdd1d, seed>>7))
}

// listPercent is the share of steps that begin with a list change (drawn
// from the run's list stream).
const listPercent = 6

// protRand draws, for a run with seed, the protections turned on and off
// and the follow requests approved and rejected: a stream of its own, so
// that the others (and the runs recorded with them) stay as they were.
func protRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x1d8e4e27c47d124f, seed>>11))
}

// protPercent is the share of steps that begin with a protection change or
// a request's answer (drawn from the run's protection stream).
const protPercent = 5

// modelClaimAfter is the fan-out's ClaimAfter in the model runs: a
// message a killed worker held is taken over soon.
const modelClaimAfter = 200 * time.Millisecond

// hidingPercent is the share of steps that begin with a block, unblock,
// mute or unmute (drawn from the run's hiding stream).
const hidingPercent = 8

// runModel runs steps random operations from rng, and the blocks and mutes
// from hides (none when nil: a regression recorded before they existed);
// toggles (when not nil) toggles some blocks again at once, as an actor
// who toggles a block on someone does, so that the other user's reset is
// held back (BlockResetInterval) and their state patched or deferred;
// listRng (when not nil) makes lists, adds and removes their members, and
// each check then reads every list's feed against the model's; protRng
// (when not nil) protects users and unprotects them, and approves and
// rejects their requests, and each check then compares the circle's
// requests with the model's. Both instances' fan-out claims a dead
// worker's messages after modelClaimAfter; tune (when not nil) changes
// their other timings (deps.Deps) too.
func runModel(t *testing.T, st *store.Store, mode config.Mode, rng, hides, toggles, listRng, protRng *rand.Rand, steps, userCount int, tune func(*deps.Deps)) {
	ctx := context.Background()

	// A Redis of its own, so that the test can FLUSHALL it. On a cluster
	// (shared with the other tests), its own prefix there instead, and losing
	// everything is losing every key under it, on every master.
	var rdb redis.UniversalClient
	var prefix string
	flush := func() error { return rdb.FlushAll(ctx).Err() }
	if testenv.RedisCluster() {
		rdb, prefix = testenv.Redis(t)
		flush = func() error {
			_, err := testenv.DeletePrefix(ctx, rdb, prefix)
			return err
		}
	} else {
		server := testenv.StartRedis(t)
		rdb = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{server.Addr()}})
		t.Cleanup(func() { rdb.Close() })
		testenv.CheckSlots(t, rdb)
		prefix = "model:"
	}
	// A rebuilt inbox holds 5 entries, and fills up to 8 as posts come.
	setup := func(c *config.Config) {
		c.Mode, c.CelebrityFollowers, c.InboxCap, c.RebuildDepth, c.FanoutBatchSize = mode, 6, 8, 5, 3
	}
	timings := func(d *deps.Deps) {
		d.FanoutClaimAfter = modelClaimAfter
		if tune != nil {
			tune(d)
		}
	}
	te := startTunedTestEngine(t, st, rdb, prefix, timings, setup)
	// A second instance on the same MySQL and Redis, as behind a load
	// balancer: the steps alternate between the two (by step, not by rng,
	// so that the recorded seeds replay as they were), so each reads what
	// the other wrote, through its own local tier.
	other := startTunedTestEngine(t, st, rdb, prefix, timings, setup)
	on := func(step int) *testEngine {
		if step%2 == 1 {
			return other
		}
		return te
	}
	// settle waits for the workers, and for both instances to have applied
	// the invalidation messages sent until then.
	settle := func() {
		te.settle()
		// The resets that unblocks deferred (BlockResetInterval: the
		// other side of a block is reset once per interval at most) are
		// made, as after the interval: a check compares exact feeds. The
		// blocks in between patched the followee sets instead, and reads
		// between steps ran on them.
		if _, err := te.ResetDueBlocks(ctx, time.Now().Add(2*config.DefaultBlockResetInterval)); err != nil {
			t.Fatal(err)
		}
		for _, e := range []*testEngine{te, other} {
			if err := e.syncInvalidations(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	model := newRefModel()
	var users, posts []int64
	for i := range userCount {
		users = append(users, te.user(fmt.Sprintf("m%03d", i)))
	}
	// Most activity comes from a circle of users, so that feeds fill up;
	// everyone else follows and reads now and then.
	circle := users[:min(len(users), 30)]
	pick := func(list []int64) int64 { return list[rng.IntN(len(list))] }
	actor := func() int64 {
		if rng.IntN(4) == 0 {
			return pick(users)
		}
		return pick(circle)
	}
	star := users[0]     // followed by many: crosses the celebrity threshold
	var hidSince []int64 // the users of the blocks and mutes since the last check
	lists := &modelLists{model: model}
	for step := range steps {
		if listRng != nil && listRng.IntN(100) < listPercent {
			lists.change(t, on(step), listRng, circle, step)
		}
		if protRng != nil && protRng.IntN(100) < protPercent {
			model.protection(t, on(step), protRng, circle, step)
		}
		if hides != nil && hides.IntN(100) < hidingPercent {
			// Mutes twice as often as blocks, each undone as often as made;
			// half of them of someone the feed shows: the author of one of
			// its entries, or a reposter.
			a, b := circle[hides.IntN(len(circle))], circle[hides.IntN(len(circle))]
			if shown := model.shownIn(a); len(shown) > 0 && hides.IntN(2) == 0 {
				b = shown[hides.IntN(len(shown))]
			}
			if a != b {
				kind := []int{0, 1, 2, 2, 3, 3}[hides.IntN(6)]
				model.hide(t, on(step).Engine, kind, a, b)
				hidSince = append(hidSince, a, b)
				if toggles != nil && kind < 2 && toggles.IntN(2) == 0 {
					for i := range 1 + toggles.IntN(3) {
						model.hide(t, on(step+i+1).Engine, (kind+1+i)%2, a, b)
					}
					// The other user reads between toggles: a warm inbox
					// and followee set for the next one to patch.
					three := 3
					if _, err := on(step).Feed(ctx, b, paging.PageArgs{First: &three}); err != nil {
						t.Fatalf("step %d: read after toggles: %v", step, err)
					}
				}
			}
		}
		u := actor()
		switch op := rng.IntN(100); {
		case op < 22:
			v := pick(circle)
			if rng.IntN(3) == 0 {
				v = star
			}
			if u != v {
				if model.follow(u, v) {
					on(step).follow(u, v)
				} else if _, err := on(step).Follow(ctx, u, v); apperr.CodeOf(err) != apperr.CodeForbidden {
					t.Fatalf("step %d: follow %d -> %d across a block: %v, want FORBIDDEN", step, u, v, err)
				}
			}
		case op < 30:
			v := pick(circle)
			on(step).unfollow(u, v)
			model.unfollow(u, v)
		case op < 34:
			v := pick(circle)
			if _, err := on(step).RemoveFollower(ctx, u, v); err != nil {
				t.Fatal(err)
			}
			model.m.RemoveFollower(strconv.FormatInt(u, 10), strconv.FormatInt(v, 10))
		case op < 56:
			id := on(step).post(u, "step "+strconv.Itoa(step))
			posts = append(posts, id)
			model.post(u, id)
		case op < 70 && len(posts) > 0:
			target := pick(posts)
			if !model.canRepost(target) {
				continue
			}
			if code := model.repostRefusal(u, target); code != "" {
				// Across a block the post is as absent to u, and so is a
				// protected author's to whom does not follow them; their
				// followers may not repost it.
				if _, err := on(step).Repost(ctx, u, target); string(apperr.CodeOf(err)) != code {
					t.Fatalf("step %d: repost of %d by %d: %v, want %s", step, target, u, err, code)
				}
				continue
			}
			id := on(step).repost(u, target)
			if !slices.Contains(posts, id) {
				posts = append(posts, id)
			}
			model.repost(t, u, target, id)
		case op < 78 && len(posts) > 0:
			p := pick(posts)
			on(step).deletePost(model.author(p), p)
			model.delete(p)
		case op < 88:
			// A read in the middle of everything: it must not fail, and it
			// makes the reader active (an inbox exists from now on). In
			// hybrid mode it folds the celebrities it merged (the star
			// among them once past the threshold) into the inbox in the
			// background, while the next steps follow, unfollow, block,
			// mute, post and delete: folds meet every change mid-way.
			size := 1 + rng.IntN(6)
			if _, err := on(step).Feed(ctx, u, paging.PageArgs{First: &size}); err != nil {
				t.Fatalf("step %d: read: %v", step, err)
			}
		case op < 91:
			// The inbox expires, with the followee set that shares its TTL;
			// or memory pressure evicts one of them alone. (By step, not
			// by rng, so that the recorded seeds replay as they were.)
			switch step % 3 {
			case 0:
				rdb.Del(ctx, te.keys.Inbox(u), te.keys.InboxSources(u), te.keys.Following(u))
			case 1:
				rdb.Del(ctx, te.keys.Inbox(u), te.keys.InboxSources(u))
			default:
				rdb.Del(ctx, te.keys.Following(u))
			}
		case op < 93:
			if err := flush(); err != nil { // Redis loses everything
				t.Fatal(err)
			}
		case op < 96:
			stealMessage(t, te) // a worker takes a message and dies
		case op < 98:
			te.stop() // the server restarts
			te = startTunedTestEngine(t, st, rdb, prefix, timings, setup)
		default:
			settle()
			sample := make([]int64, modelSample)
			for i := range sample {
				sample[i] = pick(users)
			}
			// Everyone a block or mute touched since the last check too:
			// their feeds are the ones it changed.
			sample, hidSince = append(sample, hidSince...), nil
			checkAgainstModel(t, on(step), model, sample, rng, step)
			if listRng != nil {
				lists.check(t, on(step), listRng, step)
			}
			if protRng != nil {
				model.checkRequests(t, on(step), circle, step)
			}
		}
	}
	settle()
	checkAgainstModel(t, te, model, users, rng, steps)
	if listRng != nil {
		lists.check(t, te, listRng, steps)
	}
	if protRng != nil {
		model.checkRequests(t, te, circle, steps)
	}
}

// modelLists are the lists a model run made, with their owners.
type modelLists struct {
	model *refModel
	made  []*models.List
}

// change makes a list of someone in circle, or adds to or removes from a
// list made before a member the model names: a followee of the owner's
// (which the engine must take) or another user (FORBIDDEN) when adding.
func (ls *modelLists) change(t *testing.T, te *testEngine, rng *rand.Rand, circle []int64, step int) {
	t.Helper()
	ctx := context.Background()
	if len(ls.made) == 0 || rng.IntN(4) == 0 {
		owner := circle[rng.IntN(len(circle))]
		l := te.createList(owner, "list "+strconv.Itoa(step))
		ls.model.m.CreateList(strconv.FormatInt(owner, 10), strconv.FormatInt(l.ID, 10))
		ls.made = append(ls.made, l)
		return
	}
	l := ls.made[rng.IntN(len(ls.made))]
	owner, id := strconv.FormatInt(l.OwnerID, 10), strconv.FormatInt(l.ID, 10)
	if members := ls.model.m.ListMembers(id); len(members) > 0 && rng.IntN(3) == 0 {
		member := members[rng.IntN(len(members))]
		if _, err := te.RemoveFromList(ctx, l.OwnerID, l.ID, refID(member)); err != nil {
			t.Fatalf("step %d: remove %s from list %d: %v", step, member, l.ID, err)
		}
		ls.model.m.RemoveFromList(id, member)
		return
	}
	member := circle[rng.IntN(len(circle))]
	if member == l.OwnerID {
		return
	}
	_, err := te.AddToList(ctx, l.OwnerID, l.ID, member)
	if ls.model.m.AddToList(owner, id, strconv.FormatInt(member, 10)) {
		if err != nil {
			t.Fatalf("step %d: add %d to list %d of %d: %v", step, member, l.ID, l.OwnerID, err)
		}
	} else if apperr.CodeOf(err) != apperr.CodeForbidden {
		t.Fatalf("step %d: add %d, not followed, to list %d of %d: %v, want FORBIDDEN", step, member, l.ID, l.OwnerID, err)
	}
}

// check reads every list's whole feed both ways, with random page sizes,
// and its member count, against the model's.
func (ls *modelLists) check(t *testing.T, te *testEngine, rng *rand.Rand, step int) {
	t.Helper()
	for _, l := range ls.made {
		id := strconv.FormatInt(l.ID, 10)
		var want []feedItem
		for _, e := range ls.model.m.ListFeed(id) {
			reposters := []int64{}
			for _, u := range e.Reposters {
				reposters = append(reposters, refID(u))
			}
			want = append(want, feedItem{Post: refID(e.PostID), Reposters: reposters, Key: refID(e.Arrival)})
		}
		if got := te.list(l.OwnerID, l).MemberCount; got != len(ls.model.m.ListMembers(id)) {
			t.Fatalf("step %d: list %d of %d has %d members, the model %v", step, l.ID, l.OwnerID, got, ls.model.m.ListMembers(id))
		}
		for _, backward := range []bool{false, true} {
			got := te.pageListFeed(l.OwnerID, l, 1+rng.IntN(7), backward, len(want)+5)
			if !slices.EqualFunc(got, want, feedItemEqual) {
				t.Fatalf("step %d: feed of list %d of %d (backward %v):\n got %v\nwant %v", step, l.ID, l.OwnerID, backward, got, want)
			}
		}
	}
}

// checkAgainstModel reads every user's whole feed, forward and backward,
// with random page sizes, and compares it with the model's.
func checkAgainstModel(t *testing.T, te *testEngine, model *refModel, users []int64, rng *rand.Rand, step int) {
	t.Helper()
	for _, u := range users {
		want := model.feed(u)
		forward := te.pageFeed(u, 1+rng.IntN(7), false, len(want), nil)
		if !slices.EqualFunc(forward, want, feedItemEqual) {
			t.Fatalf("step %d: feed of %d (forward):\n got %v\nwant %v", step, u, forward, want)
		}
		backward := te.pageFeed(u, 1+rng.IntN(7), true, len(want), nil)
		if !slices.EqualFunc(backward, want, feedItemEqual) {
			t.Fatalf("step %d: feed of %d (backward):\n got %v\nwant %v", step, u, backward, want)
		}
	}
}

// stealMessage reads one fan-out message as a consumer that then dies
// without acknowledging it; a live worker must claim and handle it.
func stealMessage(t *testing.T, te *testEngine) {
	ctx := context.Background()
	te.stream.EnsureGroup(ctx)
	_, err := te.redis.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: fanout.Group, Consumer: "dead-worker", Streams: []string{te.keys.Stream(), ">"}, Count: 1, Block: -1,
	}).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
}
