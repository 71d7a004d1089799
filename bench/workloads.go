package main

// The workloads, run against one server process per feed mode.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/gqlclient"
	"feedservice/models"
)

const pageSize = 20

// pickActive chooses the active readers, and who plays each role.
func (e *env) pickActive() {
	g := e.g
	rng := rand.New(rand.NewPCG(g.P.Seed, 0xac7))
	n := max(1, int(e.o.active*float64(len(g.General))))
	perm := rng.Perm(len(g.General))
	for _, k := range perm[:n] {
		i := g.General[k]
		e.active = append(e.active, i)
		e.isActive[i] = true
	}
	slices.Sort(e.active)
}

// followersOf lists the indexes of user j's followers in the graph.
func (e *env) followersOf(j int) []int {
	var out []int
	for i := range e.g.Followees {
		if e.g.follows(i, j) {
			out = append(out, i)
		}
	}
	return out
}

// redDotPoster is who posts in the red-dot workload: the ordinary author,
// or the biggest celebrity when the author has fewer than n followers.
func (e *env) redDotPoster(n int) int {
	if int(e.g.FollowerN[e.g.Author]) >= n || len(e.g.Celebs) == 0 {
		return e.g.Author
	}
	return e.g.Celebs[len(e.g.Celebs)-1]
}

// redDotReaders are up to n followers of the red-dot poster, active ones first.
func (e *env) redDotReaders(n int) []int {
	var act, rest []int
	for _, i := range e.followersOf(e.redDotPoster(n)) {
		if e.isActive[i] {
			act = append(act, i)
		} else if i >= len(e.g.Celebs)+1 {
			rest = append(rest, i)
		}
	}
	all := append(act, rest...)
	return all[:min(n, len(all))]
}

// logInAll signs in, through the API, everyone the workloads act as.
func (e *env) logInAll(ctx context.Context, c *client) error {
	who := map[int]bool{}
	for _, i := range e.active {
		who[i] = true
	}
	if !e.o.targetsOnly() { // the targets' workloads act as active readers only
		who[e.g.Author] = true
		for _, n := range e.o.sockets {
			who[e.redDotPoster(n)] = true
			for _, i := range e.redDotReaders(n) {
				who[i] = true
			}
		}
		for _, i := range e.g.Celebs {
			who[i] = true
		}
		for _, list := range e.g.Probes {
			for _, i := range list {
				who[i] = true
			}
		}
	}
	users := make([]int, 0, len(who))
	for i := range who {
		users = append(users, i)
	}
	slices.Sort(users)
	logf("  logging in %d users through the API (logIn, bcrypt cost 4)", len(users))
	start := time.Now()
	var mu sync.Mutex
	var firstErr error
	parallel(len(users), 8, func(k int) {
		tok, err := c.logIn(ctx, e.g.Names[users[k]])
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("logIn %s: %w", e.g.Names[users[k]], err)
			}
			return
		}
		e.tokens[users[k]] = tok
	})
	logf("  logged in %d users in %.1fs", len(e.tokens), time.Since(start).Seconds())
	return firstErr
}

// runMode measures one feed mode: it starts the mode's server, signs the
// users in (once per run), warms the active readers' inboxes, runs the
// workloads -runs times and ends the mode (see endMode). mr holds what was
// measured even when err is set.
func (e *env) runMode(ctx context.Context, mode string) (mr *ModeResult, err error) {
	mr = &ModeResult{Mode: mode}
	prefix := e.o.prefixBase + mode + ":"
	deleteKeys(ctx, e.rdb, prefix+"*")
	logf("[%s] starting the server (-feed-mode=%s -key-prefix=%s)", mode, mode, prefix)
	s, err := startServer(ctx, e.o, mode, prefix, e.g)
	if err != nil {
		return mr, err
	}
	modeStart := time.Now()
	defer func() { err = e.endMode(ctx, s, prefix, mr, modeStart, err) }()
	c := newClient(s.url)
	if len(e.tokens) == 0 {
		if err := e.logInAll(ctx, c); err != nil {
			return mr, err
		}
	}
	w := &modeRun{env: e, mode: mode, prefix: prefix, c: c, mr: mr, s: s}
	logf("[%s] workload 8 warm the active readers' inboxes (8 clients), memory", mode)
	if err := w.warm(ctx); err != nil {
		return mr, fmt.Errorf("warm: %w", err)
	}
	return mr, w.repeat(ctx, w.workloadSteps())
}

// endMode stops the mode's server (recording its memory, CPU time and log
// problems in mr) and undoes what the mode wrote to Redis and MySQL, so
// that the next mode starts from the same data. It returns err, or the
// reset's error when err is nil.
func (e *env) endMode(ctx context.Context, s *serverProc, prefix string, mr *ModeResult, modeStart time.Time, err error) error {
	rss, hwm := s.memKB()
	mr.Memory.ServerRSSEndKB, mr.Memory.ServerHWMKB = rss, hwm
	mr.ServerCPUSeconds = s.cpuSeconds()
	s.stop()
	mr.ServerLogProblems = logProblems(s.logPath)
	if len(mr.ServerLogProblems) > 0 {
		logf("[%s] server log warnings/errors: %v (log: %s)", mr.Mode, mr.ServerLogProblems, s.logPath)
	}
	n := deleteKeys(context.WithoutCancel(ctx), e.rdb, prefix+"*")
	if err2 := e.resetSQL(context.WithoutCancel(ctx), mr.Mode); err2 != nil && err == nil {
		err = err2
	}
	mr.Seconds = time.Since(modeStart).Seconds()
	logf("[%s] done in %.1fs (deleted %d Redis keys, reset MySQL)", mr.Mode, mr.Seconds, n)
	return err
}

// workloadStep is one measured workload of a mode; its name starts with
// the workload's number.
type workloadStep struct {
	name string
	f    func(context.Context) error
}

