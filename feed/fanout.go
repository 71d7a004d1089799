package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/apperr"
	"feedservice/feed/config"
	"feedservice/feed/inbox"
	"feedservice/feed/internal/deps"
	"feedservice/feed/live"
	"feedservice/models"
	"feedservice/store"
)

// Fan-out workers read the stream in one consumer group; every instance
// runs Config.FanoutWorkers of them. A worker takes one message at a time,
// so that the tasks of one big fan-out spread over the idle workers instead
// of queueing behind each other in one worker's read. A message is acknowledged only after
// it was handled; one whose worker died stays pending and is claimed by
// another worker after fanoutClaimAfter (XAUTOCLAIM). Handling a message
// twice changes nothing: each inbox change is idempotent.
const (
	fanoutGroup      = "fanout"
	fanoutReadCount  = 1
	fanoutBlock      = time.Second
	fanoutClaimEvery = time.Second
)

// fanoutClaimAfter is how long a message may stay unacknowledged before
// another worker takes it over. A variable so tests can shorten it.
var fanoutClaimAfter = 15 * time.Second

// taskKind is the stream kind of a fan-out task (the other kinds are the
// outbox events' own).
const taskKind = "task"

// Task operations.
const (
	opAdd      = "add"      // add Source to entry Post (author Author)
	opRemove   = "remove"   // take User's arrivals out of entry Post
	opDrop     = "drop"     // take entry Post out (deleted)
	opBackfill = "backfill" // add User's recent posts (a celebrity became ordinary)
)

// task is one inbox change for a batch of at most FanoutBatchSize readers.
type task struct {
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
// fanoutRetryPause, instead of leaving them to fanoutClaimAfter: a
// failover fails the messages in hand on every worker at once, and a
// promoted replica may lack the acknowledgements of the last ones handled.
func (e *Engine) runWorker(ctx context.Context, consumer string) {
	lastClaim := time.Time{}
	retries := 0 // passes over its own pending messages still to make
	for ctx.Err() == nil {
		if retries > 0 {
			deps.Pause(ctx, fanoutRetryPause)
			switch e.retryOwn(ctx, consumer) {
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
			e.claimStale(ctx, consumer)
		}
		streams, err := e.redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: fanoutGroup, Consumer: consumer, Streams: []string{e.keys.Stream(), ">"},
			Count: fanoutReadCount, Block: fanoutBlock,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil && redis.HasErrorPrefix(err, "NOGROUP"):
			e.ensureGroup(ctx)
			continue
		case err != nil:
			if ctx.Err() == nil {
				e.log.Warn("read fan-out stream", "err", err)
				retries = fanoutRetryPasses
			}
			continue
		}
		for _, s := range streams {
			if e.handleMessages(ctx, s.Messages) > 0 {
				retries = fanoutRetryPasses
			}
		}
	}
}

// fanoutRetryPause is how long a worker waits before it takes its failed
// messages again: about the time a Redis Cluster client needs to learn
// the new master of a slot (RedisClusterStateReload).
const fanoutRetryPause = 250 * time.Millisecond

// fanoutRetryPasses is how many passes over its own pending messages a
// worker makes, fanoutRetryPause apart, while one keeps failing; a message
// that fails in all of them is left to claimStale (after
// fanoutClaimAfter), so that it does not hold the worker up.
const fanoutRetryPasses = 8

// What a pass of retryOwn did.
const (
	retryDone   = iota // every pending message handled (or none pending)
	retryFailed        // a message failed again
	retryUnread        // the pending messages could not be read
)

// retryOwn handles once each message the consumer was given and did not
// acknowledge (its entries in the group's pending list), oldest first.
func (e *Engine) retryOwn(ctx context.Context, consumer string) int {
	outcome := retryDone
	for start := "0"; ctx.Err() == nil; {
		streams, err := e.redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: fanoutGroup, Consumer: consumer, Streams: []string{e.keys.Stream(), start},
			Count: fanoutRetryCount, Block: -1, // history: answered at once, never blocks
		}).Result()
		if err != nil {
			if errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "NOGROUP") {
				return outcome // nothing (more) pending: the stream or the group is new
			}
			// Still away: the read that failed first said so.
			e.log.Debug("read own pending fan-out messages", "err", err)
			return retryUnread
		}
		n := 0
		for _, s := range streams {
			var msgs []redis.XMessage
			for _, m := range s.Messages {
				if m.Values != nil { // nil: trimmed from the stream, nothing to do
					msgs = append(msgs, m)
				} else {
					e.redis.XAck(ctx, e.keys.Stream(), fanoutGroup, m.ID)
				}
				start = m.ID
				n++
			}
			if e.handleMessages(ctx, msgs) > 0 {
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

// ensureGroup creates the stream and its consumer group if they are missing
// (at start, and after Redis lost its data).
func (e *Engine) ensureGroup(ctx context.Context) {
	err := e.redis.XGroupCreateMkStream(ctx, e.keys.Stream(), fanoutGroup, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") && ctx.Err() == nil {
		e.log.Warn("create fan-out consumer group", "err", err)
	}
}

// claimStale takes over messages another worker left unacknowledged.
func (e *Engine) claimStale(ctx context.Context, consumer string) {
	msgs, _, err := e.redis.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: e.keys.Stream(), Group: fanoutGroup, Consumer: consumer,
		MinIdle: fanoutClaimAfter, Start: "0-0", Count: fanoutReadCount,
	}).Result()
	if err == nil && len(msgs) > 0 {
		e.handleMessages(ctx, msgs)
	}
}

