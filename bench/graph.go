package main

// The synthetic social graph and its bulk load into MySQL.
//
// Users are numbered 0..U-1 and laid out as: the celebrities, the ordinary
// author (followed by about 10% of users), the probe readers (exact followee
// counts for the latency-vs-followees workload), then everyone else. Followee
// counts are log-normal (a power-law-like long tail: median ~100, capped at
// 5,000 on the default graph); followees are drawn by a heavy-tailed
// popularity weight, capped so that no ordinary user comes near the
// celebrity threshold. Posts are spread over the last 30 days, with about 10%
// reposts of followees' posts. IDs come from the service's own layout
// (ids.IDAt plus a node number no server uses), so the server treats the
// rows as its own.

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"feedservice/feed/ids"

	"golang.org/x/crypto/bcrypt"

	"crypto/sha256"
	"encoding/base64"
)

// benchNode is the id node number of bulk-loaded rows: no server leases it
// while fewer than 32 instances run.
const benchNode = ids.MaxNodes - 1

// BenchPassword is every benchmark user's password.
const BenchPassword = "benchmark-password"

// graphParams decides the graph; the same params and seed give the same graph.
type graphParams struct {
	Users              int       `json:"users"`
	Seed               uint64    `json:"seed"`
	MedianFollowees    int       `json:"medianFollowees"`
	MaxFollowees       int       `json:"maxFollowees"`
	MeanPosts          float64   `json:"meanPostsPerUser"`
	RepostShare        float64   `json:"repostShare"`
	Celebrities        int       `json:"celebrities"`
	CelebrityShares    []float64 `json:"celebrityFollowerShares"`
	CelebrityThreshold int       `json:"celebrityThreshold"`
	AuthorShare        float64   `json:"ordinaryAuthorFollowerShare"`
	ProbeBuckets       []int     `json:"probeFolloweeBuckets"`
	ProbesPerBucket    int       `json:"probesPerBucket"`
	Days               int       `json:"days"`
	BaseUnixMs         int64     `json:"baseUnixMs"` // "now" of the graph: posts end here
}

func defaultGraphParams(users int, quick bool, seed uint64) graphParams {
	median := clampInt(users/100, 10, 100)
	maxF := clampInt(users/4, 50, 5000)
	p := graphParams{
		Users:              users,
		Seed:               seed,
		MedianFollowees:    median,
		MaxFollowees:       maxF,
		MeanPosts:          20,
		RepostShare:        0.10,
		Celebrities:        5,
		CelebrityShares:    []float64{0.22, 0.26, 0.30, 0.35, 0.40},
		CelebrityThreshold: max(users/5, 1),
		AuthorShare:        0.10,
		ProbesPerBucket:    10,
		Days:               30,
		BaseUnixMs:         time.Now().Add(-2 * time.Minute).UnixMilli(),
	}
	p.ProbeBuckets = dedupSorted([]int{10, median, min(10*median, maxF), maxF})
	if quick {
		p.Celebrities = 3
		p.CelebrityShares = []float64{0.22, 0.30, 0.40}
		p.ProbesPerBucket = 4
		p.AuthorShare = 0.12
	}
	return p
}