// workloadSteps is the mode's workloads in the order they run: all of
// them, those of -workloads, or with -only targets the warm reads and the
// cache keys.
func (w *modeRun) workloadSteps() []workloadStep {
	// The cache tiers' memory and the server's RSS are measured right after
	// the warm reads, before the writes and the websockets change them.
	steps := []workloadStep{
		{"1 first page at " + joinInts(w.firstPageClients(), ", ") + " clients", w.firstPage},
		{"2 deep paging, pages 2-10", w.deepPaging},
		{"8 cache keys' memory and server RSS after the warm reads", w.cacheMemory},
		{"9 list page beside home page, 8 clients", w.listPage},
		{"3 read latency vs followee count", w.followees},
		{"4 ordinary author's post: fan-out", w.fanout},
		{"5 celebrity's post", w.celebrity},
		{"7 red dots over websockets", w.redDots},
		{"6 mixed 90/8/2", w.mixed},
	}
	if len(w.o.workloads) > 0 && !w.o.targetsOnly() {
		steps = slices.DeleteFunc(steps, func(st workloadStep) bool {
			number, _, _ := strings.Cut(st.name, " ")
			return !slices.Contains(w.o.workloads, number)
		})
	}
	if w.o.targetsOnly() {
		steps = steps[:4]
		if !w.deepPaged() { // pull's target figure is its first page at 32 clients
			steps = slices.Delete(steps, 1, 2)
		}
	}
	return steps
}

// repeat runs the steps -runs times, each run into a result of its own
// that starts from the warm-up's figures, and leaves the runs' medians in
// the mode's result (also when a run fails: the medians of those that
// finished). Before each repeat the probe readers' inboxes are dropped, so
// that their first read is cold again.
func (w *modeRun) repeat(ctx context.Context, steps []workloadStep) error {
	mr := w.mr
	base := *mr
	var runs []*ModeResult
	defer func() {
		if len(runs) > 0 {
			*mr = *medianResult(runs)
		}
	}()
	for run := 1; run <= w.o.runs; run++ {
		w.mr = &ModeResult{Mode: w.mode, Warm: base.Warm, WarmDeep: base.WarmDeep, Memory: base.Memory}
		if run > 1 {
			w.coolProbes(ctx)
		}
		for _, st := range steps {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			logf("[%s] run %d of %d: workload %s", w.mode, run, w.o.runs, st.name)
			if err := st.f(ctx); err != nil {
				return fmt.Errorf("run %d: %s: %w", run, st.name, err)
			}
		}
		runs = append(runs, w.mr)
	}
	return nil
}

// coolProbes drops the inboxes of the followee-count probes, so that each
// run's cold first read is cold again.
func (w *modeRun) coolProbes(ctx context.Context) {
	var ks []string
	for _, list := range w.g.Probes {
		for _, i := range list {
			tag := "{u" + strconv.FormatInt(w.g.UserIDs[i], 10) + "}"
			ks = append(ks, w.prefix+"feed:"+tag, w.prefix+"feedsrc:"+tag)
		}
	}
	for _, k := range ks {
		w.rdb.Unlink(ctx, k)
	}
}

type modeRun struct {
	*env
	mode   string
	prefix string
	c      *client
	mr     *ModeResult
	s      *serverProc
}

func (w *modeRun) inboxKey(i int) string {
	return w.prefix + "feed:{u" + strconv.FormatInt(w.g.UserIDs[i], 10) + "}"
}

func (w *modeRun) randomActive() int { return w.active[rand.IntN(len(w.active))] }

// pageChecker counts bad pages; the first few reasons are kept.
type pageChecker struct {
	mu   sync.Mutex
	bad  int
	seen int
	why  []string
}

func (p *pageChecker) note(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen++
	if err != nil {
		p.bad++
		if len(p.why) < 3 {
			p.why = append(p.why, err.Error())
		}
	}
	return err
}

func (w *modeRun) checkPages(name string, p *pageChecker) {
	w.check(w.mode, name, p.bad == 0 && p.seen > 0, "%d of %d pages bad: %s", p.bad, p.seen, strings.Join(p.why, "; "))
}

// warm reads each active reader's first page once (8 clients): in push and
// hybrid modes this builds their inboxes. Redis memory is measured around it.
// Where the deep-paging workload runs, it then walks each active reader's
// pages 2-10 once (warmDeep), so that the deep pages measured are warm too:
// the graph is loaded into MySQL in bulk, and a post no one has read since
// has no Redis copy yet.
func (w *modeRun) warm(ctx context.Context) error {
	before := usedMemory(ctx, w.rdb)
	pc := &pageChecker{}
	r := &recorder{}
	start := time.Now()
	parallel(len(w.active), 8, func(k int) {
		t := time.Now()
		p, err := w.c.feed(ctx, w.tokens[w.active[k]], pageSize, nil)
		if err == nil {
			err = pc.note(p.check(0))
		}
		r.add(time.Since(t), err)
	})
	w.mr.Warm = r.stat("first read of each active reader", time.Since(start))
	w.checkPages("warm: first pages non-empty and sorted", pc)
	w.check(w.mode, "warm: no errors", w.mr.Warm.Errors == 0, "%d errors: %v", w.mr.Warm.Errors, r.errMsg)
	logf("  %d readers in %.1fs: %s", len(w.active), w.mr.Warm.Seconds, fmtStat(w.mr.Warm))
	if w.mode != "pull" {
		d, missing := w.awaitWhole(ctx, w.active)
		w.mr.WarmInboxes = d.Seconds()
		w.check(w.mode, "warm: every active reader's inbox rebuilt", missing == 0, "%d inboxes not whole %.0fs after the reads", missing, d.Seconds())
		logf("  every inbox whole %.1fs after the reads", d.Seconds())
	}
	w.settle(ctx)
	after := usedMemory(ctx, w.rdb)
	w.memory(ctx, before, after)
	rss, _ := w.s.memKB()
	w.mr.Memory.ServerRSSWarmKB = rss
	if w.deepPaged() {
		w.warmDeep(ctx)
	}
	return nil
}

