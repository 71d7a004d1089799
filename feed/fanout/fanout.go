package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"feedservice/feed/config"
	"feedservice/feed/internal/deps"
	"feedservice/feed/livemsg"
	"feedservice/feed/timeline"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// Fan-out workers read the stream in one consumer group; every instance
// runs Config.FanoutWorkers of them. A worker takes one message at a time,
// so that the tasks of one big fan-out spread over the idle workers instead
// of queueing behind each other in one worker's read. A message is acknowledged only after
// it was handled; one whose worker died stays pending and is claimed by
// another worker after ClaimAfter (XAUTOCLAIM). Handling a message
// twice changes nothing: each inbox change is idempotent.
const (
	Group            = "fanout"
	fanoutReadCount  = 1
	fanoutBlock      = time.Second
	fanoutClaimEvery = time.Second
)

// ClaimAfter is how long a message may stay unacknowledged before
// another worker takes it over (see claimAfter).
const ClaimAfter = 15 * time.Second

// claimAfter is ClaimAfter, or the engine's own when set
// (deps.Deps.FanoutClaimAfter, which tests shorten).
func (st *Stream) claimAfter() time.Duration {
	if st.d.FanoutClaimAfter > 0 {
		return st.d.FanoutClaimAfter
	}
	return ClaimAfter
}

// TaskKind is the stream kind of a fan-out Task (the other kinds are the
// outbox events' own).
const TaskKind = "task"

// Task operations.
const (
	OpAdd      = "add"      // add Source to entry Post (author Author)
	OpRemove   = "remove"   // take User's arrivals out of entry Post
	OpDrop     = "drop"     // take entry Post out (deleted)
	OpBackfill = "backfill" // add User's recent posts (a celebrity became ordinary)
)

// Task is one inbox change for a batch of at most FanoutBatchSize readers.
type Task struct {
	Op      string  `json:"op"`
	Post    int64   `json:"post,omitempty"`   // the original post of the entry
	Author  int64   `json:"author,omitempty"` // its author
	User    int64   `json:"user"`             // the user whose followers these readers are
	Event   int64   `json:"event,omitempty"`  // the post or repost that brought the entry
	Readers []int64 `json:"readers"`
}

// runWorker reads and handles stream messages until ctx ends. After a
// message failed or a read did (Redis away, a failover), the worker first
// takes its own unacknowledged messages again (retryOwn), after
// fanoutRetryPause, instead of leaving them to ClaimAfter: a
// failover fails the messages in hand on every worker at once, and a
// promoted replica may lack the acknowledgements of the last ones handled.
func (st *Stream) runWorker(ctx context.Context, consumer string) {
	lastClaim := time.Time{}
	retries := 0 // passes over its own pending messages still to make
	for ctx.Err() == nil {
		if retries > 0 {
			deps.Pause(ctx, fanoutRetryPause)
			switch st.retryOwn(ctx, consumer) {
			case retryDone:
				retries = 0
			case retryFailed:
				retries--
			case retryUnread: // Redis still away: no pass made
			}
			continue
		}
		if time.Since(lastClaim) > fanoutClaimEvery {
			lastClaim = time.Now()
			st.claimStale(ctx, consumer)
		}
		streams, err := st.d.Redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: Group, Consumer: consumer, Streams: []string{st.d.Keys.Stream(), ">"},
			Count: fanoutReadCount, Block: fanoutBlock,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil && redis.HasErrorPrefix(err, "NOGROUP"):
			st.EnsureGroup(ctx)
			continue
		case err != nil:
			if ctx.Err() == nil {
				st.d.Log.Warn("read fan-out stream", "err", err)
				retries = fanoutRetryPasses
			}
			continue
		}
		for _, s := range streams {
			if st.handleMessages(ctx, s.Messages) > 0 {
				retries = fanoutRetryPasses
			}
		}
	}
}

// fanoutRetryPause is how long a worker waits before it takes its failed
// messages again: about the time a Redis Cluster client needs to learn
// the new master of a slot (the server reloads its Cluster state at most once a second).
const fanoutRetryPause = 250 * time.Millisecond

// fanoutRetryPasses is how many passes over its own pending messages a
// worker makes, fanoutRetryPause apart, while one keeps failing; a message
// that fails in all of them is left to claimStale (after
// ClaimAfter), so that it does not hold the worker up.
const fanoutRetryPasses = 8

