package outbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"feedservice/feed/config"
	"feedservice/feed/internal/metrics"
	"feedservice/feed/internal/redisx"

	"github.com/redis/go-redis/v9"
)

// The local tier also holds the outboxes of the celebrities (docs/
// architecture.md, "Cache tiers": the recent posts of celebrities), so that a warm hybrid
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

// Copy is an author's outbox as this instance holds it: its floor and
// its members, by score (the post id) from the lowest, and the outbox's
// version when it was read. Shared by the reads that use it, and never
// changed.
type Copy struct {
	floor int64
	items []Item
	// adds are the items' add sequences (keyspace.Keys.OutboxAdds), by
	// index of items: 0 for those a rebuild wrote.
	adds []int64
	// version is the outbox's when read ("": none; the copy is never
	// revalidated by it, nor folded).
	version string
}

// A copy that the local tier let go after LocalCacheTTL is kept apart
// (Outboxes.expired, bounded as the tier) and used again, without reading
// the outbox, when the outbox's version is still the one it was read at:
// every write of an outbox replaces the version in its own script, so the
// outbox has not changed since. A warm page then pays one GET per such
// outbox, in one pipeline, instead of the outbox read whole; a list of
// many members, whose outboxes run out of the tier each second, needs
// that (docs/architecture.md, "Lists").

// Floor is the lowest score the copy's outbox keeps; 0: MySQL has nothing older.
func (c *Copy) Floor() int64 { return c.floor }

// Items are the copy's items, by score from the lowest. Shared: never
// change them.
func (c *Copy) Items() []Item { return c.items }

// Version is the outbox's version when the copy was read ("": none).
func (c *Copy) Version() string { return c.version }

// AddedAfter are the items of c added to the outbox after it was at
// version, when version is of the copy's epoch; else all of them.
func (c *Copy) AddedAfter(version string) []Item {
	epoch, added, ok := splitVersion(version)
	cur, _, curOK := splitVersion(c.version)
	if !ok || !curOK || epoch != cur {
		return c.items
	}
	var out []Item
	for i, it := range c.items {
		if c.adds[i] > added {
			out = append(out, it)
		}
	}
	return out
}

// splitVersion reads an outbox version "<epoch>:<adds>".
func splitVersion(v string) (epoch string, adds int64, ok bool) {
	epoch, n, found := strings.Cut(v, ":")
	if !found {
		return "", 0, false
	}
	adds, err := strconv.ParseInt(n, 10, 64)
	return epoch, adds, err == nil
}

// copyBytes estimates what a copy holds in memory.
func copyBytes(c *Copy) int { return 150 + len(c.version) + 24*len(c.items) }