func dedupSorted(v []int) []int {
	slices.Sort(v)
	return slices.Compact(v)
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// graph is the generated data, by user index.
type graph struct {
	P            graphParams
	UserIDs      []int64
	Names        []string
	Followees    [][]int32 // sorted user indexes each user follows
	FollowerN    []int32
	Celebs       []int         // user indexes
	Author       int           // the ordinary author
	Probes       map[int][]int // followee bucket -> user indexes
	General      []int         // everyone else (candidates for active readers)
	Posts        []post        // sorted by id
	PostCount    []int32       // per user (originals + reposts)
	MaxID        int64         // the largest bulk id: everything above was made by a server
	FollowEdges  int
	followIDBase int64
	followStep   int64
	followPerm   []uint32 // follow edge number -> time slot
}

type post struct {
	ID          int64
	Author      int32
	RepostOf    int32 // index into Posts of the original, -1 for an original
	RepostCount int32
	ms          int64 // time, ms since the id epoch, before ids are assigned
}

// generate builds the graph in memory. Every draw comes from one rng in a
// fixed order (the steps below, in this order), so the same params and seed
// give the same graph: changing a step's draws changes every later step.
func generate(p graphParams, logf func(string, ...any)) *graph {
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	now := time.UnixMilli(p.BaseUnixMs).UTC()
	g := &graph{P: p, Probes: map[int][]int{}}
	probeBucket := g.layOut()
	g.nameUsers(now, probeBucket)

	weights := g.drawPopularity(rng)
	counts := g.drawFolloweeCounts(rng)
	capPopularity(weights, counts)
	popular := newAlias(weights)

	logf("graph: drawing followees for %d users (median %d, max %d)", p.Users, p.MedianFollowees, p.MaxFollowees)
	g.drawFollowees(rng, popular, counts, probeBucket)
	g.drawCelebrityFollowees(rng, popular)
	g.countFollowers()
	g.spreadFollowTimes(rng, now)

	logf("graph: %d follow edges; drawing posts", g.FollowEdges)
	start := ids.IDAt(now.Add(-time.Duration(p.Days)*24*time.Hour)) >> 12
	end := ids.IDAt(now) >> 12
	byAuthor, reposts := g.drawOriginals(rng, start, end-start)
	g.drawReposts(rng, byAuthor, reposts, end)
	g.sortPostsByTime()
	g.assignPostIDs()
	g.setMaxID()
	return g
}

// layOut numbers the designated users (the celebrities, the ordinary
// author, the probe readers) first and everyone else after them, and says
// each probe reader's followee bucket.
func (g *graph) layOut() (probeBucket map[int]int) {
	p := g.P
	idx := 0
	for range p.Celebrities {
		g.Celebs = append(g.Celebs, idx)
		idx++
	}
	g.Author = idx
	idx++
	probeBucket = map[int]int{}
	for _, b := range p.ProbeBuckets {
		for range p.ProbesPerBucket {
			g.Probes[b] = append(g.Probes[b], idx)
			probeBucket[idx] = b
			idx++
		}
	}
	if idx >= p.Users {
		panic("too few users for the designated ones")
	}
	for i := idx; i < p.Users; i++ {
		g.General = append(g.General, i)
	}
	return probeBucket
}

// designated is the number of designated users, who come first: the index
// of the first general user.
func (g *graph) designated() int { return g.General[0] }

// nameUsers gives each user an id, created 90 to 60 days before now in
// index order, and a name that says the user's role.
func (g *graph) nameUsers(now time.Time, probeBucket map[int]int) {
	U := g.P.Users
	g.UserIDs = make([]int64, U)
	g.Names = make([]string, U)
	base := now.Add(-90 * 24 * time.Hour)
	step := int64(30*24*time.Hour/time.Millisecond) / int64(U)
	for i := range U {
		g.UserIDs[i] = ids.IDAt(base) + (int64(i)*step)<<12 + benchNode<<7
		switch {
		case i < g.P.Celebrities:
			g.Names[i] = fmt.Sprintf("celeb_%d", i+1)
		case i == g.Author:
			g.Names[i] = "author_ordinary"
		case probeBucket[i] > 0:
			g.Names[i] = fmt.Sprintf("probe_%d_%d", probeBucket[i], i)
		default:
			g.Names[i] = fmt.Sprintf("user_%06d", i)
		}
	}
}

// drawPopularity draws each general user's weight as a followee: heavy
// tailed (Pareto-like), zero for the designated users, who are followed by
// share instead.
func (g *graph) drawPopularity(rng *rand.Rand) []float64 {
	weights := make([]float64, g.P.Users)
	for i := g.designated(); i < g.P.Users; i++ {
		weights[i] = math.Pow(1-rng.Float64(), -0.8)
	}
	return weights
}

// drawFolloweeCounts draws how many users each general user follows:
// log-normal around the median, between 3 and MaxFollowees.
func (g *graph) drawFolloweeCounts(rng *rand.Rand) []int {
	const sigma = 1.0
	counts := make([]int, g.P.Users)
	for i := g.designated(); i < g.P.Users; i++ {
		k := int(math.Round(math.Exp(math.Log(float64(g.P.MedianFollowees)) + sigma*rng.NormFloat64())))
		counts[i] = clampInt(k, 3, g.P.MaxFollowees)
	}
	return counts
}

// capPopularity caps the weights so that nobody's expected follower count
// passes 4% of the users: an ordinary user must not come near the
// celebrity threshold. Capping moves the total, so it is repeated.
func capPopularity(weights []float64, counts []int) {
	total := 0
	for _, c := range counts {
		total += c
	}
	for range 5 {
		var w float64
		for _, x := range weights {
			w += x
		}
		limit := 0.04 * float64(len(weights)) * w / float64(max(total, 1))
		for i, x := range weights {
			if x > limit {
				weights[i] = limit
			}
		}
	}
}

// drawFollowees draws every user's followees but the celebrities' (see
// drawCelebrityFollowees).
func (g *graph) drawFollowees(rng *rand.Rand, popular *alias, counts []int, probeBucket map[int]int) {
	g.Followees = make([][]int32, g.P.Users)
	seen := make(map[int32]bool)
	for i := g.P.Celebrities; i < g.P.Users; i++ {
		clear(seen)
		g.Followees[i] = g.drawFolloweesOf(rng, i, popular, counts[i], probeBucket, seen)
	}
}

// drawFolloweesOf draws user i's followees: each celebrity and the ordinary
// author by their shares, then general users by popularity up to the
// user's count. A probe reader gets exactly its bucket's count; the author
// follows the median count. The list is sorted.
func (g *graph) drawFolloweesOf(rng *rand.Rand, i int, popular *alias, count int, probeBucket map[int]int, seen map[int32]bool) []int32 {
	p := g.P
	var list []int32
	add := func(j int) {
		if j != i && !seen[int32(j)] {
			seen[int32(j)] = true
			list = append(list, int32(j))
		}
	}
	for c, share := range p.CelebrityShares[:p.Celebrities] {
		if rng.Float64() < share {
			add(g.Celebs[c])
		}
	}
	if i != g.Author && rng.Float64() < p.AuthorShare {
		add(g.Author)
	}
	want := count
	if b, ok := probeBucket[i]; ok {
		want = b
		if len(list) > want {
			list = list[:want]
		}
	} else if i == g.Author {
		want = p.MedianFollowees
	} else {
		want = max(want, len(list))
	}
	designated := g.designated()
	for tries := 0; len(list) < want && tries < 50*want; tries++ {
		if j := popular.draw(rng); j >= designated {
			add(j)
		}
	}
	slices.Sort(list)
	return list
}

// drawCelebrityFollowees gives each celebrity 20 general followees, drawn
// by popularity.
func (g *graph) drawCelebrityFollowees(rng *rand.Rand, popular *alias) {
	designated := g.designated()
	seen := make(map[int32]bool)
	for _, c := range g.Celebs {
		clear(seen)
		var list []int32
		for len(list) < 20 {
			j := int32(popular.draw(rng))
			if int(j) >= designated && !seen[j] {
				seen[j] = true
				list = append(list, j)
			}
		}
		slices.Sort(list)
		g.Followees[c] = list
	}
}

// countFollowers sets each user's follower count and the number of follow
// edges from the followee lists.
func (g *graph) countFollowers() {
	g.FollowerN = make([]int32, g.P.Users)
	for _, list := range g.Followees {
		g.FollowEdges += len(list)
		for _, j := range list {
			g.FollowerN[j]++
		}
	}
}

// spreadFollowTimes spreads the follow edges' ids over 60 to 31 days before
// now in a random order (see followID).
func (g *graph) spreadFollowTimes(rng *rand.Rand, now time.Time) {
	g.followPerm = make([]uint32, g.FollowEdges)
	for i := range g.followPerm {
		g.followPerm[i] = uint32(i)
	}
	rng.Shuffle(len(g.followPerm), func(a, b int) { g.followPerm[a], g.followPerm[b] = g.followPerm[b], g.followPerm[a] })
	g.followIDBase = ids.IDAt(now.Add(-60 * 24 * time.Hour))
	g.followStep = max(int64(29*24*time.Hour/time.Millisecond)/int64(max(g.FollowEdges, 1)), 1)
}

// repostQuota is how many reposts a user is to make.
type repostQuota struct{ user, n int }

// drawOriginals draws each user's posts (log-normal around MeanPosts;
// celebrities 300, the ordinary author 60) and which of them are reposts.
// The originals are made here, at random times in [start, start+span); the
// reposts are left as quotas for drawReposts, which needs every user's
// originals. A user who follows nobody has nothing to repost.
func (g *graph) drawOriginals(rng *rand.Rand, start, span int64) (byAuthor [][]int32, reposts []repostQuota) {
	p := g.P
	g.PostCount = make([]int32, p.Users)
	byAuthor = make([][]int32, p.Users)
	mu := math.Log(p.MeanPosts) - 0.5
	for i := range p.Users {
		n := int(math.Round(math.Exp(mu + rng.NormFloat64())))
		n = clampInt(n, 1, 400)
		switch {
		case i < p.Celebrities:
			n = 300
		case i == g.Author:
			n = 60
		}
		k := 0
		for range n {
			if rng.Float64() < p.RepostShare {
				k++
			}
		}
		if len(g.Followees[i]) == 0 {
			k = 0
		}
		for range n - k {
			byAuthor[i] = append(byAuthor[i], int32(len(g.Posts)))
			g.Posts = append(g.Posts, post{Author: int32(i), RepostOf: -1, ms: start + rng.Int64N(span)})
		}
		if k > 0 {
			reposts = append(reposts, repostQuota{i, k})
		}
	}
	return byAuthor, reposts
}

// drawReposts makes the reposts: each of a random followee's original,
// later than it and before end, at most once per original and reposter. A
// draw that lands on a followee without originals or on an original
// already reposted is lost rather than redrawn.
func (g *graph) drawReposts(rng *rand.Rand, byAuthor [][]int32, reposts []repostQuota, end int64) {
	for _, q := range reposts {
		i := q.user
		done := map[int32]bool{}
		for range q.n {
			f := g.Followees[i][rng.IntN(len(g.Followees[i]))]
			if len(byAuthor[f]) == 0 {
				continue
			}
			o := byAuthor[f][rng.IntN(len(byAuthor[f]))]
			if done[o] {
				continue
			}
			done[o] = true
			om := g.Posts[o].ms
			g.Posts = append(g.Posts, post{Author: int32(i), RepostOf: o, ms: om + 1 + rng.Int64N(max(end-om, 2))})
			g.Posts[o].RepostCount++
		}
	}
}

// sortPostsByTime orders the posts by time, moving each repost's reference
// to its original's new place.
func (g *graph) sortPostsByTime() {
	order := make([]int32, len(g.Posts))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(a, b int) bool { return g.Posts[order[a]].ms < g.Posts[order[b]].ms })
	newIdx := make([]int32, len(g.Posts))
	for n, o := range order {
		newIdx[o] = int32(n)
	}
	sorted := make([]post, len(g.Posts))
	for n, o := range order {
		sorted[n] = g.Posts[o]
		if sorted[n].RepostOf >= 0 {
			sorted[n].RepostOf = newIdx[sorted[n].RepostOf]
		}
	}
	g.Posts = sorted
}