// What a pass of retryOwn did.
const (
	retryDone   = iota // every pending message handled (or none pending)
	retryFailed        // a message failed again
	retryUnread        // the pending messages could not be read
)

// retryOwn handles once each message the consumer was given and did not
// acknowledge (its entries in the group's pending list), oldest first.
func (st *Stream) retryOwn(ctx context.Context, consumer string) int {
	outcome := retryDone
	for start := "0"; ctx.Err() == nil; {
		streams, err := st.d.Redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: Group, Consumer: consumer, Streams: []string{st.d.Keys.Stream(), start},
			Count: fanoutRetryCount, Block: -1, // history: answered at once, never blocks
		}).Result()
		if err != nil {
			if errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "NOGROUP") {
				return outcome // nothing (more) pending: the stream or the group is new
			}
			// Still away: the read that failed first said so.
			st.d.Log.Debug("read own pending fan-out messages", "err", err)
			return retryUnread
		}
		n := 0
		for _, s := range streams {
			var msgs []redis.XMessage
			for _, m := range s.Messages {
				if m.Values != nil { // nil: trimmed from the stream, nothing to do
					msgs = append(msgs, m)
				} else {
					st.d.Redis.XAck(ctx, st.d.Keys.Stream(), Group, m.ID)
				}
				start = m.ID
				n++
			}
			if st.handleMessages(ctx, msgs) > 0 {
				outcome = retryFailed
			}
		}
		if n < fanoutRetryCount {
			return outcome
		}
	}
	return outcome
}

// fanoutRetryCount is how many pending messages retryOwn reads at a time.
const fanoutRetryCount = 16

// EnsureGroup creates the stream and its consumer group if they are missing
// (at start, and after Redis lost its data).
func (st *Stream) EnsureGroup(ctx context.Context) {
	err := st.d.Redis.XGroupCreateMkStream(ctx, st.d.Keys.Stream(), Group, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") && ctx.Err() == nil {
		st.d.Log.Warn("create fan-out consumer group", "err", err)
	}
}

// claimStale takes over messages another worker left unacknowledged.
func (st *Stream) claimStale(ctx context.Context, consumer string) {
	msgs, _, err := st.d.Redis.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: st.d.Keys.Stream(), Group: Group, Consumer: consumer,
		MinIdle: st.claimAfter(), Start: "0-0", Count: fanoutReadCount,
	}).Result()
	if err == nil && len(msgs) > 0 {
		st.handleMessages(ctx, msgs)
	}
}

// handleMessages handles msgs in order and returns how many failed.
func (st *Stream) handleMessages(ctx context.Context, msgs []redis.XMessage) int {
	failed := 0
	for _, m := range msgs {
		if ctx.Err() != nil {
			// Stopping: the messages not begun stay pending, and another
			// instance's worker (or this one's next start) claims them.
			return failed
		}
		if err := st.handleMessage(ctx, m); err != nil {
			failed++
			st.d.Metrics.HandlerFailure.Inc()
			if ctx.Err() == nil {
				st.d.Log.Warn("fan-out message failed; it will be retried", "id", m.ID, "err", err)
			}
		}
	}
	return failed
}

// fanoutFinishTimeout is how long a stopping worker may still take to
// finish the message it began.
const fanoutFinishTimeout = 5 * time.Second

// handleMessage carries out one message and acknowledges it. A message
// begun is finished even when the engine stops meanwhile (within
// fanoutFinishTimeout), so that a clean stop leaves no message for another
// worker to wait ClaimAfter for.
func (st *Stream) handleMessage(ctx context.Context, m redis.XMessage) error {
	finishing, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(fanoutFinishTimeout, cancel) })
	defer stop()
	ctx = finishing
	kind, _ := m.Values["kind"].(string)
	payload, _ := m.Values["payload"].(string)
	ctx, span := st.startMessageSpan(ctx, m, kind)
	defer span.End()
	if err := st.handle(ctx, kind, payload); err != nil {
		failSpan(span, err)
		var u unreadable
		if !errors.As(err, &u) {
			return fmt.Errorf("%s: %w", kind, err)
		}
		st.d.Metrics.EventsDropped.WithLabelValues(droppedKind(kind)).Inc()
		st.d.Log.Warn("fan-out message dropped: no handler can read it", "id", m.ID, "kind", kind, "err", err, "payload", truncate(payload, 200))
		return st.d.Redis.XAck(ctx, st.d.Keys.Stream(), Group, m.ID).Err()
	}
	st.d.Metrics.EventsHandled.WithLabelValues(kind).Inc()
	return st.d.Redis.XAck(ctx, st.d.Keys.Stream(), Group, m.ID).Err()
}