// Page is what readOutboxScript answers for the same read: up to limit
// items beyond bound in direction older (at or above the floor) or newer.
func (c *Copy) Page(older bool, bound int64, limit int) []Item {
	var out []Item
	if older {
		// Scores in [floor, bound), highest first.
		i, _ := slices.BinarySearchFunc(c.items, bound, func(it Item, b int64) int { return cmp.Compare(it.PostID, b) })
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
	i, _ := slices.BinarySearchFunc(c.items, from, func(it Item, b int64) int { return cmp.Compare(it.PostID, b) })
	for ; i < len(c.items) && len(out) < limit; i++ {
		if c.items[i].PostID == from && !inclusive {
			continue
		}
		out = append(out, c.items[i])
	}
	return out
}

// Reposts returns the copy's reposts of originals that are at or above
// lowest, from the lowest; ok is false when the copy's floor lies above
// lowest (the outbox may have held one below what it keeps):
// outboxRepostsScript's answer, read locally.
func (c *Copy) Reposts(lowest int64, originals map[int64]bool) (reposts []Item, ok bool) {
	if c.floor > lowest {
		return nil, false
	}
	i, _ := slices.BinarySearchFunc(c.items, lowest, func(it Item, b int64) int { return cmp.Compare(it.PostID, b) })
	for _, it := range c.items[i:] {
		if it.OriginalID != it.PostID && originals[it.OriginalID] {
			reposts = append(reposts, it)
		}
	}
	return reposts, true
}

// readWholeOutboxScript returns {floor, version, member, adds, ...}:
// outbox KEYS[1] whole, by score from the lowest, each member with its add
// sequence (KEYS[3]; 0 when not recorded), and its version KEYS[2] (""
// when missing), all with their TTL refreshed to ARGV[1] ms; nil when the
// outbox is missing.
var readWholeOutboxScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
local floor = '0'
if #m > 0 then floor = string.sub(m[1], 2) end
local members = redis.call('ZRANGEBYSCORE', KEYS[1], 0, '+inf')
local out = {floor, redis.call('GET', KEYS[2]) or ''}
local chunk = ` + strconv.Itoa(redisx.UnpackChunk) + `
for first = 1, #members, chunk do
  local last = math.min(first + chunk - 1, #members)
  local adds = redis.call('ZMSCORE', KEYS[3], unpack(members, first, last))
  for i = first, last do
    out[#out + 1] = members[i]
    out[#out + 1] = adds[i - first + 1] or '0'
  end
end
return out`)

// Copies returns the outboxes of authors: this instance's copies, those
// it let go whose version is still the outbox's, and for the rest one
// pipelined read (a missing outbox is rebuilt first).
func (o *Outboxes) Copies(ctx context.Context, authors []int64) (map[int64]*Copy, error) {
	if len(authors) == 0 {
		return nil, nil
	}
	return o.copies.GetMany(ctx, authors, o.revalidate)
}

// revalidate fills the local tier's misses: a copy let go whose version
// the outbox still has is taken again (one GET each, pipelined), the rest
// read whole.
func (o *Outboxes) revalidate(ctx context.Context, authors []int64) (map[int64]*Copy, error) {
	out := make(map[int64]*Copy, len(authors))
	if o.expired != nil {
		var held []int64
		var versions []*redis.StringCmd
		pipe := o.d.Redis.Pipeline()
		for _, a := range authors {
			if c, ok := o.expired.GetIfPresent(a); ok && c.version != "" {
				held = append(held, a)
				versions = append(versions, pipe.Get(ctx, o.d.Keys.OutboxVersion(a)))
			}
		}
		if len(held) > 0 {
			pipe.Exec(ctx) // each command's own error is looked at below
			for i, a := range held {
				if c, ok := o.expired.GetIfPresent(a); ok && versions[i].Err() == nil && versions[i].Val() == c.version {
					out[a] = c
				}
			}
		}
	}
	var rest []int64
	for _, a := range authors {
		if out[a] == nil {
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	read, err := o.readWhole(ctx, rest)
	if err != nil {
		return nil, err
	}
	for a, c := range read {
		out[a] = c
		if o.expired != nil {
			o.expired.Set(a, c)
		}
	}
	return out, nil
}

// readWhole reads the outboxes of authors from Redis, in one round
// trip when they all exist.
func (o *Outboxes) readWhole(ctx context.Context, authors []int64) (map[int64]*Copy, error) {
	ttl := o.d.Cfg.InboxTTL.Milliseconds()
	keys := func(a int64) []string {
		return []string{o.d.Keys.Outbox(a), o.d.Keys.OutboxVersion(a), o.d.Keys.OutboxAdds(a)}
	}
	pipe := o.d.Redis.Pipeline()
	cmds := make([]*redis.Cmd, len(authors))
	for i, a := range authors {
		cmds[i] = readWholeOutboxScript.EvalSha(ctx, pipe, keys(a), ttl)
	}
	pipe.Exec(ctx) // each command's own error is looked at below
	out := make(map[int64]*Copy, len(authors))
	for i, a := range authors {
		cmd := redisx.Queued(ctx, o.d.Redis, readWholeOutboxScript, cmds[i], keys(a), ttl)
		if errors.Is(cmd.Err(), redis.Nil) {
			// Missing (expired, or Redis lost it): rebuild it from MySQL,
			// then read it.
			if err := o.Ensure(ctx, a); err != nil {
				return nil, err
			}
			cmd = readWholeOutboxScript.Run(ctx, o.d.Redis, keys(a), ttl)
		}
		vals, err := cmd.StringSlice()
		if err != nil || len(vals) < 2 {
			return nil, fmt.Errorf("outbox of %d: %v: %w", a, vals, err)
		}
		c, err := parseCopy(vals)
		if err != nil {
			return nil, fmt.Errorf("outbox of %d: %w", a, err)
		}
		out[a] = c
	}
	return out, nil
}

// parseCopy reads readWholeOutboxScript's answer.
func parseCopy(vals []string) (*Copy, error) {
	if len(vals) < 2 || len(vals)%2 != 0 {
		return nil, fmt.Errorf("outbox read answered %d values", len(vals))
	}
	n := (len(vals) - 2) / 2
	c := &Copy{items: make([]Item, 0, n), adds: make([]int64, 0, n), version: vals[1]}
	c.floor, _ = strconv.ParseInt(vals[0], 10, 64)
	for i := 2; i < len(vals); i += 2 {
		item, err := parseMember(vals[i])
		if err != nil {
			return nil, fmt.Errorf("holds %q", vals[i])
		}
		seq, _ := strconv.ParseFloat(vals[i+1], 64)
		c.items = append(c.items, item)
		c.adds = append(c.adds, int64(seq))
	}
	return c, nil
}

// changed drops this instance's copy of author's outbox and tells
// the other instances to drop theirs. Every writer of an outbox calls it
// once the change ran, whatever came of it (an outbox that was missing
// changes too: its rebuild will hold the change).
func (o *Outboxes) changed(ctx context.Context, author int64) {
	if o.copies == nil {
		return
	}
	o.Drop([]int64{author})
	o.cache.Invalidate(context.WithoutCancel(ctx), metrics.KindOutbox, []int64{author})
}

// DropCopy forgets this instance's copy of author's outbox, if it holds
// one: a message on the author's channel says the outbox changed.
func (o *Outboxes) DropCopy(author int64) { o.Drop([]int64{author}) }

// Drop forgets this instance's copies of authors' outboxes, those kept
// for revalidation too: the invalidate channel's outbox messages call it
// (cache.Dropper). The version alone would tell a changed outbox from its
// copy; dropping also covers a writer that sets no version (an instance of
// an earlier build, during a rolling deploy).
func (o *Outboxes) Drop(authors []int64) {
	o.copies.Drop(authors)
	if o.expired != nil {
		for _, a := range authors {
			o.expired.Invalidate(a)
		}
	}
}

// DropAll forgets every copy, as Drop does authors.
func (o *Outboxes) DropAll() {
	o.copies.DropAll()
	if o.expired != nil {
		o.expired.InvalidateAll()
	}
}

// GuessLookups are the posts that the first merge round of a page of
// viewer will look up in the inbox, as far as this instance can tell
// before it reads the reader's state: the originals of the items of the
// outboxes it holds copies of, of the celebrities it last knew that the
// viewer followed when it last read their followee set (followees, sorted).
// The early inbox read (package timeline's merge.go) looks them up in its
// round trip; a guess that proves wrong costs the round trip it would have
// saved. The celebrities folded into the inbox (folded, see package
// timeline's fold.go) are left out.
func (o *Outboxes) GuessLookups(followees []int64, older bool, bound int64, want int, folded func(celeb int64, c *Copy) bool) []int64 {
	if o.d.Cfg.Mode != config.ModeHybrid || o.copies == nil || len(followees) == 0 {
		return nil
	}
	var followed []int64
	for _, c := range o.Guess() {
		if _, ok := slices.BinarySearch(followees, c); ok {
			followed = append(followed, c)
		}
	}
	var out []int64
	for celeb, c := range o.copies.Cached(followed) {
		if folded(celeb, c) {
			continue // the inbox holds it: the page does not merge it
		}
		for _, it := range c.Page(older, bound, want) {
			out = append(out, it.OriginalID)
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
