package timeline

import (
	"cmp"
	"context"
	"errors"
	"feedservice/feed/pull"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/cache"
	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/outbox"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// The read path of push and hybrid modes. A page is merged from the
// reader's inbox and the outboxes of the celebrities they follow, over the
// window those hold (keys at or above the highest of their floors); below
// that window MySQL serves the rest, with the same cursor.
//
// Reads trust no stored entry blindly: each candidate's sources are checked
// (is the post live, is its source still followed) in one batch of each
// kind per page, the second against the reader's followee set (see
// inbox/following.go), which an unfollow changes before it returns; so a post
// deleted or a followee unfollowed a moment ago never shows, even before a
// worker has reached the inbox. A stale source found this way is repaired in place, and a page that
// a repair reorders is read again.

// readMaxPasses bounds the re-reads after repairs.
const readMaxPasses = 3

// readState holds what one feed request learns once and uses on every fetch.
type readState struct {
	id     int64
	celebs []int64 // followed celebrities, merged at read time
	// followees are everyone the readState follows, sorted, and hidden the
	// users whose posts their feed hides, when loaded: from their followee
	// set in Redis when it is small enough to read whole, else from MySQL
	// when that must serve part of the page.
	followees []int64
	hidden    []int64
	loaded    bool
	view      *pull.View // made of followees and hidden once loaded
	rebuilt   bool
	// snap is what a page of a reader without an inbox answers from: a
	// read of MySQL of the page's size (see pageSnapshot); nil otherwise.
	snap *snapshot
	// posts are the live posts the checks read, by id: the page's posts
	// go out with them, so the API does not load them again.
	posts map[int64]*models.Post
	// early is the page's first inbox read, made in loadState's round
	// trip; mergePass takes it once (takeEarly).
	early *inboxRead
	// following is the version of the followee set the read went by (""
	// when unknown: then nothing is folded). celebs leaves out the
	// celebrities that the inbox holds folded (see fold.go).
	following string
}

// inboxRead is the inbox read a page will start with, queued early: in the
// round trip that loads the reader's state (loadState), so that a warm
// page in push mode reads its inbox without a round trip of its own, and a
// hybrid one with only its celebrities' outboxes left to read. It is kept
// only when that state found the inbox.
type inboxRead struct {
	older bool
	bound int64
	want  int
	// lookups are the posts looked up in the inbox with the page: in
	// hybrid mode, those the first merge round will want (outbox.Outboxes.GuessLookups).
	lookups []int64
	cmd     *redis.Cmd
}

// earlyRead is the inbox read that a page of args starts with (see
// paginate and mergePass), or nil when args are bad (paginate says why).
func earlyRead(args paging.PageArgs, kind paging.CursorKind) *inboxRead {
	w, err := args.Window(kind)
	if err != nil {
		return nil
	}
	dir, bound, limit := w.FirstFetch()
	return &inboxRead{older: dir == store.Older, bound: bound, want: readWant(limit, 0)}
}

// takeEarly is the early read's command, and the posts it looked up, when
// it is the read asked for, once; nil otherwise.
func (r *readState) takeEarly(older bool, bound int64, want int) (*redis.Cmd, []int64) {
	early := r.early
	if early == nil || early.older != older || early.bound != bound || early.want != want {
		return nil, nil
	}
	r.early = nil
	return early.cmd, early.lookups
}

// readWant is how many entries a merge pass asks each source for, having
// emitted some of limit: a margin over what is missing, since entries may
// be dropped (deleted, unfollowed) or merged (one post from two sources).
func readWant(limit, emitted int) int { return limit - emitted + limit/2 + 4 }

// loadState makes sure the readState has an inbox and finds the celebrities
// they follow. A warm read learns all of it in one round trip: the state
// of the reader's own keys (the inbox's existence and, unless it is large,
// the whole followee set, or only its version when this instance's copy of
// the set is at it) in one script on their slot, pipelined with the
// celebrity set and the reader's own Redis copy (on the same slot), whose
// read marker the unread count needs; self is nil when that copy is
// missing.
func (reads *Reads) loadState(ctx context.Context, viewer int64, early *inboxRead) (*readState, *models.User, error) {
	r := &readState{id: viewer, posts: map[int64]*models.Post{}}
	// The marks as they are before the inbox is read: a fold that ends
	// after the read below began may have written what that read missed.
	marks := reads.inboxes.marks(viewer)
	pipe := reads.d.Redis.Pipeline()
	state := reads.inboxes.queueState(ctx, pipe, viewer)
	held := state.Held
	if early != nil {
		early.lookups = reads.outboxes.GuessLookups(held.IDs, early.older, early.bound, early.want, func(celeb int64, c *outbox.Copy) bool {
			return marks.holds(celeb, held.Version, c)
		})
		early.cmd = reads.inboxes.queueRead(ctx, pipe, viewer, early.older, early.bound, early.want, early.lookups)
	}
	var members *redis.StringSliceCmd
	if reads.d.Cfg.Mode == config.ModeHybrid {
		members = pipe.SMembers(ctx, reads.d.Keys.Celebrities())
	}
	info, counts := pipe.Get(ctx, reads.d.Keys.CachedUserInfo(viewer)), pipe.Get(ctx, reads.d.Keys.CachedUserCounts(viewer))
	pipe.Exec(ctx) // each command's own error is looked at below
	self, err := cache.DecodeUser(viewer, info, counts)
	if err != nil {
		self = nil // missing or unreadable: the unread count reads it apart
	}
	if members != nil && members.Err() != nil {
		return nil, nil, redisx.Fail(members.Err())
	}
	hasInbox, set, err := reads.inboxes.finishState(ctx, state)
	if err != nil {
		return nil, nil, redisx.Fail(err)
	}
	var celebs []int64
	if hasInbox && early != nil {
		r.early = early
	}
	if !hasInbox && early != nil {
		// Cold, for a page: answer from MySQL, the newest entries for a
		// first page (a window as big as an inbox's for a page from a
		// cursor), and rebuild the inbox after, in the background.
		n := reads.d.Cfg.InboxCap
		if early.older && early.bound == math.MaxInt64 {
			n = early.want
		}
		snap, err := reads.inboxes.pageSnapshot(ctx, viewer, n)
		if err != nil {
			return nil, nil, err
		}
		reads.inboxes.rebuildLater(viewer)
		r.snap, r.rebuilt = snap, true
		r.followees, r.hidden = slices.Sorted(slices.Values(snap.followees)), slices.Sorted(slices.Values(snap.hidden))
		r.loaded, r.view = true, &snap.view
		return r, self, nil
	}
	if !hasInbox {
		// Cold: rebuild (with the followee set), then read the celebrity
		// set the rebuild went by, and the followee set it swapped in.
		if r.rebuilt, err = reads.inboxes.Ensure(ctx, viewer); err != nil {
			return nil, nil, redisx.Fail(err)
		}
		if celebs, err = reads.outboxes.Celebrities(ctx); err != nil {
			return nil, nil, redisx.Fail(err)
		}
		reads.outboxes.Remember(celebs)
		if _, set, err = reads.inboxes.rereadState(ctx, state); err != nil {
			return nil, nil, redisx.Fail(err)
		}
	} else if members != nil {
		if celebs, err = reads.outboxes.CelebritiesFrom(ctx, members.Val()); err != nil {
			return nil, nil, redisx.Fail(err)
		}
		reads.outboxes.Remember(celebs)
	}
	switch set.State {
	case FollowingUnchanged:
		reads.d.Metrics.FollowingUnchanged.Inc()
		r.followees, r.hidden, r.loaded = held.IDs, held.Hidden, true
		r.following = held.Version
	case FollowingWhole:
		reads.d.Metrics.FollowingSent.Inc()
		r.followees, r.hidden, r.loaded = set.IDs, set.Hidden, true
		r.following = set.Version
		reads.inboxes.keepFolloweeCopy(viewer, FolloweeCopy{Version: set.Version, IDs: set.IDs, Hidden: set.Hidden})
	case FollowingMissing:
		if r.followees, r.hidden, err = reads.inboxes.restoreFollowing(ctx, viewer); err != nil {
			return nil, nil, err
		}
		r.loaded = true
	}
	if len(celebs) > 0 {
		counted, _, err := r.sight(ctx, reads, celebs)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range celebs {
			if counted[c] {
				r.celebs = append(r.celebs, c)
			}
		}
	}
	if len(r.celebs) > 0 && reads.inboxes.folds != nil && r.following != "" {
		copies, err := reads.outboxes.Copies(ctx, r.celebs)
		if err != nil {
			return nil, nil, redisx.Fail(err)
		}
		r.celebs = marks.unfolded(r.following, r.celebs, copies)
	}
	return r, self, nil
}

// sight returns which of ids the reader's feed counts through (followed,
// not hidden) and which it hides: from the followee set read whole, else
// from the set (one round trip), else from MySQL.
func (r *readState) sight(ctx context.Context, x *Reads, ids []int64) (counted, hidden map[int64]bool, err error) {
	if r.loaded {
		v := r.feedView()
		counted = make(map[int64]bool, len(ids))
		if len(v.Hidden) > 0 {
			hidden = map[int64]bool{}
		}
		for _, id := range ids {
			switch {
			case v.Hides(id):
				hidden[id] = true
			case v.Counts(id):
				counted[id] = true
			}
		}
		return counted, hidden, nil
	}
	return x.inboxes.Sight(ctx, r.id, ids)
}

// feedView is the loaded followees and hidden users as a View: the
// followees themselves (sorted, and only read) when none is hidden.
func (r *readState) feedView() pull.View {
	if r.view == nil {
		v := pull.View{Followees: r.followees}
		if len(r.hidden) > 0 {
			v = pull.NewView(r.followees, r.hidden)
		}
		r.view = &v
	}
	return *r.view
}

// allFollowees is the reader's view whole, from MySQL when the followee
// set was too large to read.
func (r *readState) allFollowees(ctx context.Context, x *Reads) (pull.View, error) {
	if !r.loaded {
		followees, hidden, err := x.d.Store.FeedView(x.rep.AllowLag(ctx, r.id), r.id)
		if err != nil {
			return pull.View{}, err
		}
		slices.Sort(followees)
		slices.Sort(hidden)
		r.followees, r.hidden, r.loaded = followees, hidden, true
	}
	return r.feedView(), nil
}

// candidate is an original post seen while merging, with the sources that
// may have brought it.
type candidate struct {
	post     int64
	inInbox  bool
	score    int64    // its inbox score
	recorded []Source // its inbox sources; User 0 stands for its author
	celeb    []Source // celebrity arrivals seen in outboxes
}

// fromInbox records that c is in the inbox as it: at its score, brought
// by its sources there (none stands for its author alone).
func (c *candidate) fromInbox(it InboxItem) {
	c.inInbox, c.score, c.recorded = true, it.Score, it.Sources
	if c.recorded == nil {
		c.recorded = []Source{{User: 0, Event: it.PostID}}
	}
}

// fetchMerged reads up to limit entries beyond bound in direction dir:
// from the cached window, and from MySQL below it.
func (reads *Reads) fetchMerged(ctx context.Context, r *readState, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
	if r.snap != nil {
		return reads.fetchSnapshot(ctx, r, dir, bound, limit)
	}
	var (
		merged    []pull.Entry
		window    int64
		reordered bool
		err       error
	)
	for pass := 1; pass == 1 || (reordered && pass <= readMaxPasses); pass++ {
		if merged, window, reordered, err = reads.mergePass(ctx, r, dir, bound, limit); err != nil {
			return nil, err
		}
	}
	return reads.withBelow(ctx, r.id, func(ctx context.Context) (pull.View, error) { return r.allFollowees(ctx, reads) }, merged, window, dir, bound, limit)
}

// withBelow completes the entries beyond bound that a cached window (keys
// at or above floor) gave, up to limit, with MySQL's below the window, read
// through the reader's view: older pages continue below it, newer pages
// that start below it take MySQL's part first, then the window's. A floor
// of 0 says MySQL has nothing older than the window holds.
func (reads *Reads) withBelow(ctx context.Context, reader int64, view func(context.Context) (pull.View, error), window []pull.Entry, floor int64, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
	if floor == 0 || limit == 0 {
		return window, nil
	}
	older := dir == store.Older
	if (older && len(window) == limit) || (!older && bound >= floor) {
		return window, nil
	}
	v, err := view(ctx)
	if err != nil {
		return nil, err
	}
	ctx = reads.rep.AllowLag(ctx, reader)
	if older {
		rest, err := reads.pull.Entries(ctx, v, dir, min(bound, floor), limit-len(window))
		return append(window, rest...), err
	}
	below, err := reads.pull.Entries(ctx, v, dir, bound, limit)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(below, func(en pull.Entry) bool { return en.Key >= floor }); i >= 0 {
		below = below[:i]
	}
	out := append(below, window...)
	return out[:min(len(out), limit)], nil
}

// mergePass is one attempt of fetchMerged; reordered says a repair moved an
// entry into the range this pass already read, so it must be read again.
// Each round reads the sources beyond bound, places their candidates and
// emits those in the part of the window every source covered, until the
// page is full or the window is read to its end.
func (reads *Reads) mergePass(ctx context.Context, r *readState, dir store.Direction, bound int64, limit int) (out []pull.Entry, window int64, reordered bool, err error) {
	older := dir == store.Older
	start := bound
	var emitted []pull.Entry
	for len(emitted) < limit {
		want := readWant(limit, len(emitted))
		src, err := reads.readRound(ctx, r, older, bound, want)
		if errors.Is(err, errNoInbox) {
			// Expired between reads: rebuild and read again.
			if _, err := reads.inboxes.Ensure(ctx, r.id); err != nil {
				return nil, 0, false, redisx.Fail(err)
			}
			continue
		}
		if err != nil {
			return nil, 0, false, err
		}
		rd := src.gather(r, older, bound, want)
		window = rd.window
		rd.dropUnreachable(src, older, bound)
		if err := reads.complete(ctx, r, src, rd); err != nil {
			return nil, 0, false, err
		}
		positions, repairs, err := reads.placeCandidates(ctx, r, rd.cands, window)
		if err != nil {
			return nil, 0, false, err
		}
		if len(repairs) > 0 {
			if _, err := reads.inboxes.Apply(ctx, repairs); err != nil {
				return nil, 0, false, redisx.Fail(err)
			}
		}
		lo, hi := rd.covered(older, bound)
		for id, en := range positions {
			c, pos := rd.cands[id], en.Key
			if c.inInbox && pos != c.score && inRange(pos, start, bound, older) {
				reordered = true // a repair moved it into what this pass already read
			}
			if pos >= window && ((older && pos < bound && pos >= lo) || (!older && pos > bound && pos <= hi)) {
				emitted = append(emitted, en)
			}
		}
		sortEntries(emitted, older)
		if !rd.full || (older && lo == window) {
			// Every source ran dry, or (paging older) the round reached the
			// window's floor: the window is read to its end, and what lies
			// below it is MySQL's. A source that holds more below the floor
			// (an inbox reaching further down than a celebrity's outbox)
			// must not send the next round back to the same floor.
			break
		}
		next := hi
		if older {
			next = lo
		}
		if (older && next >= bound) || (!older && next <= bound) {
			// The sources answered nothing beyond the bound: another round
			// would read the same one. Return what this pass has.
			reads.d.Metrics.NoProgress.WithLabelValues(metrics.NoProgressMerge).Inc()
			reads.d.Log.WarnContext(ctx, "feed merge made no progress", "reader", r.id, "bound", bound, "window", window)
			break
		}
		bound = next
	}
	if len(emitted) > limit {
		emitted = emitted[:limit]
	}
	return emitted, window, reordered, nil
}

// sources is what one merge round read beyond its bound: the followed
// celebrities' outbox copies (by celebrity, and in the order of
// readState.celebs), and the inbox page with the posts it was asked to
// look up beside it.
type sources struct {
	copies   map[int64]*outbox.Copy
	outboxes []*outbox.Copy
	page     inboxPage
	asked    []int64
}

// readRound reads a round's sources: the followed celebrities' outboxes,
// from this instance's copies (see outbox/copies.go); then the inbox,
// with the posts those hold looked up in it, in one round trip: the early
// one when loadState made it, with the posts it guessed. A missing inbox
// is errNoInbox; another failure is Redis's (redisx.Error).
func (reads *Reads) readRound(ctx context.Context, r *readState, older bool, bound int64, want int) (sources, error) {
	copies, err := reads.outboxes.Copies(ctx, r.celebs)
	if err != nil {
		return sources{}, redisx.Fail(err)
	}
	src := sources{copies: copies, outboxes: make([]*outbox.Copy, len(r.celebs))}
	var lookups []int64
	for k, celeb := range r.celebs {
		if src.outboxes[k] = copies[celeb]; src.outboxes[k] == nil {
			return sources{}, redisx.Fail(fmt.Errorf("no outbox of %d", celeb))
		}
		for _, it := range src.outboxes[k].Page(older, bound, want) {
			lookups = append(lookups, it.OriginalID)
		}
	}
	lookups = uniq(lookups)
	inboxCmd, asked := r.takeEarly(older, bound, want)
	if inboxCmd != nil {
		src.page, err = reads.inboxes.finishRead(ctx, inboxCmd, r.id, older, bound, want, asked)
	} else {
		asked = lookups
		src.page, err = reads.inboxes.readPage(ctx, r.id, older, bound, want, asked)
	}
	src.asked = asked
	if err != nil && !errors.Is(err, errNoInbox) {
		err = redisx.Fail(err)
	}
	return src, err
}

// round is what a merge round made of its sources: the candidates, the
// window (the highest floor of the sources), and how far every source has
// fully given: edge, the far end of it, when full (a source that filled its
// quota may hold more beyond its last item).
type round struct {
	cands  map[int64]*candidate
	window int64
	edge   int64
	full   bool
}

// gather collects the candidates of a round's sources.
func (src sources) gather(r *readState, older bool, bound int64, want int) round {
	rd := round{cands: map[int64]*candidate{}, window: src.page.Floor}
	note := func(n int, last int64) {
		if n < want {
			return
		}
		if !rd.full || (older && last > rd.edge) || (!older && last < rd.edge) {
			rd.edge = last
		}
		rd.full = true
	}
	get := func(id int64) *candidate {
		c := rd.cands[id]
		if c == nil {
			c = &candidate{post: id}
			rd.cands[id] = c
		}
		return c
	}
	var last int64
	for _, it := range src.page.Items {
		get(it.PostID).fromInbox(it)
		last = it.Score
	}
	note(len(src.page.Items), last)
	for k, celeb := range r.celebs {
		floor, items := src.outboxes[k].Floor(), src.outboxes[k].Page(older, bound, want)
		rd.window = max(rd.window, floor)
		for _, it := range items {
			c := get(it.OriginalID)
			c.celeb = append(c.celeb, Source{User: celeb, Event: it.PostID})
			last = it.PostID
		}
		note(len(items), last)
	}
	// A post seen only in an outbox may sit elsewhere in the inbox, with
	// arrivals of its own: the inbox read looked up the posts it was
	// asked to; the others (a guess that missed) are looked up by complete.
	for _, it := range src.page.Looked {
		if c := rd.cands[it.PostID]; c != nil && !c.inInbox {
			c.fromInbox(it)
		}
	}
	return rd
}

// dropUnreachable takes out of the round the candidates it cannot emit,
// before their checks cost anything: those that only the celebrities'
// outboxes brought (not in the inbox page), that the inbox read looked up,
// that lie in the window, and whose every arrival known (their outbox
// arrivals, their inbox score and sources, the post itself) lies beyond
// the part of the window the round covers. A hybrid page's outboxes give
// readWant posts each, most of them beyond the inbox page's reach; the
// page's checks (the posts' copies, the sources' users) were made for all
// of them. Any arrival within the covered part would be known: each source
// gave all it holds there. So such a candidate's place is beyond it, and
// the round emits only what lies within; a later round, whose bound is
// the far end of this one's, reads it again. A round whose sources all ran
// dry covers the window to its end and drops nothing.
func (rd round) dropUnreachable(src sources, older bool, bound int64) {
	if !rd.full || len(src.asked) == 0 {
		return // nothing beyond reach, or nothing looked up (push mode)
	}
	lo, hi := rd.covered(older, bound)
	beyond := func(key int64) bool { return (older && key < lo) || (!older && key > hi) }
	inPage := make(map[int64]bool, len(src.page.Items))
	for _, it := range src.page.Items {
		inPage[it.PostID] = true
	}
	for id, c := range rd.cands {
		if inPage[id] || id < rd.window || !beyond(id) {
			continue
		}
		if _, asked := slices.BinarySearch(src.asked, id); !asked {
			continue // complete looks it up
		}
		if c.inInbox && !beyond(c.score) {
			continue
		}
		if slices.ContainsFunc(c.recorded, func(s Source) bool { return !beyond(s.Event) }) ||
			slices.ContainsFunc(c.celeb, func(s Source) bool { return !beyond(s.Event) }) {
			continue
		}
		delete(rd.cands, id)
	}
}

// complete looks up in the inbox the candidates the round's inbox read was
// not asked about, and adds the celebrities' reposts of the candidates in
// the window that their outboxes did not show in this range: they may be
// earlier arrivals, found in the copies (the candidates below the window
// are placed from MySQL, see exactPositions).
func (reads *Reads) complete(ctx context.Context, r *readState, src sources, rd round) error {
	var unseen, inWindow []int64
	for id, c := range rd.cands {
		if !c.inInbox {
			if _, ok := slices.BinarySearch(src.asked, id); !ok {
				unseen = append(unseen, id)
			}
		}
		if len(r.celebs) > 0 && id >= rd.window {
			inWindow = append(inWindow, id)
		}
	}
	if len(unseen) > 0 {
		pipe := reads.d.Redis.Pipeline()
		lookup := reads.inboxes.lookup(ctx, pipe, r.id, unseen)
		pipe.Exec(ctx) // each command's own error is looked at below
		known, err := lookup()
		if err != nil {
			return redisx.Fail(err)
		}
		for _, it := range known {
			rd.cands[it.PostID].fromInbox(it)
		}
	}
	arrivals, err := reads.copiedReposts(ctx, src.copies, r.celebs, inWindow)
	if err != nil {
		return err
	}
	for id, list := range arrivals {
		if c := rd.cands[id]; c != nil {
			c.celeb = append(c.celeb, list...)
		}
	}
	return nil
}

// copiedReposts is celebrities' reposts of originals answered from the
// copies of the celebrities' outboxes a read merged, without a round trip;
// an outbox whose copy's floor lies above the lowest original is MySQL's to
// answer.
func (reads *Reads) copiedReposts(ctx context.Context, copies map[int64]*outbox.Copy, celebs, originals []int64) (map[int64][]Source, error) {
	if len(celebs) == 0 || len(originals) == 0 {
		return nil, nil
	}
	lowest := slices.Min(originals)
	wanted := make(map[int64]bool, len(originals))
	for _, o := range originals {
		wanted[o] = true
	}
	out := map[int64][]Source{}
	var fromMySQL []int64
	for _, c := range celebs {
		found, ok := copies[c].Reposts(lowest, wanted)
		if !ok {
			fromMySQL = append(fromMySQL, c)
			continue
		}
		for _, it := range found {
			out[it.OriginalID] = append(out[it.OriginalID], Source{User: c, Event: it.PostID})
		}
	}
	if len(fromMySQL) == 0 {
		return out, nil
	}
	reposts, err := reads.d.Store.Reposts(ctx, fromMySQL, originals)
	if err != nil {
		return nil, err
	}
	for _, rp := range reposts {
		out[*rp.RepostOfID] = append(out[*rp.RepostOfID], Source{User: rp.AuthorID, Event: rp.ID})
	}
	return out, nil
}

// covered is the part of the window a round covered: up to its edge, or
// all of it when every source ran dry.
func (rd round) covered(older bool, bound int64) (lo, hi int64) {
	lo, hi = rd.window, bound
	if !older {
		lo, hi = bound, math.MaxInt64
	}
	if rd.full {
		if older {
			lo = max(rd.edge, rd.window)
		} else {
			hi = rd.edge
		}
	}
	return lo, hi
}

// inRange says whether pos lies between start and the current bound, the
// part of the feed a pass has already read.
func inRange(pos, start, bound int64, older bool) bool {
	if older {
		return pos < start && pos >= bound
	}
	return pos > start && pos <= bound
}

func sortEntries(es []pull.Entry, older bool) {
	slices.SortFunc(es, func(a, b pull.Entry) int {
		if older {
			return cmp.Compare(b.Key, a.Key)
		}
		return cmp.Compare(a.Key, b.Key)
	})
}

// placeCandidates finds each candidate's place in the reader's feed: its
// earliest live arrival from a source the reader's feed still counts
// through. Candidates that no longer belong get none: among them every post
// whose author the feed hides. It also returns the inbox repairs that take
// stale sources out. A hidden user's arrival is passed over, not repaired:
// the block or mute that hid it reset the inbox, so it can only be one that
// raced it, and a repair could outlive an unmute that came meanwhile.
func (reads *Reads) placeCandidates(ctx context.Context, r *readState, cands map[int64]*candidate, window int64) (map[int64]pull.Entry, []Change, error) {
	positions := map[int64]pull.Entry{}
	if len(cands) == 0 {
		return positions, nil, nil
	}
	live, err := reads.livePosts(ctx, r, cands)
	if err != nil {
		return nil, nil, err
	}
	followed, hidden, err := r.sight(ctx, reads, sourceUsers(cands, live, window))
	if err != nil {
		return nil, nil, err
	}
	var repairs []Change
	var older []olderPost // posts older than the window
	for id, c := range cands {
		o := live[id]
		if o == nil {
			if c.inInbox {
				repairs = append(repairs, DropEntry(r.id, id))
			}
			continue
		}
		if hidden[o.AuthorID] {
			continue
		}
		valid, stale := c.validSources(r, o, live, followed, hidden)
		repairs = append(repairs, stale...)
		switch {
		case id < window:
			older = append(older, olderPost{o, valid})
		case len(valid) > 0:
			positions[id] = entryFromSources(id, valid)
		}
	}
	if len(older) > 0 {
		exact, err := reads.exactPositions(ctx, r, older, followed)
		if err != nil {
			return nil, nil, err
		}
		for _, en := range exact {
			positions[en.PostID] = en
		}
	}
	return positions, repairs, nil
}

// livePosts loads the candidates and the events of their sources, and
// returns the live ones by id (which the reader keeps: the page's posts go
// out with them).
func (reads *Reads) livePosts(ctx context.Context, r *readState, cands map[int64]*candidate) (map[int64]*models.Post, error) {
	events := make([]int64, 0, 2*len(cands))
	for id, c := range cands {
		events = append(events, id)
		for _, s := range c.recorded {
			events = append(events, s.Event)
		}
		for _, s := range c.celeb {
			events = append(events, s.Event)
		}
	}
	posts, err := reads.cache.Posts(ctx, uniq(events))
	if err != nil {
		return nil, err
	}
	live := map[int64]*models.Post{}
	for _, p := range posts {
		if p != nil && !p.Deleted() {
			live[p.ID] = p
			r.posts[p.ID] = p
		}
	}
	return live, nil
}

// sourceUsers are the users whose following decides the candidates'
// places: the authors of the live ones, their inbox sources, and, for those
// older than the window, their reposters.
func sourceUsers(cands map[int64]*candidate, live map[int64]*models.Post, window int64) []int64 {
	var users []int64
	for id, c := range cands {
		if o := live[id]; o != nil {
			users = append(users, o.AuthorID)
			if id < window {
				for _, rp := range o.Reposts {
					users = append(users, rp.AuthorID)
				}
			}
		}
		for _, s := range c.recorded {
			users = append(users, s.User)
		}
	}
	return uniq(users)
}

// validSources are the arrivals of candidate c (live post o) that still
// count: the inbox's from users the reader's feed counts through, of live
// events, and the celebrities' of live events; stale are the repairs that
// take the other inbox sources out, but those of hidden users (see
// placeCandidates).
func (c *candidate) validSources(r *readState, o *models.Post, live map[int64]*models.Post, followed, hidden map[int64]bool) (valid []Source, stale []Change) {
	if slices.Contains(r.celebs, o.AuthorID) {
		c.celeb = append(c.celeb, Source{User: o.AuthorID, Event: o.ID})
	}
	for _, s := range c.recorded {
		if s.User == 0 {
			s.User = o.AuthorID
		}
		switch {
		case followed[s.User] && live[s.Event] != nil:
			valid = append(valid, s)
		case hidden[s.User]:
		default:
			stale = append(stale, RemoveSource(r.id, c.post, o.AuthorID, s.User, strconv.FormatInt(s.Event, 10)))
		}
	}
	for _, s := range c.celeb {
		if live[s.Event] != nil {
			valid = append(valid, s)
		}
	}
	return valid, stale
}

// entryFromSources places a post at its earliest source; the others that
// are reposts (every source but the post itself) are its reposters, most
// recent first.
func entryFromSources(post int64, sources []Source) pull.Entry {
	slices.SortFunc(sources, func(a, b Source) int { return cmp.Compare(b.Event, a.Event) })
	sources = slices.CompactFunc(sources, func(a, b Source) bool { return a.Event == b.Event })
	en := pull.Entry{Key: sources[len(sources)-1].Event, PostID: post, Reposters: []int64{}}
	for _, s := range sources {
		if s.Event != post && len(en.Reposters) < config.MaxReposters {
			en.Reposters = append(en.Reposters, s.User)
		}
	}
	return en
}

// olderPost is a candidate older than the window, with the live sources
// from followees that the inbox and the outboxes gave it.
type olderPost struct {
	post  *models.Post
	valid []Source
}

// exactPositions places posts older than the window, whose earliest
// arrival may lie below it, where the inbox keeps none: the post itself
// when its author is followed (then it lies below the window, where MySQL
// serves it), else its first live repost by a followee. That repost, and
// the reposters, come from the list of live reposts that the post's copy
// keeps (see cache/copies.go), checked against the followee set, with the
// sources the read found besides (a repost newer than a copy that has not
// been revalidated yet); the posts that keep no list (reposted more than
// RepostListMax times) are placed from MySQL.
func (reads *Reads) exactPositions(ctx context.Context, r *readState, posts []olderPost, followed map[int64]bool) ([]pull.Entry, error) {
	var out []pull.Entry
	var unlisted []int64
	for _, ep := range posts {
		p := ep.post
		switch {
		case followed[p.AuthorID]:
			out = append(out, pull.Entry{Key: p.ID, PostID: p.ID})
		case p.RepostsKept:
			sources := ep.valid
			for _, rp := range p.Reposts {
				if followed[rp.AuthorID] {
					sources = append(sources, Source{User: rp.AuthorID, Event: rp.ID})
				}
			}
			if len(sources) > 0 {
				out = append(out, entryFromSources(p.ID, sources))
			}
		default:
			unlisted = append(unlisted, p.ID)
		}
	}
	if len(unlisted) == 0 {
		return out, nil
	}
	reads.d.Metrics.RepostListMisses.Add(float64(len(unlisted)))
	first, err := reads.d.Store.FirstRepostsByFollowees(ctx, r.id, unlisted)
	for id, pos := range first {
		out = append(out, pull.Entry{Key: pos, PostID: id})
	}
	return out, err
}

// uniq sorts ids in place and drops the repeats.
func uniq(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}