// truncate is s cut to at most n bytes, for a log line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// handle carries out one stream message.
func (st *Stream) handle(ctx context.Context, kind, payload string) error {
	if kind == TaskKind {
		var t Task
		if err := decode(payload, &t); err != nil {
			return err
		}
		return st.RunTask(ctx, t)
	}
	// Each event first refreshes the Redis copies of the rows it changed:
	// the mutation did so before it answered, unless its process died
	// between the commit and the refresh (see package cache).
	switch kind {
	case models.EventPostCreated, models.EventPostDeleted:
		var p models.PostEventPayload
		if err := decode(payload, &p); err != nil {
			return err
		}
		posts := []int64{p.PostID}
		if p.RepostOfID != nil {
			posts = append(posts, *p.RepostOfID)
		}
		if err := st.cache.RefreshCopies(ctx, []int64{p.AuthorID}, posts); err != nil {
			return err
		}
		if kind == models.EventPostCreated {
			return st.onPostCreated(ctx, p)
		}
		return st.onPostDeleted(ctx, p)
	case models.EventFollowed, models.EventUnfollowed, models.EventFollowerRemoved:
		var f models.FollowEventPayload
		if err := decode(payload, &f); err != nil {
			return err
		}
		if err := st.cache.RefreshCopies(ctx, []int64{f.FollowerID, f.FolloweeID}, nil); err != nil {
			return err
		}
		follows, err := st.d.Store.Follows(ctx, f.FollowerID, f.FolloweeID)
		if err != nil {
			return err
		}
		if err := st.inboxes.SettleFollowing(ctx, f.FollowerID, f.FolloweeID, follows); err != nil {
			return err
		}
		if err := st.jumps.SettleRelationLists(ctx, f.FollowerID, f.FolloweeID); err != nil {
			return err
		}
		if kind == models.EventFollowed {
			return st.OnFollowed(ctx, f)
		}
		// The followee left the follower's lists: the engine dropped their
		// copy after the commit, and this again, for a process that died
		// in between (and, on the sharded layout, a relayed half).
		if err := st.lists.Changed(ctx, f.FollowerID); err != nil {
			return err
		}
		return st.OnUnfollowed(ctx, f)
	case models.EventBlocked, models.EventUnblocked:
		var b models.BlockEventPayload
		if err := decode(payload, &b); err != nil {
			return err
		}
		if kind == models.EventBlocked {
			// The follows it ended left both users' lists (see above).
			if err := st.lists.Changed(ctx, b.BlockerID, b.BlockedID); err != nil {
				return err
			}
		}
		return st.onHidingChanged(ctx, Hiding{Actor: b.BlockerID, Other: b.BlockedID, Block: true})
	case models.EventMuted, models.EventUnmuted:
		var m models.MuteEventPayload
		if err := decode(payload, &m); err != nil {
			return err
		}
		return st.onHidingChanged(ctx, Hiding{Actor: m.MuterID, Other: m.MutedID})
	case models.EventUserChanged:
		var u models.UserEventPayload
		if err := decode(payload, &u); err != nil {
			return err
		}
		if err := st.cache.RefreshCopies(ctx, []int64{u.UserID}, nil); err != nil {
			return err
		}
		return st.approveWaitingRequests(ctx, u.UserID)
	}
	return unreadable{errors.New("no handler for this kind")}
}