// deepPaged says whether the deep-paging workload runs in this mode: in
// every mode, but with -only targets not in pull, which has no deep target,
// and with -workloads only when it names it (2).
func (w *modeRun) deepPaged() bool {
	if len(w.o.workloads) > 0 && !w.o.targetsOnly() {
		return slices.Contains(w.o.workloads, "2")
	}
	return !w.o.targetsOnly() || w.mode != "pull"
}

// warmDeep walks each active reader's feed from the first page to page 10
// once (8 clients), after warm; pages 2-10 are recorded as warmDeep.
func (w *modeRun) warmDeep(ctx context.Context) {
	pc := &pageChecker{}
	r := &recorder{}
	start := time.Now()
	parallel(len(w.active), 8, func(k int) { w.walkDeep(ctx, w.tokens[w.active[k]], pc, r) })
	w.mr.WarmDeep = r.stat("pages 2-10 of each active reader", time.Since(start))
	w.checkPages("warm: pages 2-10 non-empty, continue the previous page in order", pc)
	w.check(w.mode, "warm: pages 2-10, no errors", w.mr.WarmDeep.Errors == 0, "%d errors: %v", w.mr.WarmDeep.Errors, r.errMsg)
	logf("  pages 2-10 of %d readers in %.1fs: %s", len(w.active), w.mr.WarmDeep.Seconds, fmtStat(w.mr.WarmDeep))
}

// walkDeep reads tok's first page, then pages 2-10 with after while more
// follow, noting each of those pages' latency or error in rec and its order
// in pc. The first page only gives the cursor: its error is noted in rec,
// its latency is not. A walk ends at its first error.
func (w *modeRun) walkDeep(ctx context.Context, tok string, pc *pageChecker, rec *recorder) {
	p, err := w.c.feed(ctx, tok, pageSize, nil)
	if err != nil {
		rec.add(0, err)
		return
	}
	for page := 2; page <= 10 && p.Feed.PageInfo.HasNextPage && ctx.Err() == nil; page++ {
		keys, _ := p.keys()
		t := time.Now()
		p, err = w.c.feed(ctx, tok, pageSize, p.Feed.PageInfo.EndCursor)
		if err == nil {
			err = pc.note(p.check(keys[len(keys)-1]))
		}
		rec.add(time.Since(t), err)
		if err != nil {
			return
		}
	}
}

// firstPageClients are the client counts of the first-page workload: 1, 8
// and 32, or with -only targets those the targets compare (32 in pull, 8
// and 32 in push and hybrid).
func (w *modeRun) firstPageClients() []int {
	if !w.o.targetsOnly() {
		return []int{1, 8, 32}
	}
	switch w.mode {
	case "pull":
		return []int{32}
	}
	return []int{8, 32}
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}

// firstPage: the first page of 20 of a random active reader, at 1, 8 and 32
// concurrent clients.
func (w *modeRun) firstPage(ctx context.Context) error {
	for _, conc := range w.firstPageClients() {
		pc := &pageChecker{}
		r, el := closedLoop(ctx, conc, w.o.dur, func(ctx context.Context, _ int) error {
			p, err := w.c.feed(ctx, w.tokens[w.randomActive()], pageSize, nil)
			if err != nil {
				return err
			}
			return pc.note(p.check(0))
		})
		st := r.stat(fmt.Sprintf("c=%d", conc), el)
		st.Label = strconv.Itoa(conc)
		w.mr.FirstPage = append(w.mr.FirstPage, st)
		w.checkPages(fmt.Sprintf("first page c=%d: non-empty, sorted", conc), pc)
		w.check(w.mode, fmt.Sprintf("first page c=%d: no errors", conc), st.Errors == 0, "%d errors: %v", st.Errors, r.errMsg)
		logf("  %2d clients: %s", conc, fmtStat(st))
	}
	return nil
}

// deepPaging: 8 clients each walk a random reader's feed to page 10
// (walkDeep); pages 2-10 are measured, and an error on the first page
// counts too. warmDeep has read each of those pages once.
func (w *modeRun) deepPaging(ctx context.Context) error {
	pages := &recorder{}
	pc := &pageChecker{}
	_, el := closedLoop(ctx, 8, w.o.dur, func(ctx context.Context, _ int) error {
		w.walkDeep(ctx, w.tokens[w.randomActive()], pc, pages)
		return nil
	})
	w.mr.DeepPage = pages.stat("pages 2-10", el)
	w.checkPages("deep pages: non-empty, continue the previous page in order", pc)
	w.check(w.mode, "deep pages: no errors", w.mr.DeepPage.Errors == 0, "%d errors: %v", w.mr.DeepPage.Errors, pages.errMsg)
	logf("  %s", fmtStat(w.mr.DeepPage))
	return nil
}

// followees: for each followee-count bucket, the probe readers' cold first
// read, then warm reads on one client.
func (w *modeRun) followees(ctx context.Context) error {
	for _, b := range w.g.P.ProbeBuckets {
		readers := w.g.Probes[b]
		pc := &pageChecker{}
		cold := &recorder{}
		start := time.Now()
		for _, i := range readers {
			t := time.Now()
			p, err := w.c.feed(ctx, w.tokens[i], pageSize, nil)
			if err == nil {
				err = pc.note(p.check(0))
			}
			cold.add(time.Since(t), err)
		}
		coldSt := cold.stat("cold", time.Since(start))
		if w.mode != "pull" {
			// The warm reads measure the inboxes, not their rebuilds.
			d, missing := w.awaitWhole(ctx, readers)
			w.check(w.mode, fmt.Sprintf("followees=%d: inboxes rebuilt", b), missing == 0, "%d inboxes not whole %.0fs after the cold reads", missing, d.Seconds())
		}
		warm := &recorder{}
		start = time.Now()
		for k := range w.o.probeReads {
			t := time.Now()
			p, err := w.c.feed(ctx, w.tokens[readers[k%len(readers)]], pageSize, nil)
			if err == nil {
				err = pc.note(p.check(0))
			}
			warm.add(time.Since(t), err)
		}
		warmSt := warm.stat("warm", time.Since(start))
		w.mr.Followees = append(w.mr.Followees, FolloweePoint{Label: strconv.Itoa(b), Followees: b, Cold: coldSt, Warm: warmSt})
		w.checkPages(fmt.Sprintf("followees=%d: pages non-empty, sorted", b), pc)
		w.check(w.mode, fmt.Sprintf("followees=%d: no errors", b), coldSt.Errors+warmSt.Errors == 0, "%d errors: %v %v", coldSt.Errors+warmSt.Errors, cold.errMsg, warm.errMsg)
		logf("  %5d followees: cold p50 %.1f ms p99 %.1f ms; warm %s", b, coldSt.P50, coldSt.P99, fmtStat(warmSt))
	}
	return nil
}

