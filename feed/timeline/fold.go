package timeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
	"feedservice/feed/outbox"
)

// Folding, in hybrid mode: a reader's page merges the outboxes of the
// celebrities they follow (merge.go) only until it has folded them into
// the inbox; then the page is push's page.
//
// A fold adds a celebrity's outbox, as this instance's copy holds it (see
// package outbox's copies.go), to the reader's inbox: each post or repost
// as an arrival of its original, with ZADD NX, as the fan-out would have,
// in one script over the reader's keys. It runs after a page that merged
// the celebrity has answered, in the background. Its mark (foldMark) records what it folded:
// the outbox's version and the reader's followee-set version, which every
// follow change, block, mute and inbox rebuild replaces. A read leaves a
// celebrity out of the merge when the mark matches both, the copy's version
// and the set's (read on every page); so a post that reached the outbox
// since, a new followee, or a rebuilt inbox sends the celebrity back into
// the merge until the next fold.
//
// The mark is an add count, not a post id: posts reach an outbox in the
// order their fan-out ran, which is not their ids' order, so "every post
// after id X" would miss one that came late. A fold after a mark in the same
// epoch of the outbox adds the items added after it (keyspace.Keys.OutboxAdds);
// else (a new followee set, a rebuilt outbox, no mark) the whole copy. What
// the outbox no longer holds lies below its floor, so a celebrity is folded
// only while that floor is at or below the inbox's: then what the outbox
// lost lies below the inbox's floor too, where MySQL serves. A celebrity
// whose outbox does not reach down to the inbox's floor (more posts than the
// cap within the inbox's span) stays in the merge, whose window starts at
// that floor. (Raising the inbox's floor instead would drop entries whose
// first arrival lies below it and a later one above: an unfollow of the
// first arrival's author would lose them.) Stale arrivals (a post deleted,
// a celebrity unfollowed) are a read's to drop, as for any inbox entry.
//
// The script checks the followee set's version before it writes: a fold
// computed before a follow change, a block or a rebuild writes nothing.
// The marks live in this instance's local tier only (foldMarks): a page
// costs no Redis command to learn them; another instance, which lacks
// them, folds once more, to the same effect.

// foldMark is what a fold put in a reader's inbox for one celebrity: the
// celebrity's outbox up to version, with the reader's followee set at
// following.
type foldMark struct {
	following string
	version   string
}

// foldMarks are a reader's marks, by celebrity. Shared by the reads that
// use them, and never changed: a fold stores new ones.
type foldMarks map[int64]foldMark

// holds says whether the mark of celeb covers copy c, with the followee
// set at following.
func (m foldMarks) holds(celeb int64, following string, c *outbox.Copy) bool {
	if c == nil || c.Version() == "" || following == "" {
		return false
	}
	return m[celeb] == foldMark{following: following, version: c.Version()}
}

// since are the items of c a fold after mark must add: those added after
// it, when the mark is of the same outbox epoch and followee set; else all.
func since(c *outbox.Copy, mark foldMark, following string) []outbox.Item {
	if mark.following != following {
		return c.Items()
	}
	return c.AddedAfter(mark.version)
}

// marks are reader's fold marks on this instance; nil when none (or the
// local tiers are off, when nothing is folded).
func (ib *Inboxes) marks(reader int64) foldMarks {
	if ib.folds == nil {
		return nil
	}
	m, _ := ib.folds.GetIfPresent(reader)
	return m
}

// unfolded are those of celebs whose outbox copies the marks m do not
// cover, with the followee set at following: the page merges them. The
// marks must be taken before the page reads the inbox.
func (m foldMarks) unfolded(following string, celebs []int64, copies map[int64]*outbox.Copy) []int64 {
	if m == nil {
		return celebs
	}
	var out []int64
	for _, c := range celebs {
		if !m.holds(c, following, copies[c]) {
			out = append(out, c)
		}
	}
	return out
}

// foldTimeout bounds one fold's Redis work, whose page has answered.
const foldTimeout = 5 * time.Second

// foldLater folds celebs into reader's inbox after the page that merged
// them, in the background (Engine.Wait waits for it), unless a fold of
// the reader's runs already or all Config.FoldsRunning slots are taken.
func (reads *Reads) foldLater(reader int64, following string, celebs []int64) {
	ib := reads.inboxes
	if ib.folds == nil || following == "" || len(celebs) == 0 {
		return
	}
	select {
	case ib.foldSlots <- struct{}{}:
	default:
		reads.d.Metrics.Folds.WithLabelValues("skipped").Inc()
		return
	}
	if _, busy := ib.folding.LoadOrStore(reader, true); busy {
		<-ib.foldSlots
		reads.d.Metrics.Folds.WithLabelValues("skipped").Inc()
		return
	}
	ib.writes.Add(1)
	go func() {
		defer ib.writes.Done()
		defer func() { ib.folding.Delete(reader); <-ib.foldSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), foldTimeout)
		defer cancel()
		if err := reads.fold(ctx, reader, following, celebs); err != nil {
			reads.d.Log.WarnContext(ctx, "fold of celebrities' posts into an inbox failed", "reader", reader, "err", err)
		}
	}()
}

// foldDone is foldScript's answer when it folded.
const foldDone = 1

// foldStale is foldScript's answer when the followee set moved on.
const foldStale = 3