// approveWaitingRequests approves every request to follow user that waits
// while user is not protected: they turned protection off. The engine
// approves them after that change's commit, and this handler of its
// user_changed event again, so that a process that died in between leaves
// none waiting. Each approval commits the follow with its own followed
// event, which does the rest of a follow (inboxes, sets, copies).
func (st *Stream) approveWaitingRequests(ctx context.Context, user int64) error {
	requesters, err := st.d.Store.FollowRequesterIDs(ctx, user)
	if err != nil || len(requesters) == 0 {
		return err
	}
	u, err := st.d.Store.UserByID(ctx, user)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || u.IsProtected {
		return err
	}
	for _, r := range requesters {
		if _, err := st.d.Store.ApproveFollowRequest(ctx, user, r, st.d.IDs.Next(), st.d.Now().UTC()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	st.Poke() // the approvals' followed events
	return nil
}

// unreadable is a stream message that no handler can read: a payload that
// does not decode, or a kind this version does not know. Retrying cannot
// help, so handleMessage acknowledges it, with a warning and a count
// (feed_events_dropped_total), rather than retry it for ever.
type unreadable struct{ err error }

func (u unreadable) Error() string { return "unreadable message: " + u.err.Error() }
func (u unreadable) Unwrap() error { return u.err }

// decode reads a message's JSON payload into v; what does not decode is
// unreadable.
func decode(payload string, v any) error {
	if err := json.Unmarshal([]byte(payload), v); err != nil {
		return unreadable{err}
	}
	return nil
}

// onPostCreated adds a post to its author's outbox and, for an ordinary
// author, to the inboxes of the author's followers.
func (st *Stream) onPostCreated(ctx context.Context, ev models.PostEventPayload) error {
	posts, err := st.cache.StoredPosts(ctx, []int64{ev.PostID})
	if err != nil {
		return err
	}
	p := posts[0]
	if p == nil || p.Deleted() {
		return nil // deleted meanwhile: nothing to add
	}
	if err := st.outboxes.Add(ctx, p); err != nil {
		return err
	}
	original, err := st.cache.LivePost(ctx, p.OriginalID())
	if err != nil {
		return ignoreNotFound(err)
	}
	celeb, err := st.outboxes.IsCelebrity(ctx, p.AuthorID)
	if err != nil {
		return err
	}
	if st.d.Cfg.Mode == config.ModePull || celeb {
		// Not fanned out: its readers hear of it on the author's channel.
		st.pub.Publish(ctx, st.d.Keys.AuthorChannel(p.AuthorID), livemsg.Added(livemsg.Add{Post: original.ID, Key: p.ID}))
		return nil
	}
	return st.fanout(ctx, Task{Op: OpAdd, Post: original.ID, Author: original.AuthorID, User: p.AuthorID, Event: p.ID})
}

// onPostDeleted takes a post out of its author's outbox and out of every
// inbox it reached: an original leaves the inboxes of its author's and its
// reposters' followers; a repost is merged out of its original's entry.
func (st *Stream) onPostDeleted(ctx context.Context, ev models.PostEventPayload) error {
	var original int64
	if ev.RepostOfID != nil {
		original = *ev.RepostOfID
	}
	if err := st.outboxes.Remove(ctx, ev.AuthorID, ev.PostID, original); err != nil {
		return err
	}
	st.pub.Publish(ctx, st.d.Keys.AuthorChannel(ev.AuthorID), livemsg.Change())
	if st.d.Cfg.Mode == config.ModePull {
		return nil
	}
	if ev.RepostOfID != nil {
		originals, err := st.cache.StoredPosts(ctx, []int64{*ev.RepostOfID})
		if err != nil || originals[0] == nil {
			return err
		}
		return st.fanout(ctx, Task{Op: OpRemove, Post: originals[0].ID, Author: originals[0].AuthorID, User: ev.AuthorID, Event: ev.PostID})
	}
	reposters, err := st.d.Store.ReposterIDs(ctx, ev.PostID)
	if err != nil {
		return err
	}
	for _, user := range append([]int64{ev.AuthorID}, reposters...) {
		if err := st.fanout(ctx, Task{Op: OpDrop, Post: ev.PostID, User: user}); err != nil {
			return err
		}
	}
	return nil
}

// OnFollowed promotes a followee who became a celebrity, and backfills the
// followee's recent posts into the follower's inbox.
func (st *Stream) OnFollowed(ctx context.Context, ev models.FollowEventPayload) error {
	if err := st.updateCelebrity(ctx, ev.FolloweeID); err != nil {
		return err
	}
	if st.d.Cfg.Mode == config.ModePull {
		return nil
	}
	if celeb, err := st.outboxes.IsCelebrity(ctx, ev.FolloweeID); err != nil || celeb {
		return err // merged at read time
	}
	return st.backfill(ctx, ev.FolloweeID, []int64{ev.FollowerID})
}

// OnUnfollowed takes the former followee's arrivals out of the follower's
// inbox (entries that others also brought stay, at their next arrival),
// and demotes a followee who stopped being a celebrity.
func (st *Stream) OnUnfollowed(ctx context.Context, ev models.FollowEventPayload) error {
	// Whether reads may have folded the followee's posts (a celebrity's,
	// in hybrid mode) is asked before this unfollow can demote them.
	folded := false
	if st.d.Cfg.Mode == config.ModeHybrid {
		var err error
		if folded, err = st.outboxes.IsCelebrity(ctx, ev.FolloweeID); err != nil {
			return err
		}
	}
	if err := st.updateCelebrity(ctx, ev.FolloweeID); err != nil {
		return err
	}
	if st.d.Cfg.Mode == config.ModePull {
		return nil
	}
	still, err := st.d.Store.Follows(ctx, ev.FollowerID, ev.FolloweeID)
	if err != nil || still {
		return err // followed again meanwhile
	}
	if folded {
		// Reads folded the celebrity's posts into the inbox (timeline's
		// fold.go), and a trim may have cut an entry at such an arrival
		// whose next one, a followee's repost, lies above the floor:
		// without the celebrity's arrival it belongs in the inbox, which
		// no longer holds it. The next read rebuilds the inbox.
		return st.inboxes.Reset(ctx, ev.FollowerID)
	}
	posts, originals, err := st.recentPosts(ctx, ev.FolloweeID)
	if err != nil {
		return err
	}
	var changes []timeline.Change
	for _, p := range posts {
		if o := originals[p.OriginalID()]; o != nil {
			changes = append(changes, timeline.RemoveSource(ev.FollowerID, o.ID, o.AuthorID, ev.FolloweeID, "*"))
		}
	}
	_, err = st.inboxes.Apply(ctx, changes)
	return err
}

// backfill adds user's recent posts to the inboxes of readers who follow them.
func (st *Stream) backfill(ctx context.Context, user int64, readers []int64) error {
	following, err := st.d.Store.FollowersAmong(ctx, user, readers)
	if err != nil {
		return err
	}
	posts, originals, err := st.recentPosts(ctx, user)
	if err != nil {
		return err
	}
	var changes []timeline.Change
	for _, r := range readers {
		if !following[r] {
			continue
		}
		if len(posts) == st.d.Cfg.InboxCap {
			// The user has more posts than an inbox holds: the older ones
			// come from MySQL, below the oldest one added here.
			changes = append(changes, timeline.RaiseFloor(r, posts[len(posts)-1].ID))
		}
		for _, p := range posts {
			if o := originals[p.OriginalID()]; o != nil && !o.Deleted() {
				changes = append(changes, timeline.AddSource(r, o.ID, o.AuthorID, timeline.Source{User: user, Event: p.ID}, st.d.Cfg.InboxCap))
			}
		}
	}
	n, err := st.inboxes.Apply(ctx, changes)
	st.d.Metrics.FanoutEntries.Add(float64(n))
	return err
}

// recentPosts loads user's newest live posts (as many as an inbox holds)
// and the originals they stand for, by id.
func (st *Stream) recentPosts(ctx context.Context, user int64) ([]*models.Post, map[int64]*models.Post, error) {
	posts, err := st.d.Store.TimelinePage(ctx, user, store.Older, math.MaxInt64, st.d.Cfg.InboxCap)
	if err != nil {
		return nil, nil, err
	}
	originals := map[int64]*models.Post{}
	var reposted []int64
	for _, p := range posts {
		if p.RepostOfID == nil {
			originals[p.ID] = p
		} else {
			reposted = append(reposted, *p.RepostOfID)
		}
	}
	loaded, err := st.cache.StoredPosts(ctx, reposted)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range loaded {
		if o != nil {
			originals[o.ID] = o
		}
	}
	return posts, originals, nil
}

// fanout runs t for the followers of t.User, in tasks of at most
// FanoutBatchSize readers. It reads the followers from MySQL a batch at a
// time and starts each batch's task as soon as its page is read, in
// parallel with the reading of the next pages (see batchRun), instead of
// reading the whole list first; a new entry's go to the connected readers
// first (see connectedFirst). A list of one batch runs here.
func (st *Stream) fanout(ctx context.Context, t Task) error {
	pages := &followerPages{st: st, user: t.User, bound: math.MaxInt64}
	page, err := pages.next(ctx)
	if err != nil || len(page) == 0 {
		return err
	}
	if !pages.more {
		return st.RunTask(ctx, withReaders(t, page))
	}
	run := st.startBatches(ctx)
	if t.Op == OpAdd {
		err = st.connectedFirst(ctx, t, page, pages, run)
	} else {
		for err == nil && len(page) > 0 {
			run.start(withReaders(t, page), nil)
			page = nil
			if pages.more {
				page, err = pages.next(ctx)
			}
		}
	}
	// The batches begun are waited for even when a page could not be
	// read: the event then fails and is handled again whole.
	if werr := run.wait(); err == nil {
		err = werr
	}
	return err
}

// withReaders is t for readers.
func withReaders(t Task, readers []int64) Task {
	t.Readers = readers
	return t
}

// followerPages reads a user's followers from MySQL, FanoutBatchSize at a
// time, newest follow first.
type followerPages struct {
	st    *Stream
	user  int64
	bound int64 // the follow id the next page starts below
	more  bool  // the last page was full: there may be more
}

// next reads the next page of followers.
func (p *followerPages) next(ctx context.Context) ([]int64, error) {
	size := p.st.d.Cfg.FanoutBatchSize
	page, err := p.st.d.Store.FollowersPage(ctx, p.user, store.Older, p.bound, size)
	if err != nil {
		return nil, err
	}
	p.more = len(page) == size
	if len(page) > 0 {
		p.bound = page[len(page)-1].ID
	}
	readers := make([]int64, len(page))
	for i, r := range page {
		readers[i] = r.UserID
	}
	return readers, nil
}

// batchRun runs the tasks of one fan-out in parallel, up to FanoutWorkers
// at a time on this instance (with those of other events:
// Stream.batches), so that the last reader's red dot does not wait for
// every batch before theirs to pass through the stream one message after
// another. A task that fails goes to the stream, for any worker to retry
// alone; if that append fails too, the event fails and is handled again
// whole (every task is idempotent).
type batchRun struct {
	st      *Stream
	ctx     context.Context
	running sync.WaitGroup
	mu      sync.Mutex
	failed  [][]any // the stream entries of the tasks that failed
}

// startBatches begins the batches of one fan-out.
func (st *Stream) startBatches(ctx context.Context) *batchRun {
	return &batchRun{st: st, ctx: ctx}
}

// start waits until this instance may run one more batch, then runs t in
// a goroutine of its own; done, unless nil, is called when t has ended.
func (r *batchRun) start(t Task, done func()) {
	r.st.batches <- struct{}{}
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		defer func() { <-r.st.batches }()
		if done != nil {
			defer done()
		}
		if err := r.st.runBatch(r.ctx, t); err != nil {
			if r.ctx.Err() == nil {
				r.st.d.Log.Warn("fan-out batch failed; it goes to the stream", "user", t.User, "post", t.Post, "readers", len(t.Readers), "err", err)
			}
			payload, _ := json.Marshal(t)
			r.mu.Lock()
			r.failed = append(r.failed, taskValues(r.ctx, payload))
			r.mu.Unlock()
		}
	}()
}

// wait waits for every task started, and puts those that failed on the
// stream. The event that made them is acknowledged only once a replica
// holds them (see streamappend.go).
func (r *batchRun) wait() error {
	r.running.Wait()
	return r.st.appendStream(r.ctx, r.failed)
}

// runBatch runs one task of a fan-out in this process, in a span and a
// count of a task taken from the stream.
func (st *Stream) runBatch(ctx context.Context, t Task) error {
	ctx, span := ctx, noSpan
	if trace.SpanContextFromContext(ctx).IsSampled() {
		ctx, span = st.tracer().Start(ctx, SpanFanout+TaskKind)
	}
	err := st.RunTask(ctx, t)
	endSpan(span, err)
	if err == nil {
		st.d.Metrics.EventsHandled.WithLabelValues(TaskKind).Inc()
	}
	return err
}

// RunTask applies one Task to its readers' inboxes, pipelined.
func (st *Stream) RunTask(ctx context.Context, t Task) (err error) {
	st.d.Metrics.FanoutTasks.Inc()
	ctx, span := st.startBatchSpan(ctx, t)
	defer func() { endSpan(span, err) }()
	if t.Op == OpBackfill {
		return st.backfill(ctx, t.User, t.Readers)
	}
	if t.Op == OpAdd && t.User == t.Author && t.Event == t.Post {
		// The common case, a new post: the readers who still follow its
		// author and whose feeds do not hide them, in one statement (a
		// block or mute committed after this read still holds: the
		// reader's inbox is reset by it, and reads pass over what the
		// reader's followee set names hidden); then plain commands (see
		// timeline.Deliver).
		got, err := st.d.Store.PostReadersAmong(ctx, t.Author, t.Readers)
		if err != nil {
			return err
		}
		readers := among(t.Readers, got)
		writing, write := st.startInboxWriteSpan(ctx, len(readers))
		n, err := st.inboxes.Deliver(writing, t.Post, t.Author, readers)
		endSpan(write, err)
		st.d.Metrics.FanoutEntries.Add(float64(n))
		return err
	}
	readers := t.Readers
	if t.Op == OpAdd {
		// Only readers who still follow the user get the entry.
		following, err := st.d.Store.FollowersAmong(ctx, t.User, t.Readers)
		if err != nil {
			return err
		}
		readers = among(t.Readers, following)
	}
	changes := make([]timeline.Change, 0, len(readers))
	for _, r := range readers {
		switch t.Op {
		case OpAdd:
			changes = append(changes, timeline.AddSource(r, t.Post, t.Author, timeline.Source{User: t.User, Event: t.Event}, st.d.Cfg.InboxCap))
		case OpRemove:
			changes = append(changes, timeline.RemoveSource(r, t.Post, t.Author, t.User, strconv.FormatInt(t.Event, 10)))
		case OpDrop:
			changes = append(changes, timeline.DropEntry(r, t.Post))
		}
	}
	writing, write := st.startInboxWriteSpan(ctx, len(changes))
	n, err := st.inboxes.Apply(writing, changes)
	endSpan(write, err)
	st.d.Metrics.FanoutEntries.Add(float64(n))
	return err
}

// among returns the readers that are in set, in their order.
func among(readers []int64, set map[int64]bool) []int64 {
	out := make([]int64, 0, len(set))
	for _, r := range readers {
		if set[r] {
			out = append(out, r)
		}
	}
	return out
}

// watchLag refreshes the lag gauges every few seconds.
func (st *Stream) watchLag(ctx context.Context) {
	for ctx.Err() == nil {
		if n, oldest, err := st.d.Store.OutboxLag(ctx); err == nil {
			st.d.Metrics.OutboxLag.Set(float64(n))
			if n > 0 {
				st.d.Metrics.OutboxLagSecs.Set(time.Since(oldest).Seconds())
			} else {
				st.d.Metrics.OutboxLagSecs.Set(0)
			}
		}
		if groups, err := st.d.Redis.XInfoGroups(ctx, st.d.Keys.Stream()).Result(); err == nil {
			for _, g := range groups {
				if g.Name == Group {
					st.d.Metrics.StreamLag.Set(float64(max(g.Lag, 0)))
					st.d.Metrics.StreamPending.Set(float64(g.Pending))
				}
			}
		}
		if n, err := st.d.Redis.XLen(ctx, st.d.Keys.Stream()).Result(); err == nil {
			st.d.Metrics.StreamLength.Set(float64(n)) // on every instance; the dispatcher's trims set it sooner
		}
		deps.Pause(ctx, 5*time.Second)
	}
}

func ignoreNotFound(err error) error {
	if apperr.CodeOf(err) == apperr.CodeNotFound {
		return nil
	}
	return err
}

// updateCelebrity promotes or demotes user after their follower count
// changed. A demoted celebrity's recent posts are fanned out to their
// followers' inboxes, since readers stop merging their outbox.
func (st *Stream) updateCelebrity(ctx context.Context, user int64) error {
	if st.d.Cfg.Mode != config.ModeHybrid {
		return nil
	}
	u, err := st.d.Store.UserByID(ctx, user)
	if err != nil {
		return ignoreNotFound(err)
	}
	celebrity := u.FollowerCount >= st.d.Cfg.CelebrityFollowers
	changed, err := st.outboxes.SetCelebrity(ctx, user, celebrity)
	if err != nil || !changed {
		return err
	}
	st.pub.Publish(ctx, st.d.Keys.CelebritiesChannel(), livemsg.Change())
	if celebrity {
		return nil
	}
	return st.fanout(ctx, Task{Op: OpBackfill, User: user})
}

// droppedKindUnknown is the label a dropped message of a kind no handler
// knows is counted under: one series, whatever kinds a peer writes.
const droppedKindUnknown = "unknown"

// droppedKind is the label of a dropped message of kind: its kind when a
// handler knows it, else droppedKindUnknown.
func droppedKind(kind string) string {
	if kind == TaskKind || slices.Contains(models.EventKinds, kind) {
		return kind
	}
	return droppedKindUnknown
}
