package feed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"

	"github.com/redis/go-redis/v9"
)

// The local tier also holds the outboxes of the celebrities (DESIGN.md,
// "Cache tiers": the recent posts of celebrities), so that a warm hybrid
// page reads its followed celebrities' outboxes in this process, not in a
// round trip of its own: it then takes as many round trips as a push page.
//
// A copy is the whole outbox (at most InboxCap members) as one script read
// it. It is kept for LocalCacheTTL at most, and dropped at once, on every
// instance, when the outbox changes: the writer of an outbox (the worker
// that handles a post, a repost or a delete) drops its own copy before it
// acknowledges the event, and names the author on the invalidate channel
// for the other instances. A fill that began before a drop does not prime
// the tier (see localTier). So a reader on the writer's instance sees the
// change at once, and one elsewhere as soon as the message arrives, or
// after LocalCacheTTL if it was lost.

// outboxCopy is an author's outbox as this instance holds it: its floor and
// its members, by score (the post id) from the lowest. Shared by the reads
// that use it, and never changed.
type outboxCopy struct {
	floor int64
	items []outboxItem
}

// outboxCopyBytes estimates what a copy holds in memory.
func outboxCopyBytes(c *outboxCopy) int { return 150 + 16*len(c.items) }

// page is what readOutboxScript answers for the same read: up to limit
// items beyond bound in direction older (at or above the floor) or newer.
func (c *outboxCopy) page(older bool, bound int64, limit int) []outboxItem {
	var out []outboxItem
	if older {
		// Scores in [floor, bound), highest first.
		i, _ := slices.BinarySearchFunc(c.items, bound, func(it outboxItem, b int64) int { return cmpInt(it.PostID, b) })
		for i--; i >= 0 && len(out) < limit && c.items[i].PostID >= c.floor; i-- {
			out = append(out, c.items[i])
		}
		return out
	}
	// Scores above bound, or from the floor up when bound lies below it.
	from, inclusive := bound, false
	if bound < c.floor {
		from, inclusive = c.floor, true
	}
	i, _ := slices.BinarySearchFunc(c.items, from, func(it outboxItem, b int64) int { return cmpInt(it.PostID, b) })
	for ; i < len(c.items) && len(out) < limit; i++ {
		if c.items[i].PostID == from && !inclusive {
			continue
		}
		out = append(out, c.items[i])
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reposts returns the copy's reposts of originals that are at or above
// lowest, by original; ok is false when the copy's floor lies above lowest
// (the outbox may have held one below what it keeps): outboxRepostsScript's
// answer, read locally.
func (c *outboxCopy) reposts(celeb, lowest int64, originals map[int64]bool) (map[int64][]source, bool) {
	if c.floor > lowest {
		return nil, false
	}
	out := map[int64][]source{}
	i, _ := slices.BinarySearchFunc(c.items, lowest, func(it outboxItem, b int64) int { return cmpInt(it.PostID, b) })
	for _, it := range c.items[i:] {
		if it.OriginalID != it.PostID && originals[it.OriginalID] {
			out[it.OriginalID] = append(out[it.OriginalID], source{User: celeb, Event: it.PostID})
		}
	}
	return out, true
}

// readWholeOutboxScript returns {floor, member, ...}: outbox KEYS[1] whole,
// by score from the lowest, with its TTL refreshed to ARGV[1] ms; nil when
// it is missing.
var readWholeOutboxScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
local floor = '0'
if #m > 0 then floor = string.sub(m[1], 2) end
local members = redis.call('ZRANGEBYSCORE', KEYS[1], 0, '+inf')
table.insert(members, 1, floor)
return members`)

// outboxCopies returns the outboxes of authors: this instance's copies,
// and for the rest one pipelined read (a missing outbox is rebuilt first).
func (e *Engine) outboxCopies(ctx context.Context, authors []int64) (map[int64]*outboxCopy, error) {
	if len(authors) == 0 {
		return nil, nil
	}
	return e.local.outboxes.GetMany(ctx, authors, e.readWholeOutboxes)
}

// readWholeOutboxes reads the outboxes of authors from Redis, in one round
// trip when they all exist.
func (e *Engine) readWholeOutboxes(ctx context.Context, authors []int64) (map[int64]*outboxCopy, error) {
	ttl := e.cfg.InboxTTL.Milliseconds()
	pipe := e.redis.Pipeline()
	cmds := make([]*redis.Cmd, len(authors))
	for i, a := range authors {
		cmds[i] = readWholeOutboxScript.EvalSha(ctx, pipe, []string{e.keys.Outbox(a)}, ttl)
	}
	pipe.Exec(ctx) // each command's own error is looked at below
	out := make(map[int64]*outboxCopy, len(authors))
	for i, a := range authors {
		cmd := cmds[i]
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") { // Redis restarted
			cmd = readWholeOutboxScript.Run(ctx, e.redis, []string{e.keys.Outbox(a)}, ttl)
		}
		if errors.Is(cmd.Err(), redis.Nil) {
			// Missing (expired, or Redis lost it): rebuild it from MySQL,
			// then read it.
			if err := e.ensureOutbox(ctx, a); err != nil {
				return nil, err
			}
			cmd = readWholeOutboxScript.Run(ctx, e.redis, []string{e.keys.Outbox(a)}, ttl)
		}
		vals, err := cmd.StringSlice()
		if err != nil {
			return nil, fmt.Errorf("outbox of %d: %w", a, err)
		}
		c := &outboxCopy{items: make([]outboxItem, 0, len(vals)-1)}
		c.floor, _ = strconv.ParseInt(vals[0], 10, 64)
		for _, m := range vals[1:] {
			item, err := parseOutboxMember(m)
			if err != nil {
				return nil, fmt.Errorf("outbox of %d holds %q", a, m)
			}
			c.items = append(c.items, item)
		}
		out[a] = c
	}
	return out, nil
}

// copiedReposts is celebrityReposts answered from the copies of the
// celebrities' outboxes a read merged, without a round trip; an outbox
// whose copy's floor lies above the lowest original is MySQL's to answer.
func (e *Engine) copiedReposts(ctx context.Context, copies map[int64]*outboxCopy, celebs, originals []int64) (map[int64][]source, error) {
	if len(celebs) == 0 || len(originals) == 0 {
		return nil, nil
	}
	lowest := slices.Min(originals)
	wanted := make(map[int64]bool, len(originals))
	for _, o := range originals {
		wanted[o] = true
	}
	out := map[int64][]source{}
	var fromMySQL []int64
	for _, c := range celebs {
		found, ok := copies[c].reposts(c, lowest, wanted)
		if !ok {
			fromMySQL = append(fromMySQL, c)
			continue
		}
		for o, list := range found {
			out[o] = append(out[o], list...)
		}
	}
	if len(fromMySQL) == 0 {
		return out, nil
	}
	reposts, err := e.store.Reposts(ctx, fromMySQL, originals)
	if err != nil {
		return nil, err
	}
	for _, rp := range reposts {
		out[*rp.RepostOfID] = append(out[*rp.RepostOfID], source{User: rp.AuthorID, Event: rp.ID})
	}
	return out, nil
}

// outboxChanged drops this instance's copy of author's outbox and tells
// the other instances to drop theirs. Every writer of an outbox calls it
// once the change ran, whatever came of it (an outbox that was missing
// changes too: its rebuild will hold the change).
func (e *Engine) outboxChanged(ctx context.Context, author int64) {
	if e.local.outboxes == nil {
		return
	}
	e.local.outboxes.Drop([]int64{author})
	e.cache.Invalidate(context.WithoutCancel(ctx), metrics.KindOutbox, []int64{author})
}

// celebrityGuess is the last celebrity set this instance read, for a read
// that must guess its followed celebrities before it learns them (see
// guessLookups); nil before the first.
type celebrityGuess struct{ ids atomic.Pointer[[]int64] }

// remember keeps ids as the guess.
func (g *celebrityGuess) remember(ids []int64) { g.ids.Store(&ids) }

// guessLookups are the posts that the first merge round of a page of
// viewer will look up in the inbox, as far as this instance can tell
// before it reads the reader's state: the originals of the items of the
// outboxes it holds copies of, of the celebrities it last knew that the
// viewer followed when it last read their followee set (followees, sorted).
// The early inbox read (see inboxRead) looks them up in its round trip;
// a guess that proves wrong costs the round trip it would have saved.
func (e *Engine) guessLookups(followees []int64, older bool, bound int64, want int) []int64 {
	if e.cfg.Mode != config.ModeHybrid || e.local.outboxes == nil || len(followees) == 0 {
		return nil
	}
	celebs := e.local.celebrities.ids.Load()
	if celebs == nil {
		return nil
	}
	var followed []int64
	for _, c := range *celebs {
		if _, ok := slices.BinarySearch(followees, c); ok {
			followed = append(followed, c)
		}
	}
	var out []int64
	for _, c := range e.local.outboxes.Cached(followed) {
		for _, it := range c.page(older, bound, want) {
			out = append(out, it.OriginalID)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