// fanout: the ordinary author posts; the time from the mutation's response
// until each active follower's inbox holds the post (ZSCORE polled every
// 2 ms on the inboxes that existed before the post).
func (w *modeRun) fanout(ctx context.Context) error {
	a := w.g.Author
	followers := w.followersOf(a)
	f := &w.mr.Fanout
	f.Followers = len(followers)
	if w.mode == "pull" {
		f.Skipped = "pull mode writes no inboxes"
		logf("  skipped: %s", f.Skipped)
		return nil
	}
	active, err := w.withInbox(ctx, followers)
	if err != nil {
		return err
	}
	f.ActiveFollowers = len(active)
	if len(active) == 0 {
		w.check(w.mode, "fan-out: the author has active followers", false, "none of %d followers has an inbox", len(followers))
		return nil
	}
	mut, last, arrivals := &recorder{}, []time.Duration{}, []time.Duration{}
	var rates, e2e []float64
	missing := 0
	for k := range w.o.fanoutPosts {
		w.settle(ctx)
		t0 := time.Now()
		id, err := w.c.createPost(ctx, w.tokens[a], fmt.Sprintf("ordinary post %d in %s mode", k, w.mode))
		t1 := time.Now()
		mut.add(t1.Sub(t0), err)
		if err != nil {
			continue
		}
		arrived, firstAt, lastAt, pending := w.awaitInboxes(ctx, active, id, t1)
		arrivals = append(arrivals, arrived...)
		missing += pending
		if pending == 0 {
			d := lastAt.Sub(t1)
			last = append(last, d)
			e2e = append(e2e, float64(len(active))/max(d.Seconds(), 0.001))
			// During the fan-out: from the first inbox to the last (the
			// polling's 2 ms granularity bounds small fan-outs).
			rates = append(rates, float64(len(active))/max(lastAt.Sub(firstAt).Seconds(), 0.002))
		}
	}
	f.Posts = w.o.fanoutPosts
	f.Mutation = mut.stat("createPost", 0)
	f.LastInbox = latStat(last)
	f.Arrival = latStat(arrivals)
	f.Missing = missing
	for k := range rates {
		f.EntriesPerSec += rates[k] / float64(len(rates))
		f.EndToEndEntriesPerSec += e2e[k] / float64(len(rates))
	}
	w.check(w.mode, "fan-out: every active follower's inbox got the post", missing == 0 && mut.errs == 0,
		"%d inboxes missed it within 30s, %d post errors %v", missing, mut.errs, mut.errMsg)
	logf("  %d active of %d followers; mutation p50 %.1f ms; inbox arrival p50 %.1f ms, last inbox p50 %.1f ms max %.1f ms; %.0f entries/s during the fan-out, %.0f/s from the response",
		f.ActiveFollowers, f.Followers, f.Mutation.P50, f.Arrival.P50, f.LastInbox.P50, f.LastInbox.Max, f.EntriesPerSec, f.EndToEndEntriesPerSec)
	return nil
}

// awaitWhole polls the readers' inboxes (ZCOUNT of the floor marker,
// every 20 ms, for at most 300 s) until each is whole: a returning
// reader's page answers from MySQL and their inbox is rebuilt after, in
// the background. It says how long that took and how many never were.
func (w *modeRun) awaitWhole(ctx context.Context, readers []int) (time.Duration, int) {
	start := time.Now()
	pending := slices.Clone(readers)
	for len(pending) > 0 && time.Since(start) < 300*time.Second && ctx.Err() == nil {
		pipe := w.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(pending))
		for j, i := range pending {
			cmds[j] = pipe.ZCount(ctx, w.inboxKey(i), "-1", "-1")
		}
		pipe.Exec(ctx)
		next := pending[:0]
		for j, i := range pending {
			if cmds[j].Val() == 0 {
				next = append(next, i)
			}
		}
		pending = next
		if len(pending) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return time.Since(start), len(pending)
}