// assignPostIDs gives the time-sorted posts their ids in the service's
// layout: posts of the same millisecond take sequence numbers, and past
// the 7-bit sequence move on to the next millisecond, so the ids stay
// unique and in time order. It counts each user's posts too.
func (g *graph) assignPostIDs() {
	lastMs, seq := int64(-1), int64(0)
	for n := range g.Posts {
		ms := max(g.Posts[n].ms, lastMs)
		if ms == lastMs {
			seq++
			if seq > 127 {
				ms, seq = ms+1, 0
			}
		} else {
			seq = 0
		}
		lastMs = ms
		g.Posts[n].ID = ms<<12 | benchNode<<7 | seq
		g.PostCount[g.Posts[n].Author]++
	}
}

// setMaxID records the largest bulk id, which tells the rows a server made
// from the loaded ones. The ids must stay below 2^53: Redis scores sorted
// sets by id as a float64, exact only below it.
func (g *graph) setMaxID() {
	g.MaxID = max(g.UserIDs[g.P.Users-1], g.followID(g.FollowEdges-1))
	if len(g.Posts) > 0 {
		g.MaxID = max(g.MaxID, g.Posts[len(g.Posts)-1].ID)
	}
	if g.MaxID >= 1<<53 {
		panic("ids above 2^53")
	}
}