// handleMessages handles msgs in order and returns how many failed.
func (e *Engine) handleMessages(ctx context.Context, msgs []redis.XMessage) int {
	failed := 0
	for _, m := range msgs {
		if ctx.Err() != nil {
			// Stopping: the messages not begun stay pending, and another
			// instance's worker (or this one's next start) claims them.
			return failed
		}
		if err := e.handleMessage(ctx, m); err != nil {
			failed++
			e.metrics.HandlerFailure.Inc()
			if ctx.Err() == nil {
				e.log.Warn("fan-out message failed; it will be retried", "id", m.ID, "err", err)
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
// worker to wait fanoutClaimAfter for.
func (e *Engine) handleMessage(ctx context.Context, m redis.XMessage) error {
	finishing, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(fanoutFinishTimeout, cancel) })
	defer stop()
	ctx = finishing
	kind, _ := m.Values["kind"].(string)
	payload, _ := m.Values["payload"].(string)
	ctx, span := e.startMessageSpan(ctx, m, kind)
	defer span.End()
	if err := e.handle(ctx, kind, payload); err != nil {
		failSpan(span, err)
		return fmt.Errorf("%s: %w", kind, err)
	}
	e.metrics.EventsHandled.WithLabelValues(kind).Inc()
	return e.redis.XAck(ctx, e.keys.Stream(), fanoutGroup, m.ID).Err()
}

// handle carries out one stream message.
func (e *Engine) handle(ctx context.Context, kind, payload string) error {
	if kind == taskKind {
		var t task
		if err := json.Unmarshal([]byte(payload), &t); err != nil {
			return nil // a message no handler can read: drop it rather than retry forever
		}
		return e.runTask(ctx, t)
	}
	// Each event first refreshes the Redis copies of the rows it changed:
	// the mutation did so before it answered, unless its process died
	// between the commit and the refresh (see cache.go).
	switch kind {
	case models.EventPostCreated, models.EventPostDeleted:
		var p models.PostEventPayload
		if err := json.Unmarshal([]byte(payload), &p); err != nil {
			return nil
		}
		posts := []int64{p.PostID}
		if p.RepostOfID != nil {
			posts = append(posts, *p.RepostOfID)
		}
		if err := e.cache.RefreshCopies(ctx, []int64{p.AuthorID}, posts); err != nil {
			return err
		}
		if kind == models.EventPostCreated {
			return e.onPostCreated(ctx, p)
		}
		return e.onPostDeleted(ctx, p)
	case models.EventFollowed, models.EventUnfollowed, models.EventFollowerRemoved:
		var f models.FollowEventPayload
		if err := json.Unmarshal([]byte(payload), &f); err != nil {
			return nil
		}
		if err := e.cache.RefreshCopies(ctx, []int64{f.FollowerID, f.FolloweeID}, nil); err != nil {
			return err
		}
		if err := e.inboxes.SyncFollowing(ctx, f); err != nil {
			return err
		}
		if err := e.jumps.SyncRelationLists(ctx, f); err != nil {
			return err
		}
		if kind == models.EventFollowed {
			return e.onFollowed(ctx, f)
		}
		return e.onUnfollowed(ctx, f)
	case models.EventUserChanged:
		var u models.UserEventPayload
		if err := json.Unmarshal([]byte(payload), &u); err != nil {
			return nil
		}
		return e.cache.RefreshCopies(ctx, []int64{u.UserID}, nil)
	}
	return nil
}

// onPostCreated adds a post to its author's outbox and, for an ordinary
// author, to the inboxes of the author's followers.
func (e *Engine) onPostCreated(ctx context.Context, ev models.PostEventPayload) error {
	posts, err := e.cache.StoredPosts(ctx, []int64{ev.PostID})
	if err != nil {
		return err
	}
	p := posts[0]
	if p == nil || p.Deleted() {
		return nil // deleted meanwhile: nothing to add
	}
	if err := e.outboxes.Add(ctx, p); err != nil {
		return err
	}
	original, err := e.cache.LivePost(ctx, p.OriginalID())
	if err != nil {
		return ignoreNotFound(err)
	}
	celeb, err := e.outboxes.IsCelebrity(ctx, p.AuthorID)
	if err != nil {
		return err
	}
	if e.cfg.Mode == config.ModePull || celeb {
		// Not fanned out: its readers hear of it on the author's channel.
		e.pub.Publish(ctx, e.keys.AuthorChannel(p.AuthorID), live.AddMessage(original.ID, p.ID))
		return nil
	}
	return e.fanout(ctx, task{Op: opAdd, Post: original.ID, Author: original.AuthorID, User: p.AuthorID, Event: p.ID})
}

// onPostDeleted takes a post out of its author's outbox and out of every
// inbox it reached: an original leaves the inboxes of its author's and its
// reposters' followers; a repost is merged out of its original's entry.
func (e *Engine) onPostDeleted(ctx context.Context, ev models.PostEventPayload) error {
	var original int64
	if ev.RepostOfID != nil {
		original = *ev.RepostOfID
	}
	if err := e.outboxes.Remove(ctx, ev.AuthorID, ev.PostID, original); err != nil {
		return err
	}
	e.pub.Publish(ctx, e.keys.AuthorChannel(ev.AuthorID), "change")
	if e.cfg.Mode == config.ModePull {
		return nil
	}
	if ev.RepostOfID != nil {
		originals, err := e.cache.StoredPosts(ctx, []int64{*ev.RepostOfID})
		if err != nil || originals[0] == nil {
			return err
		}
		return e.fanout(ctx, task{Op: opRemove, Post: originals[0].ID, Author: originals[0].AuthorID, User: ev.AuthorID, Event: ev.PostID})
	}
	reposters, err := e.store.ReposterIDs(ctx, ev.PostID)
	if err != nil {
		return err
	}
	for _, user := range append([]int64{ev.AuthorID}, reposters...) {
		if err := e.fanout(ctx, task{Op: opDrop, Post: ev.PostID, User: user}); err != nil {
			return err
		}
	}
	return nil
}

// onFollowed promotes a followee who became a celebrity, and backfills the
// followee's recent posts into the follower's inbox.
func (e *Engine) onFollowed(ctx context.Context, ev models.FollowEventPayload) error {
	if err := e.updateCelebrity(ctx, ev.FolloweeID); err != nil {
		return err
	}
	if e.cfg.Mode == config.ModePull {
		return nil
	}
	if celeb, err := e.outboxes.IsCelebrity(ctx, ev.FolloweeID); err != nil || celeb {
		return err // merged at read time
	}
	return e.backfill(ctx, ev.FolloweeID, []int64{ev.FollowerID})
}

// onUnfollowed takes the former followee's arrivals out of the follower's
// inbox (entries that others also brought stay, at their next arrival),
// and demotes a followee who stopped being a celebrity.
func (e *Engine) onUnfollowed(ctx context.Context, ev models.FollowEventPayload) error {
	if err := e.updateCelebrity(ctx, ev.FolloweeID); err != nil {
		return err
	}
	if e.cfg.Mode == config.ModePull {
		return nil
	}
	still, err := e.store.Follows(ctx, ev.FollowerID, ev.FolloweeID)
	if err != nil || still {
		return err // followed again meanwhile
	}
	posts, originals, err := e.recentPosts(ctx, ev.FolloweeID)
	if err != nil {
		return err
	}
	var changes []inbox.Change
	for _, p := range posts {
		if o := originals[p.OriginalID()]; o != nil {
			changes = append(changes, inbox.RemoveSource(ev.FollowerID, o.ID, o.AuthorID, ev.FolloweeID, "*"))
		}
	}
	_, err = e.inboxes.Apply(ctx, changes)
	return err
}

// backfill adds user's recent posts to the inboxes of readers who follow them.
func (e *Engine) backfill(ctx context.Context, user int64, readers []int64) error {
	following, err := e.store.FollowersAmong(ctx, user, readers)
	if err != nil {
		return err
	}
	posts, originals, err := e.recentPosts(ctx, user)
	if err != nil {
		return err
	}
	var changes []inbox.Change
	for _, r := range readers {
		if !following[r] {
			continue
		}
		if len(posts) == e.cfg.InboxCap {
			// The user has more posts than an inbox holds: the older ones
			// come from MySQL, below the oldest one added here.
			changes = append(changes, inbox.RaiseFloor(r, posts[len(posts)-1].ID))
		}
		for _, p := range posts {
			if o := originals[p.OriginalID()]; o != nil && !o.Deleted() {
				changes = append(changes, inbox.AddSource(r, o.ID, o.AuthorID, inbox.Source{User: user, Event: p.ID}, e.cfg.InboxCap))
			}
		}
	}
	n, err := e.inboxes.Apply(ctx, changes)
	e.metrics.FanoutEntries.Add(float64(n))
	return err
}

// recentPosts loads user's newest live posts (as many as an inbox holds)
// and the originals they stand for, by id.
func (e *Engine) recentPosts(ctx context.Context, user int64) ([]*models.Post, map[int64]*models.Post, error) {
	posts, err := e.store.TimelinePage(ctx, user, store.Older, math.MaxInt64, e.cfg.InboxCap)
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
	loaded, err := e.cache.StoredPosts(ctx, reposted)
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

// fanout splits the readers of t (the followers of t.User) into tasks of at
// most FanoutBatchSize. A single batch runs at once; more go to the stream,
// so that many workers share a big fan-out and a crash retries one batch.
func (e *Engine) fanout(ctx context.Context, t task) error {
	bound := int64(math.MaxInt64)
	var batches []task
	for {
		page, err := e.store.FollowersPage(ctx, t.User, store.Older, bound, e.cfg.FanoutBatchSize)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		b := t
		b.Readers = make([]int64, len(page))
		for i, r := range page {
			b.Readers[i] = r.UserID
		}
		batches = append(batches, b)
		if len(page) < e.cfg.FanoutBatchSize {
			break
		}
		bound = page[len(page)-1].ID
	}
	if len(batches) == 1 {
		return e.runTask(ctx, batches[0])
	}
	entries := make([][]any, len(batches))
	for i, b := range batches {
		payload, _ := json.Marshal(b)
		entries[i] = taskValues(ctx, payload)
	}
	// The event that made them is acknowledged only once a replica holds
	// them (see streamappend.go).
	return e.appendStream(ctx, entries)
}

// runTask applies one task to its readers' inboxes, pipelined.
func (e *Engine) runTask(ctx context.Context, t task) (err error) {
	e.metrics.FanoutTasks.Inc()
	ctx, span := e.startBatchSpan(ctx, t)
	defer func() { endSpan(span, err) }()
	if t.Op == opBackfill {
		return e.backfill(ctx, t.User, t.Readers)
	}
	readers := t.Readers
	if t.Op == opAdd {
		// Only readers who still follow the user get the entry.
		following, err := e.store.FollowersAmong(ctx, t.User, t.Readers)
		if err != nil {
			return err
		}
		readers = readers[:0:0]
		for _, r := range t.Readers {
			if following[r] {
				readers = append(readers, r)
			}
		}
	}
	changes := make([]inbox.Change, 0, len(readers))
	for _, r := range readers {
		switch t.Op {
		case opAdd:
			changes = append(changes, inbox.AddSource(r, t.Post, t.Author, inbox.Source{User: t.User, Event: t.Event}, e.cfg.InboxCap))
		case opRemove:
			changes = append(changes, inbox.RemoveSource(r, t.Post, t.Author, t.User, strconv.FormatInt(t.Event, 10)))
		case opDrop:
			changes = append(changes, inbox.DropEntry(r, t.Post))
		}
	}
	writing, write := e.startInboxWriteSpan(ctx, len(changes))
	n, err := e.inboxes.Apply(writing, changes)
	endSpan(write, err)
	e.metrics.FanoutEntries.Add(float64(n))
	return err
}

// watchLag refreshes the lag gauges every few seconds.
func (e *Engine) watchLag(ctx context.Context) {
	for ctx.Err() == nil {
		if n, oldest, err := e.store.OutboxLag(ctx); err == nil {
			e.metrics.OutboxLag.Set(float64(n))
			if n > 0 {
				e.metrics.OutboxLagSecs.Set(time.Since(oldest).Seconds())
			} else {
				e.metrics.OutboxLagSecs.Set(0)
			}
		}
		if groups, err := e.redis.XInfoGroups(ctx, e.keys.Stream()).Result(); err == nil {
			for _, g := range groups {
				if g.Name == fanoutGroup {
					e.metrics.StreamLag.Set(float64(max(g.Lag, 0)))
					e.metrics.StreamPending.Set(float64(g.Pending))
				}
			}
		}
		if n, err := e.redis.XLen(ctx, e.keys.Stream()).Result(); err == nil {
			e.metrics.StreamLength.Set(float64(n)) // on every instance; the dispatcher's trims set it sooner
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
func (e *Engine) updateCelebrity(ctx context.Context, user int64) error {
	if e.cfg.Mode != config.ModeHybrid {
		return nil
	}
	u, err := e.store.UserByID(ctx, user)
	if err != nil {
		return ignoreNotFound(err)
	}
	celebrity := u.FollowerCount >= e.cfg.CelebrityFollowers
	changed, err := e.outboxes.SetCelebrity(ctx, user, celebrity)
	if err != nil || !changed {
		return err
	}
	e.pub.Publish(ctx, e.keys.CelebritiesChannel(), "change")
	if celebrity {
		return nil
	}
	return e.fanout(ctx, task{Op: opBackfill, User: user})
}