// withInbox is the users among users whose inbox exists: the active ones
// (and probes), the only inboxes a fan-out writes to.
func (w *modeRun) withInbox(ctx context.Context, users []int) ([]int, error) {
	pipe := w.rdb.Pipeline()
	ex := make([]*redis.IntCmd, len(users))
	for k, i := range users {
		ex[k] = pipe.Exists(ctx, w.inboxKey(i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	var out []int
	for k, i := range users {
		if ex[k].Val() == 1 {
			out = append(out, i)
		}
	}
	return out, nil
}

// awaitInboxes polls the readers' inboxes (ZSCORE, every 2 ms, for at most
// 30 s after t1) until each holds post id. It says each arrival's time
// after t1, when the first and the last arrived, and how many never did.
func (w *modeRun) awaitInboxes(ctx context.Context, readers []int, id int64, t1 time.Time) (arrivals []time.Duration, firstAt, lastAt time.Time, missing int) {
	member := strconv.FormatInt(id, 10)
	pending := slices.Clone(readers)
	deadline := t1.Add(30 * time.Second)
	for len(pending) > 0 && time.Now().Before(deadline) {
		pipe := w.rdb.Pipeline()
		cmds := make([]*redis.FloatCmd, len(pending))
		for j, i := range pending {
			cmds[j] = pipe.ZScore(ctx, w.inboxKey(i), member)
		}
		pipe.Exec(ctx)
		now := time.Now()
		next := pending[:0]
		for j, i := range pending {
			if cmds[j].Err() == nil {
				arrivals = append(arrivals, now.Sub(t1))
				if firstAt.IsZero() {
					firstAt = now
				}
				lastAt = now
			} else {
				next = append(next, i)
			}
		}
		pending = next
		if len(pending) > 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return arrivals, firstAt, lastAt, len(pending)
}

// celebrity: each celebrity posts; the mutation's latency, and the time
// until an active follower's next first page shows the post (polled every 5 ms).
func (w *modeRun) celebrity(ctx context.Context) error {
	mut, vis := &recorder{}, []time.Duration{}
	missing := 0
	for ci, c := range w.g.Celebs {
		reader := -1
		for _, i := range w.active {
			if w.g.follows(i, c) {
				reader = i
				break
			}
		}
		for k := range w.o.celebPosts {
			w.settle(ctx)
			t0 := time.Now()
			id, err := w.c.createPost(ctx, w.tokens[c], fmt.Sprintf("celebrity %d post %d in %s mode", ci, k, w.mode))
			t1 := time.Now()
			mut.add(t1.Sub(t0), err)
			w.mr.Celebrity.PerCelebrity = append(w.mr.Celebrity.PerCelebrity, CelebPost{Followers: int(w.g.FollowerN[c]), MutationMs: msf(t1.Sub(t0))})
			if err != nil || reader < 0 {
				continue
			}
			want := nodeID("Post", id)
			seen := false
			for time.Since(t1) < 30*time.Second && !seen {
				p, err := w.c.feed(ctx, w.tokens[reader], 5, nil)
				if err == nil {
					for _, e := range p.Feed.Edges {
						if e.Node.Post.ID == want {
							seen = true
						}
					}
				}
				if seen {
					vis = append(vis, time.Since(t1))
				} else {
					time.Sleep(5 * time.Millisecond)
				}
			}
			if !seen {
				missing++
			}
		}
	}
	cr := &w.mr.Celebrity
	cr.Mutation = mut.stat("createPost", 0)
	cr.Visible = latStat(vis)
	cr.Missing = missing
	w.check(w.mode, "celebrity: a follower's next page shows the post", missing == 0 && mut.errs == 0,
		"%d posts not seen within 30s, %d post errors %v", missing, mut.errs, mut.errMsg)
	logf("  %d posts: mutation p50 %.1f ms p99 %.1f ms; visible to a follower p50 %.1f ms max %.1f ms",
		cr.Mutation.Count, cr.Mutation.P50, cr.Mutation.P99, cr.Visible.P50, cr.Visible.Max)
	return nil
}

// mixed: 90% first-page reads, 8% posts, 2% follow/unfollow by random active
// users for a fixed time. Follows go to users the actor does not follow in
// the graph, and are undone at the end, so the graph is as loaded.
func (w *modeRun) mixed(ctx context.Context) error {
	workers := 16
	if w.o.quick {
		workers = 8
	}
	type pair struct{ a, b int }
	made := make([][]pair, workers)
	reads, posts, follows := &recorder{}, &recorder{}, &recorder{}
	pc := &pageChecker{}
	all, el := closedLoop(ctx, workers, w.o.mixedDur, func(ctx context.Context, wk int) error {
		u := w.randomActive()
		r := rand.Float64()
		t := time.Now()
		var err error
		switch {
		case r < 0.90:
			var p *feedPage
			p, err = w.c.feed(ctx, w.tokens[u], pageSize, nil)
			if err == nil {
				err = pc.note(p.check(0))
			}
			reads.add(time.Since(t), err)
		case r < 0.98:
			_, err = w.c.createPost(ctx, w.tokens[u], "mixed workload post "+strconv.Itoa(rand.IntN(1e6)))
			posts.add(time.Since(t), err)
		default:
			if n := len(made[wk]); n > 0 && rand.IntN(2) == 0 {
				k := rand.IntN(n)
				pr := made[wk][k]
				made[wk] = append(made[wk][:k], made[wk][k+1:]...)
				err = w.c.follow(ctx, w.tokens[pr.a], w.g.UserIDs[pr.b], false)
			} else {
				j := w.g.General[rand.IntN(len(w.g.General))]
				if j == u || w.g.follows(u, j) {
					return nil
				}
				err = w.c.follow(ctx, w.tokens[u], w.g.UserIDs[j], true)
				made[wk] = append(made[wk], pair{u, j})
			}
			follows.add(time.Since(t), err)
		}
		return err
	})
	m := &w.mr.Mixed
	m.All = all.stat("all", el)
	m.Reads = reads.stat("reads", el)
	m.Posts = posts.stat("posts", el)
	m.Follows = follows.stat("follow/unfollow", el)
	m.Workers = workers
	w.checkPages("mixed: read pages non-empty, sorted", pc)
	w.check(w.mode, "mixed: no errors", m.All.Errors == 0, "%d errors: %v", m.All.Errors, all.errMsg)
	logf("  %d clients: %s; reads p99 %.1f ms, posts p99 %.1f ms, follows p99 %.1f ms",
		workers, fmtStat(m.All), m.Reads.P99, m.Posts.P99, m.Follows.P99)
	settle := w.settle(ctx)
	m.SettleSeconds = settle.Seconds()
	logf("  fan-out backlog drained %.1fs after the run", settle.Seconds())
	var undo []pair
	for _, l := range made {
		undo = append(undo, l...)
	}
	errs := 0
	parallel(len(undo), 8, func(k int) {
		if err := w.c.follow(ctx, w.tokens[undo[k].a], w.g.UserIDs[undo[k].b], false); err != nil {
			errs++
		}
	})
	w.check(w.mode, "mixed: follows undone", errs == 0, "%d unfollows failed", errs)
	w.settle(ctx)
	return nil
}

// redDots runs the red-dot workload with each socket count of -sockets.
func (w *modeRun) redDots(ctx context.Context) error {
	for _, n := range w.o.sockets {
		rd := RedDotResult{Asked: n}
		err := w.redDotsWith(ctx, n, &rd)
		w.mr.RedDots = append(w.mr.RedDots, rd)
		if err != nil {
			return err
		}
	}
	return nil
}

// redDotsWith: n followers of the ordinary author (of the biggest celebrity
// when the author has fewer) hold a websocket with an unreadCount
// subscription; the poster posts; the time from the mutation's response
// until each socket receives its new count. When the poster is the ordinary
// author, the biggest celebrity posts too, and the sockets of its followers
// are timed (in hybrid mode their counts move through the merge at read
// time).
func (w *modeRun) redDotsWith(ctx context.Context, n int, rd *RedDotResult) error {
	readers := w.redDotReaders(n)
	rd.Sockets = len(readers)
	if len(readers) == 0 {
		return nil
	}
	floor, err := w.broadcasterFloor(ctx, len(readers))
	if err != nil {
		return fmt.Errorf("red dot floor: %w", err)
	}
	rd.Floor = floor
	logf("  %d sockets: marking the readers' feeds read (8 clients)", len(readers))
	markStart := time.Now()
	markErrs := w.markFeedsRead(ctx, readers)
	logf("  marked in %.1fs; opening %d websockets (16 at a time)", time.Since(markStart).Seconds(), len(readers))
	w.settle(ctx)

	s := newRedDotSockets(w, readers)
	rd.ServerRSSBeforeKB, _ = w.s.memKB()
	start := time.Now()
	s.open(ctx)
	defer s.close()
	got := s.awaitFirstCounts()
	rd.OpenSeconds = time.Since(start).Seconds()
	rd.ServerRSSOpenKB, _ = w.s.memKB()
	if got > 0 {
		rd.KBPerSocket = float64(rd.ServerRSSOpenKB-rd.ServerRSSBeforeKB) / float64(got)
	}
	logf("  server RSS %.0f MiB before the sockets, %.0f MiB with %d open: %.1f KiB per open subscription",
		float64(rd.ServerRSSBeforeKB)/1024, float64(rd.ServerRSSOpenKB)/1024, got, rd.KBPerSocket)
	w.check(w.mode, fmt.Sprintf("red dot, %d sockets: every socket opened and sent its count", n), s.dialErrs == 0 && got == len(readers) && markErrs == 0,
		"%d dial errors, %d of %d sent a first count, %d markFeedRead errors", s.dialErrs, got, len(readers), markErrs)
	logf("  %d sockets open in %.1fs (%d with a non-zero count after markFeedRead)", got, rd.OpenSeconds, s.nonZero())

	poster := w.redDotPoster(n)
	rd.Poster = w.g.Names[poster]
	rd.PosterFollowers = int(w.g.FollowerN[poster])
	s.timePosterRounds(ctx, poster, n, rd, got)
	if poster == w.g.Author && len(w.g.Celebs) > 0 {
		s.timeCelebrityRounds(ctx, w.g.Celebs[len(w.g.Celebs)-1], rd)
	}
	return nil
}

// markFeedsRead moves each reader's read marker to the newest entry, so
// that every count starts at 0, and says how many failed. (The first time,
// this reads, and so builds, each reader's inbox.)
func (w *modeRun) markFeedsRead(ctx context.Context, readers []int) (errs int) {
	var mu sync.Mutex
	parallel(len(readers), 8, func(k int) {
		if _, err := w.c.markRead(ctx, w.tokens[readers[k]]); err != nil {
			mu.Lock()
			errs++
			mu.Unlock()
		}
	})
	return errs
}

// unreadCount is a count a reader's socket received, and when.
type unreadCount struct {
	client, n int // client: the reader's place in redDotSockets.readers
	at        time.Time
}

// redDotSockets is the red-dot readers' websockets and the last count each
// received.
type redDotSockets struct {
	w        *modeRun
	readers  []int
	conns    []*gqlclient.Socket
	counts   chan unreadCount // every socket's counts, as they arrive
	latest   []int            // by reader: the last count received, -1 before the first
	dialErrs int
}

func newRedDotSockets(w *modeRun, readers []int) *redDotSockets {
	s := &redDotSockets{
		w:       w,
		readers: readers,
		conns:   make([]*gqlclient.Socket, len(readers)),
		counts:  make(chan unreadCount, len(readers)*4),
		latest:  make([]int, len(readers)),
	}
	for i := range s.latest {
		s.latest[i] = -1
	}
	return s
}

// open opens each reader's socket with an unreadCount subscription, 16 at
// a time. A dialer opens its next socket only once the subscription has
// answered (or after 30 s), so that at most 16 subscriptions start at once:
// the workload measures delivery to open sockets, not a reconnect storm.
func (s *redDotSockets) open(ctx context.Context) {
	var mu sync.Mutex
	parallel(len(s.readers), 16, func(k int) {
		conn, err := gqlclient.Subscribe(ctx, s.w.s.url, s.w.tokens[s.readers[k]], gqlclient.UnreadCountSubscription, 30*time.Second)
		if err != nil {
			mu.Lock()
			s.dialErrs++
			mu.Unlock()
			return
		}
		s.conns[k] = conn
		select {
		case <-s.listen(k, conn):
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
		}
	})
}

// listen sends reader k's counts to s.counts until its socket ends. The
// returned channel closes on the subscription's first message (or its end).
func (s *redDotSockets) listen(k int, conn *gqlclient.Socket) (answered <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	go func() {
		defer once.Do(func() { close(ch) })
		for {
			msg, err := conn.Next()
			if err != nil {
				return
			}
			once.Do(func() { close(ch) })
			at := time.Now()
			if n, ok := msg.UnreadCount(); ok {
				s.counts <- unreadCount{k, n, at}
			}
		}
	}()
	return ch
}

func (s *redDotSockets) close() {
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
}

// awaitFirstCounts waits (at most 60 s) until every open socket has sent
// its first count, and says how many did.
func (s *redDotSockets) awaitFirstCounts() (got int) {
	deadline := time.After(60 * time.Second)
	for got < len(s.readers)-s.dialErrs {
		select {
		case c := <-s.counts:
			if s.latest[c.client] < 0 {
				got++
			}
			s.latest[c.client] = c.n
		case <-deadline:
			return got
		}
	}
	return got
}

// nonZero is the number of sockets whose last count is not 0.
func (s *redDotSockets) nonZero() int {
	n := 0
	for _, c := range s.latest {
		if c != 0 {
			n++
		}
	}
	return n
}

// timePosterRounds has the poster post redDotPosts times (5; 2 with
// -quick), every socket's count moving, and records in rd the delivery to
// the got open sockets.
func (s *redDotSockets) timePosterRounds(ctx context.Context, poster, n int, rd *RedDotResult, got int) {
	w := s.w
	all := make([]bool, len(s.readers))
	for i := range all {
		all[i] = true
	}
	lat, missing, postErrs := s.rounds(ctx, poster, all)
	rd.Posts = w.o.redDotPosts
	rd.Delivery = latStat(lat)
	rd.Missing = missing
	w.check(w.mode, fmt.Sprintf("red dot, %d sockets: every socket got the new count", n), missing == 0 && postErrs == 0,
		"%d deliveries missing within 60s, %d post errors", missing, postErrs)
	logf("  %s (%d followers) posts %d times: delivery to %d sockets p50 %.1f ms p99 %.1f ms max %.1f ms; %d missing",
		rd.Poster, rd.PosterFollowers, rd.Posts, got, rd.Delivery.P50, rd.Delivery.P99, rd.Delivery.Max, missing)
}

// timeCelebrityRounds has the celebrity post redDotPosts times and
// records in rd the delivery to the sockets of the readers who follow it.
func (s *redDotSockets) timeCelebrityRounds(ctx context.Context, celeb int, rd *RedDotResult) {
	w := s.w
	expect := make([]bool, len(s.readers))
	n := 0
	for c, i := range s.readers {
		expect[c] = w.g.follows(i, celeb)
		if expect[c] {
			n++
		}
	}
	lat, missing, postErrs := s.rounds(ctx, celeb, expect)
	rd.CelebritySockets = n
	rd.CelebrityDelivery = latStat(lat)
	rd.CelebrityMissing = missing
	w.check(w.mode, fmt.Sprintf("red dot, %d sockets: every celebrity follower's socket got the new count", n), missing == 0 && postErrs == 0,
		"%d deliveries missing within 60s, %d post errors", missing, postErrs)
	logf("  %s (%d followers) posts %d times: delivery to its %d followers' sockets p50 %.1f ms p99 %.1f ms max %.1f ms; %d missing",
		w.g.Names[celeb], w.g.FollowerN[celeb], w.o.redDotPosts, n, rd.CelebrityDelivery.P50, rd.CelebrityDelivery.P99, rd.CelebrityDelivery.Max, missing)
}

// rounds has author post redDotPosts times, each a round of
// postAndCollect, and adds up their latencies, missing deliveries and
// failed posts.
func (s *redDotSockets) rounds(ctx context.Context, author int, expect []bool) (lat []time.Duration, missing, postErrs int) {
	for k := range s.w.o.redDotPosts {
		l, m, err := s.postAndCollect(ctx, author, expect, k)
		if err != nil {
			postErrs++
		}
		lat, missing = append(lat, l...), missing+m
	}
	return lat, missing, postErrs
}

// postAndCollect has author post once and collects, for at most 60 s, the
// time from the mutation's response until each expected socket (that had a
// count before) receives a higher count; it says how many did not. Counts
// that come late or from other sockets only update latest.
func (s *redDotSockets) postAndCollect(ctx context.Context, author int, expect []bool, k int) (lat []time.Duration, missing int, err error) {
	w := s.w
	base := slices.Clone(s.latest)
	_, err = w.c.createPost(ctx, w.tokens[author], fmt.Sprintf("red dot post %d in %s mode", k, w.mode))
	t1 := time.Now()
	if err != nil {
		return nil, 0, err
	}
	lat, missing = s.collect(base, expect, t1)
	return lat, missing, nil
}

// collect collects, for at most 60 s, the time from t1 until each expected
// socket that had a count in base receives a higher one, and says how many
// did not. Counts that come late or from other sockets only update latest.
func (s *redDotSockets) collect(base []int, expect []bool, t1 time.Time) (lat []time.Duration, missing int) {
	want := 0
	for c := range expect {
		if expect[c] && base[c] >= 0 {
			want++
		}
	}
	done := 0
	deadline := time.After(60 * time.Second)
loop:
	for done < want {
		select {
		case c := <-s.counts:
			if expect[c.client] && base[c.client] >= 0 && c.n > base[c.client] && s.latest[c.client] <= base[c.client] {
				lat = append(lat, max(c.at.Sub(t1), 0))
				done++
			}
			s.latest[c.client] = c.n
		case <-deadline:
			break loop
		}
	}
	s.drainLate()
	return lat, want - done
}

// drainLate takes in the counts that arrive within 50 ms of a round and
// any still queued, so that the next round starts from every socket's
// current count.
func (s *redDotSockets) drainLate() {
	time.Sleep(50 * time.Millisecond)
	for {
		select {
		case c := <-s.counts:
			s.latest[c.client] = c.n
		default:
			return
		}
	}
}

// settle waits until every committed event is dispatched and the fan-out
// stream is drained (at most 120 s), and says how long that took.
func (w *modeRun) settle(ctx context.Context) time.Duration {
	start := time.Now()
	for time.Since(start) < 120*time.Second && ctx.Err() == nil {
		var pending int
		w.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM outbox_events WHERE dispatched_at IS NULL").Scan(&pending)
		if pending == 0 {
			groups, err := w.rdb.XInfoGroups(ctx, w.prefix+"fanout").Result()
			busy := false
			if err == nil {
				for _, g := range groups {
					if g.Pending > 0 || g.Lag > 0 {
						busy = true
					}
				}
			}
			if !busy {
				return time.Since(start)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	logf("  warning: fan-out not drained after %.0fs", time.Since(start).Seconds())
	return time.Since(start)
}

// resetSQL undoes what the server wrote in this mode (posts, events, read
// markers), so every mode starts from the same data. Follows were undone
// through the API.
func (e *env) resetSQL(ctx context.Context, mode string) error {
	stmts := []string{
		fmt.Sprintf("UPDATE users u JOIN (SELECT author_id, COUNT(*) c FROM posts WHERE id > %d GROUP BY author_id) p ON u.id = p.author_id SET u.post_count = u.post_count - p.c", e.g.MaxID),
		fmt.Sprintf("DELETE FROM posts WHERE id > %d", e.g.MaxID),
		"DELETE FROM outbox_events",
		"UPDATE users SET feed_read_key = 0 WHERE feed_read_key <> 0",
	}
	for _, s := range stmts {
		if _, err := e.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	var follows int
	e.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM followings").Scan(&follows)
	e.check(mode, "graph restored after the mode", follows == e.g.FollowEdges, "followings has %d rows, loaded %d", follows, e.g.FollowEdges)
	return nil
}

func fmtStat(s Stat) string {
	return fmt.Sprintf("%.0f/s, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms (n=%d, errors %d)", s.Throughput, s.P50, s.P95, s.P99, s.Count, s.Errors)
}

// listMembersMax is the most members a list holds (the service's
// MaxListMembers default).
const listMembersMax = 1000

// makeLists gives each active reader, once for the whole run, a list
// named "everyone" of their newest followees (up to listMembersMax: for
// almost every reader, all of them, so that the list's page holds the
// home page's entries), written in bulk into MySQL as the graph is; the
// list's id is its owner's. Each mode's server reads them through its
// cache tiers, filled on the warm read.
func (e *env) makeLists(ctx context.Context) error {
	if e.listsMade {
		return nil
	}
	for start := 0; start < len(e.active); start += 1000 {
		ids := make([]string, 0, 1000)
		for _, i := range e.active[start:min(start+1000, len(e.active))] {
			ids = append(ids, strconv.FormatInt(e.g.UserIDs[i], 10))
		}
		in := strings.Join(ids, ",")
		for _, stmt := range []string{
			"INSERT IGNORE INTO lists (owner_id, id, name, created_at) SELECT id, id, 'everyone', created_at FROM users WHERE id IN (" + in + ")",
			fmt.Sprintf(`INSERT IGNORE INTO list_members (owner_id, list_id, member_id, id, created_at)
				SELECT user_id, user_id, followee_id, id, created_at FROM (
					SELECT user_id, followee_id, id, created_at, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY id DESC) AS n
					FROM followings WHERE user_id IN (%s)) f
				WHERE n <= %d`, in, listMembersMax),
		} {
			if _, err := e.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("make the lists: %w", err)
			}
		}
	}
	e.listsMade = true
	return nil
}

// listID is the node id of active reader i's list (see makeLists).
func (w *modeRun) listID(i int) string { return models.NodeID(models.KindList, w.g.UserIDs[i]) }

// listPage: the warm first page of 20 of a random active reader's list
// (makeLists), beside the warm first page of their home feed, both at 8
// clients, in alternating rounds of half the workload's duration each, so
// that both see the same load on a shared box. Each reader's list page is
// read once first (8 clients), so that the list's copy, the members'
// outboxes and the posts are in the cache tiers.
func (w *modeRun) listPage(ctx context.Context) error {
	if err := w.makeLists(ctx); err != nil {
		return err
	}
	pc := &pageChecker{}
	warm := &recorder{}
	parallel(len(w.active), 8, func(k int) {
		i := w.active[k]
		t := time.Now()
		p, err := w.c.listFeed(ctx, w.tokens[i], w.listID(i), pageSize, nil)
		if err == nil {
			err = pc.note(p.check(0))
		}
		warm.add(time.Since(t), err)
	})
	w.checkPages("list page warm-up: pages non-empty and sorted", pc)
	home, list := &recorder{}, &recorder{}
	var homeTime, listTime time.Duration
	for round := range 4 {
		onList := round%2 == 1
		r, el := closedLoop(ctx, 8, w.o.dur/2, func(ctx context.Context, _ int) error {
			i := w.randomActive()
			var p *feedPage
			var err error
			if onList {
				p, err = w.c.listFeed(ctx, w.tokens[i], w.listID(i), pageSize, nil)
			} else {
				p, err = w.c.feed(ctx, w.tokens[i], pageSize, nil)
			}
			if err != nil {
				return err
			}
			return pc.note(p.check(0))
		})
		if onList {
			list.merge(r)
			listTime += el
		} else {
			home.merge(r)
			homeTime += el
		}
	}
	lp := &w.mr.ListPage
	lp.Home, lp.List = home.stat("home, 8 clients", homeTime), list.stat("list, 8 clients", listTime)
	w.checkPages("list and home pages: non-empty, sorted", pc)
	w.check(w.mode, "list and home pages: no errors", lp.Home.Errors+lp.List.Errors+warm.stat("", 0).Errors == 0,
		"%d errors: %v %v %v", lp.Home.Errors+lp.List.Errors, home.errMsg, list.errMsg, warm.errMsg)
	logf("  home: %s", fmtStat(lp.Home))
	logf("  list: %s", fmtStat(lp.List))
	return nil
}