// followID is the id of follow edge number n (edges numbered in the order
// of g.Followees).
func (g *graph) followID(n int) int64 {
	if n < 0 {
		return 0
	}
	return g.followIDBase + (int64(g.followPerm[n])*g.followStep)<<12 | benchNode<<7
}

// follows says whether user i follows user j in the generated graph.
func (g *graph) follows(i, j int) bool {
	_, ok := slices.BinarySearch(g.Followees[i], int32(j))
	return ok
}

// stats describes the graph for the report.
func (g *graph) stats() map[string]any {
	counts := make([]int, 0, len(g.General))
	for _, i := range g.General {
		counts = append(counts, len(g.Followees[i]))
	}
	slices.Sort(counts)
	fol := make([]int, 0, len(g.General))
	for _, i := range g.General {
		fol = append(fol, int(g.FollowerN[i]))
	}
	slices.Sort(fol)
	reposts := 0
	for _, p := range g.Posts {
		if p.RepostOf >= 0 {
			reposts++
		}
	}
	celebF := []int{}
	for _, c := range g.Celebs {
		celebF = append(celebF, int(g.FollowerN[c]))
	}
	q := func(v []int, f float64) int {
		if len(v) == 0 {
			return 0
		}
		return v[min(len(v)-1, int(f*float64(len(v))))]
	}
	return map[string]any{
		"users": g.P.Users, "followEdges": g.FollowEdges, "posts": len(g.Posts), "reposts": reposts,
		"followeesP50": q(counts, 0.5), "followeesP90": q(counts, 0.9), "followeesP99": q(counts, 0.99), "followeesMax": q(counts, 1),
		"followersP50": q(fol, 0.5), "followersP99": q(fol, 0.99), "followersMaxOrdinary": q(fol, 1),
		"celebrityFollowers": celebF, "ordinaryAuthorFollowers": int(g.FollowerN[g.Author]),
	}
}