// fold adds celebs' outboxes (this instance's copies) to reader's inbox,
// what each mark has not covered, and stores the new marks.
func (reads *Reads) fold(ctx context.Context, reader int64, following string, celebs []int64) error {
	copies, err := reads.outboxes.Copies(ctx, celebs)
	if err != nil {
		return err
	}
	marks := reads.inboxes.marks(reader)
	type part struct {
		celeb int64
		copy  *outbox.Copy
		items []outbox.Item
	}
	var parts []part
	var originals []int64
	for _, celeb := range celebs {
		c := copies[celeb]
		if c == nil || c.Version() == "" {
			continue
		}
		items := since(c, marks[celeb], following)
		parts = append(parts, part{celeb, c, items})
		for _, it := range items {
			if it.OriginalID != it.PostID {
				originals = append(originals, it.OriginalID)
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	authors := map[int64]int64{}
	if len(originals) > 0 {
		posts, err := reads.cache.Posts(ctx, uniq(originals))
		if err != nil {
			return err
		}
		for _, p := range posts {
			if p != nil && !p.Deleted() {
				authors[p.ID] = p.AuthorID
			}
		}
	}
	cfg := reads.d.Cfg
	args := []any{following, cfg.InboxCap, TrimSlack(cfg.InboxCap)}
	for _, p := range parts {
		var triples []any
		for _, it := range p.items {
			author := p.celeb
			if it.OriginalID != it.PostID {
				if author = authors[it.OriginalID]; author == 0 {
					continue // the original is gone: nothing to show
				}
			}
			triples = append(triples, itoa(it.OriginalID), itoa(it.PostID), itoa(author))
		}
		args = append(args, itoa(p.celeb), itoa(p.copy.Floor()), len(triples)/3)
		args = append(args, triples...)
	}
	k := reads.d.Keys
	keys := []string{k.Inbox(reader), k.InboxSources(reader), k.RebuildLock(reader), k.Following(reader), k.FollowingVersion(reader)}
	n, skipped, err := parseFold(foldScript.Run(ctx, reads.d.Redis, keys, args...))
	if err != nil {
		return redisx.Fail(err)
	}
	reads.d.Metrics.Folds.WithLabelValues(foldOutcome(n)).Inc()
	if n != foldDone {
		return nil // no inbox, a rebuild, or a follow change: the next page folds
	}
	if len(skipped) > 0 {
		reads.d.Metrics.Folds.WithLabelValues("below").Add(float64(len(skipped)))
		parts = slices.DeleteFunc(parts, func(p part) bool { return slices.Contains(skipped, p.celeb) })
	}
	next := make(foldMarks, len(marks)+len(parts))
	for c, m := range marks {
		if m.following == following {
			next[c] = m
		}
	}
	for _, p := range parts {
		next[p.celeb] = foldMark{following: following, version: p.copy.Version()}
	}
	reads.inboxes.folds.Set(reader, next)
	return nil
}

// parseFold reads foldScript's answer: its outcome and, when it folded,
// the celebrities it left out.
func parseFold(cmd *redis.Cmd) (int, []int64, error) {
	v, err := cmd.Result()
	if err != nil {
		return 0, nil, err
	}
	switch v := v.(type) {
	case int64:
		return int(v), nil, nil
	case []any:
		if len(v) == 2 {
			code, _ := v[0].(int64)
			ids, _ := v[1].([]any)
			var skipped []int64
			for _, id := range ids {
				s, _ := id.(string)
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return 0, nil, fmt.Errorf("fold answered %v", v)
				}
				skipped = append(skipped, n)
			}
			return int(code), skipped, nil
		}
	}
	return 0, nil, fmt.Errorf("fold answered %v", v)
}

// foldOutcome is the metric label of foldScript's answer.
func foldOutcome(n int) string {
	switch n {
	case foldDone:
		return "folded"
	case foldStale:
		return "stale"
	case rebuilding:
		return "rebuilding"
	}
	return "missing"
}

// foldScript folds celebrities' outboxes into the inbox (luaInboxLib's
// KEYS, and KEYS[5] the followee set's version) if the followee set is
// still at version ARGV[1]; ARGV[2] is the inbox's cap, ARGV[3] its trim
// slack. Then, for each celebrity: its id, its outbox's floor, n, and n
// triples (original, event, the original's author). Each triple is an
// arrival as addSourceScript records it (no arrival the reader's feed
// hides; below the floor, none that would enter, and an entry that one
// moves there leaves); a celebrity whose outbox's floor lies above
// the inbox's is left out. It publishes nothing: the celebrities' posts
// were announced on their own channels, and the pages and counts that
// merged them counted them already. Answers {foldDone, the celebrities
// left out}, foldStale, inboxMissing or rebuilding.
var foldScript = redis.NewScript(luaInboxLib + `
local g = gate(tonumber(ARGV[2])) if g then return g end
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 3 end
local fl = floor()
local hashed = false
local skipped = {}
local i = 4
while i <= #ARGV do
  local u, cf, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  i = i + 3
  local hidden = redis.call('SISMEMBER', KEYS[4], 'h' .. u) == 1
  if tonumber(cf) > fl then
    skipped[#skipped + 1] = u
    i = i + 3 * n
    n = 0
  end
  for _ = 1, n do
    local o, e, author = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    i = i + 3
    if not hidden and (author == u or redis.call('SISMEMBER', KEYS[4], 'h' .. author) == 0) then
      if tonumber(e) >= fl and redis.call('ZADD', KEYS[1], 'NX', e, o) == 1 then
        if not (u == author and e == o) then
          redis.call('HSET', KEYS[2], o, u)
          hashed = true
        end
      else
        -- An entry the inbox holds gets the arrival, even one below the
        -- floor: then the entry leaves, and MySQL places it (store).
        local list, known = sources(o, author)
        local seen = #list == 0
        for _, s in ipairs(list) do
          if s[1] == u and s[2] == e then seen = true break end
        end
        if not seen then
          list[#list + 1] = {u, e}
          store(o, author, list, fl, known)
        end
      end
    end
  end
end
if hashed then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
end
trim(tonumber(ARGV[2]), tonumber(ARGV[3]))
return {1, skipped}`)