// alias is Walker's alias table for weighted draws.
type alias struct {
	prob  []float64
	alias []int
}

func newAlias(w []float64) *alias {
	n := len(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	a := &alias{prob: make([]float64, n), alias: make([]int, n)}
	scaled := make([]float64, n)
	var small, large []int
	for i, x := range w {
		scaled[i] = x * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.alias[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		a.prob[i] = 1
	}
	return a
}

func (a *alias) draw(rng *rand.Rand) int {
	i := rng.IntN(len(a.prob))
	if rng.Float64() < a.prob[i] {
		return i
	}
	return a.alias[i]
}

// ---- bulk load ----

// benchPasswordHash is bcrypt(cost 4) of the server's password digest
// (feed/auth.go passwordDigest: base64 of SHA-256) of BenchPassword.
func benchPasswordHash() string {
	sum := sha256.Sum256([]byte(BenchPassword))
	h, err := bcrypt.GenerateFromPassword([]byte(base64.StdEncoding.EncodeToString(sum[:])), 4)
	if err != nil {
		panic(err)
	}
	return string(h)
}

func sqlTime(ms int64) string {
	return ids.IDTime(ms << 12).Format("'2006-01-02 15:04:05.000'")
}

func idTimeSQL(id int64) string { return ids.IDTime(id).Format("'2006-01-02 15:04:05.000'") }

var words = strings.Fields(`the a feed post today coffee code release bug fix deploy weekend music photo
city train rain sun team launch idea draft review paper graph redis mysql cache latency queue
stream follow friend news sport game match goal win lose learn book film travel food garden
cat dog walk run morning night late early great small big new old fast slow quiet loud`)

func body(rng *rand.Rand) string {
	n := 60 + rng.IntN(140)
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// load inserts the graph with batched multi-row INSERTs, the four tables at
// once, printing progress. Secondary indexes are dropped for the load and
// built once after it: a sorted build is much faster than row-by-row
// maintenance.
func (g *graph) load(ctx context.Context, db *sql.DB, logf func(string, ...any)) error {
	l := &loader{g: g, passwordHash: benchPasswordHash()}
	totalRows := int64(g.P.Users + 2*g.FollowEdges + len(g.Posts))
	start := time.Now()
	defer l.logProgress(logf, totalRows, start)()

	readd, err := dropSecondaryIndexes(ctx, db, "followings", "followers", "posts")
	if err != nil {
		return err
	}
	if err := l.insertAll(ctx, db); err != nil {
		return err
	}
	logf("load: %s rows in %.1fs (%.0f rows/s); building secondary indexes", human(totalRows), time.Since(start).Seconds(), float64(totalRows)/time.Since(start).Seconds())
	if err := addSecondaryIndexes(ctx, db, readd); err != nil {
		return fmt.Errorf("rebuild indexes: %w", err)
	}
	logf("load: done in %.1fs", time.Since(start).Seconds())
	return nil
}

// loadBatchRows is the rows of one INSERT (posts, with their bodies, send
// half as many).
const loadBatchRows = 4000

// loader inserts one graph's rows.
type loader struct {
	g            *graph
	passwordHash string       // every user's: bcrypt is too slow to run per user
	done         atomic.Int64 // rows sent, for the progress lines
}

// logProgress prints the rows sent every 3 seconds until the returned
// function is called.
func (l *loader) logProgress(logf func(string, ...any), totalRows int64, start time.Time) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(3 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d := l.done.Load()
				logf("load: %s / %s rows (%.0f%%, %.0f rows/s)", human(d), human(totalRows), 100*float64(d)/float64(totalRows), float64(d)/time.Since(start).Seconds())
			}
		}
	}()
	return func() { close(done) }
}

// insertAll inserts the four tables at once, each on its own connection.
func (l *loader) insertAll(ctx context.Context, db *sql.DB) error {
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for k, f := range []func(context.Context, *sql.Conn) error{l.insertUsers, l.insertFollowings, l.insertFollowers, l.insertPosts} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = withBulkSession(ctx, db, f)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// withBulkSession runs f on a connection of its own that skips the unique
// and foreign-key checks: the generated rows are consistent by
// construction, and the checks would slow the load.
func withBulkSession(ctx context.Context, db *sql.DB, f func(context.Context, *sql.Conn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION unique_checks=0, foreign_key_checks=0"); err != nil {
		return err
	}
	return f(ctx, conn)
}

// batch collects rows of one table and sends them size at a time as one
// multi-row INSERT.
type batch struct {
	ctx  context.Context
	conn *sql.Conn
	head string // "INSERT INTO t (...) VALUES "
	size int
	rows []string
	done *atomic.Int64
}

func (l *loader) batch(ctx context.Context, conn *sql.Conn, head string, size int) *batch {
	return &batch{ctx: ctx, conn: conn, head: head, size: size, done: &l.done}
}

// add queues row and sends the batch once it is full.
func (b *batch) add(row string) error {
	b.rows = append(b.rows, row)
	if len(b.rows) < b.size {
		return nil
	}
	return b.flush()
}

// flush sends the queued rows, if any.
func (b *batch) flush() error {
	if len(b.rows) == 0 {
		return nil
	}
	_, err := b.conn.ExecContext(b.ctx, b.head+strings.Join(b.rows, ","))
	b.done.Add(int64(len(b.rows)))
	b.rows = b.rows[:0]
	return err
}

// insertUsers inserts the users with their follower, following and post
// counts as the graph has them.
func (l *loader) insertUsers(ctx context.Context, conn *sql.Conn) error {
	g := l.g
	b := l.batch(ctx, conn, "INSERT INTO users (id,username,username_key,display_name,bio,password_hash,created_at,follower_count,following_count,post_count,last_active_at,feed_read_key) VALUES ", loadBatchRows)
	for i := range g.P.Users {
		id := g.UserIDs[i]
		t := idTimeSQL(id)
		name := g.Names[i]
		if err := b.add(fmt.Sprintf("(%d,'%s','%s','%s','','%s',%s,%d,%d,%d,%s,0)", id, name, strings.ToLower(name), strings.ReplaceAll(name, "_", " "), l.passwordHash, t, g.FollowerN[i], len(g.Followees[i]), g.PostCount[i], t)); err != nil {
			return err
		}
	}
	return b.flush()
}

// insertFollowings inserts each follow edge from the follower's side.
func (l *loader) insertFollowings(ctx context.Context, conn *sql.Conn) error {
	g := l.g
	b := l.batch(ctx, conn, "INSERT INTO followings (user_id,followee_id,id,created_at) VALUES ", loadBatchRows)
	n := 0
	for i, list := range g.Followees {
		for _, j := range list {
			id := g.followID(n)
			n++
			if err := b.add("(" + strconv.FormatInt(g.UserIDs[i], 10) + "," + strconv.FormatInt(g.UserIDs[j], 10) + "," + strconv.FormatInt(id, 10) + "," + idTimeSQL(id) + ")"); err != nil {
				return err
			}
		}
	}
	return b.flush()
}

// insertFollowers inserts each follow edge from the followee's side, with
// the same follow id as its followings row.
func (l *loader) insertFollowers(ctx context.Context, conn *sql.Conn) error {
	g := l.g
	inv := g.followerEdges()
	b := l.batch(ctx, conn, "INSERT INTO followers (user_id,follower_id,id,created_at) VALUES ", loadBatchRows)
	for j, list := range inv {
		for _, e := range list {
			id := g.followID(int(e.n))
			if err := b.add("(" + strconv.FormatInt(g.UserIDs[j], 10) + "," + strconv.FormatInt(g.UserIDs[e.follower], 10) + "," + strconv.FormatInt(id, 10) + "," + idTimeSQL(id) + ")"); err != nil {
				return err
			}
		}
		inv[j] = nil // the inverted graph is as big as the graph: free it as it goes
	}
	return b.flush()
}

// followerEdge is one follower of a user and the follow edge's number.
type followerEdge struct {
	follower int32
	n        int32
}

// followerEdges inverts the graph: each user's followers, in follower
// order, with the edge numbers of followID.
func (g *graph) followerEdges() [][]followerEdge {
	inv := make([][]followerEdge, g.P.Users)
	n := 0
	for i, list := range g.Followees {
		for _, j := range list {
			inv[j] = append(inv[j], followerEdge{int32(i), int32(n)})
			n++
		}
	}
	return inv
}

// insertPosts inserts the posts, originals with a random body and reposts
// with none. The bodies come from an rng of their own, so that they do not
// move the graph's draws.
func (l *loader) insertPosts(ctx context.Context, conn *sql.Conn) error {
	g := l.g
	rng := rand.New(rand.NewPCG(g.P.Seed, 0xb0d1))
	b := l.batch(ctx, conn, "INSERT INTO posts (id,author_id,body,repost_of_id,repost_count,created_at) VALUES ", loadBatchRows/2)
	for _, p := range g.Posts {
		text, of := "", "NULL"
		if p.RepostOf < 0 {
			text = body(rng)
		} else {
			of = strconv.FormatInt(g.Posts[p.RepostOf].ID, 10)
		}
		if err := b.add(fmt.Sprintf("(%d,%d,'%s',%s,%d,%s)", p.ID, g.UserIDs[p.Author], text, of, p.RepostCount, idTimeSQL(p.ID))); err != nil {
			return err
		}
	}
	return b.flush()
}

// dropSecondaryIndexes drops the tables' non-primary indexes and says, by
// table, how to add them back as they were.
func dropSecondaryIndexes(ctx context.Context, db *sql.DB, tables ...string) (readd map[string]string, err error) {
	readd = map[string]string{}
	for _, t := range tables {
		drop, add, err := secondaryIndexes(ctx, db, t)
		if err != nil {
			return nil, err
		}
		if drop != "" {
			if _, err := db.ExecContext(ctx, "ALTER TABLE "+t+" "+drop); err != nil {
				return nil, err
			}
			readd[t] = add
		}
	}
	return readd, nil
}

// addSecondaryIndexes adds the indexes of dropSecondaryIndexes back, the
// tables at once.
func addSecondaryIndexes(ctx context.Context, db *sql.DB, readd map[string]string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(readd))
	k := 0
	for t, add := range readd {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			_, errs[k] = db.ExecContext(ctx, "ALTER TABLE "+t+" "+add)
		}(k)
		k++
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// secondaryIndexes reads table's non-primary indexes and says how to drop
// them and how to add them back as they were.
func secondaryIndexes(ctx context.Context, db *sql.DB, table string) (drop, add string, err error) {
	rows, err := db.QueryContext(ctx, `SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME <> 'PRIMARY' ORDER BY INDEX_NAME, SEQ_IN_INDEX`, table)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	type index struct {
		unique bool
		cols   []string
	}
	var names []string
	idx := map[string]*index{}
	for rows.Next() {
		var name, col string
		var nonUnique int
		var sub sql.NullInt64
		if err := rows.Scan(&name, &nonUnique, &col, &sub); err != nil {
			return "", "", err
		}
		if idx[name] == nil {
			idx[name] = &index{unique: nonUnique == 0}
			names = append(names, name)
		}
		c := "`" + col + "`"
		if sub.Valid {
			c += fmt.Sprintf("(%d)", sub.Int64)
		}
		idx[name].cols = append(idx[name].cols, c)
	}
	var d, a []string
	for _, n := range names {
		d = append(d, "DROP INDEX `"+n+"`")
		kind := "INDEX"
		if idx[n].unique {
			kind = "UNIQUE INDEX"
		}
		a = append(a, fmt.Sprintf("ADD %s `%s` (%s)", kind, n, strings.Join(idx[n].cols, ",")))
	}
	return strings.Join(d, ", "), strings.Join(a, ", "), rows.Err()
}

func human(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
