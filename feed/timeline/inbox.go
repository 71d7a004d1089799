package timeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/internal/redisx"
	"feedservice/feed/livemsg"

	"github.com/redis/go-redis/v9"
)

// An inbox holds a reader's recent feed entries (see keyspace.Keys.Inbox). Each entry
// is an original post, scored by its first arrival, with the sources that
// brought it (see keyspace.Keys.InboxSources): its author, at the post's own id, and
// the followees who reposted it, at their reposts' ids. With the sources at
// hand, an unfollow or a delete fixes an entry without reading the inbox
// back or asking MySQL about it. Every change runs in a Lua script over the
// keys of one user, so it is atomic and one Cluster slot.

// Source is one arrival of an entry: user brought it with post event.
type Source struct {
	User  int64
	Event int64
}

// The outcome of a script that changes an inbox.
const (
	inboxMissing = 0 // no inbox: an inactive reader, nothing to do
	inboxDone    = 1
	rebuilding   = 2 // a rebuild is running: wait for it, then apply (package outbox's scripts answer so too)
	inboxChanged = 4 // (addSourceScript) an entry moved or left
	// (addSourceScript) the source was recorded before: a re-delivery,
	// after a failure that may have lost the first delivery's announcement
	inboxRecorded = 5
)

// luaInboxLib is shared by the scripts that change an inbox.
// KEYS[1] inbox, KEYS[2] sources, KEYS[3] rebuild lock, KEYS[4] the
// reader's followee set (which names the users their feed hides).
//
// An inbox is whole only with its floor marker: a key without it was
// written by the fan-out's plain commands after the inbox went (see
// Deliver), and is absent to every script and read. gate answers nil for
// a whole inbox, after it settled a trim the fan-out made (see trimFlag).
const luaInboxLib = `
-- Ids stay strings whenever they go back to Redis: Lua would print a
-- number with 14 digits, and ids have 15 or more.
local function floor()
  local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
  if #m == 0 then return 0 end
  return tonumber(string.sub(m[1], 2))
end
local function set_floor(f)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], -1, -1)
  redis.call('ZADD', KEYS[1], -1, '~' .. f)
end
` + luaSettle + `
local function gate(cap)
  local m = redis.call('ZRANGEBYSCORE', KEYS[1], -2, -1)
  local whole, flagged = false, false
  for _, x in ipairs(m) do
    if x == '` + trimFlag + `' then flagged = true else whole = true end
  end
  if whole then
    if flagged then settle(cap) settle_sources() end
    return nil
  end
  if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
  return 0
end
-- sources of entry o: its hash field, else the author alone if it is in
-- the inbox, else none. What it learned on the way goes back too, so that
-- store need not ask again: whether o has a hash field, and, when it has
-- none, o's score (false when o is not in the inbox). A part of the field
-- without an event is the arrival at the entry's score (see
-- formatSources).
local function sources(o, author)
  local list = {}
  local s = redis.call('HGET', KEYS[2], o)
  if s then
    local key
    for part in string.gmatch(s, '[^,]+') do
      local u, e = string.match(part, '^(%d+):(%d+)$')
      if not u then
        u = part
        key = key or redis.call('ZSCORE', KEYS[1], o)
        e = key
      end
      if u and e then list[#list + 1] = {u, e} end
    end
    return list, {hashed = true}
  end
  local score = redis.call('ZSCORE', KEYS[1], o)
  if score then list[1] = {author, o} end
  return list, {hashed = false, before = score}
end
-- store writes entry o with its sources; an entry whose first arrival is
-- below the floor leaves the inbox (MySQL serves that part of the feed).
-- It returns what the reader's listeners are to hear: 'add' and the
-- entry's key for an entry that entered, 'change' for one that moved or
-- left, nil for nothing. known is what sources said about o, if the
-- caller has it.
local function store(o, author, list, fl, known)
  local before
  if known and not known.hashed then
    before = known.before
  else
    before = redis.call('ZSCORE', KEYS[1], o)
  end
  local pos, first = nil, nil
  for _, s in ipairs(list) do
    local e = tonumber(s[2])
    if pos == nil or e < pos then pos, first = e, s[2] end
  end
  if pos == nil or pos < fl then
    redis.call('ZREM', KEYS[1], o)
    redis.call('HDEL', KEYS[2], o)
    if before then return 'change' end
    return nil
  end
  redis.call('ZADD', KEYS[1], first, o)
  if #list == 1 and list[1][1] == author and list[1][2] == o then
    if not (known and not known.hashed) then redis.call('HDEL', KEYS[2], o) end
  else
    local parts = {}
    for i, s in ipairs(list) do
      if s[2] == first then parts[i] = s[1] else parts[i] = s[1] .. ':' .. s[2] end
    end
    redis.call('HSET', KEYS[2], o, table.concat(parts, ','))
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  end
  if not before then return 'add', first end
  if tonumber(before) ~= pos then return 'change' end
  return nil
end
-- trim takes the inbox back to cap entries once it holds more than cap +
-- slack (see TrimSlack).
local function trim(cap, slack)
  local n = redis.call('ZCARD', KEYS[1]) - 1
  if n <= cap + slack then return end
  local gone = redis.call('ZRANGE', KEYS[1], 1, n - cap)
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('HDEL', KEYS[2], unpack(gone))
  local low = redis.call('ZRANGE', KEYS[1], 1, 1, 'WITHSCORES')
  set_floor(low[2])
end
-- announce publishes what store returned on the reader's channel ARGV[1].
local function announce(what, key, o)
  if what == 'add' then
    redis.call('PUBLISH', ARGV[1], 'add ' .. o .. ' ' .. key)
  elseif what then
    redis.call('PUBLISH', ARGV[1], what)
  end
end
`

// trimFlag is the member, at score -2, that the fan-out's amortised trim
// (see Deliver) leaves in an inbox whose oldest entries it may have cut
// with a plain ZREMRANGEBYRANK, which cannot move the floor marker. The
// next script or read over the inbox settles it (luaSettle) before it
// trusts the floor: it drops the flag and, when the inbox holds at least
// the cap, raises the floor to the lowest entry. Raising a floor is always
// safe (MySQL serves what lies below it); nothing removes an entry from a
// flagged inbox but the trim, which leaves exactly the cap.
const trimFlag = "~t"

// luaSettle settles the trim flag of the inbox KEYS[1] holding entries up
// to cap (settle), and drops the sources KEYS[2] of the entries the trim
// cut (settle_sources): see trimFlag.
const luaSettle = `
local function settle(cap)
  redis.call('ZREM', KEYS[1], '` + trimFlag + `')
  if redis.call('ZCARD', KEYS[1]) - 1 < cap then return end
  local low = redis.call('ZRANGE', KEYS[1], 1, 1, 'WITHSCORES')
  local m = redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)
  if #m == 0 or #low == 0 or tonumber(low[2]) <= tonumber(string.sub(m[1], 2)) then return end
  redis.call('ZREM', KEYS[1], m[1])
  redis.call('ZADD', KEYS[1], -1, '~' .. low[2])
end
-- The sources of the entries the trim cut go too (a sources field never
-- outlives its entry). KEYS[2] is the sources hash.
local function settle_sources()
  local fields = redis.call('HKEYS', KEYS[2])
  for first = 1, #fields, 1000 do
    local last = math.min(first + 999, #fields)
    local scores = redis.call('ZMSCORE', KEYS[1], unpack(fields, first, last))
    for i, sc in ipairs(scores) do
      if not sc then redis.call('HDEL', KEYS[2], fields[first + i - 1]) end
    end
  end
end
`

// addSourceScript records that user ARGV[2] brought entry ARGV[1] (by
// author ARGV[4]) with post event ARGV[3], and trims the inbox to ARGV[5]
// entries when it holds more than ARGV[5] + ARGV[6]. It publishes
// nothing: it answers inboxMissing, rebuilding, inboxDone (nothing to
// announce: hidden), inboxChanged (the entry moved or left),
// inboxRecorded (the source was recorded before), or the entry's key (a
// string) when the entry entered the inbox, and Apply announces a round's
// entries in one message (see livemsg.Publisher.AnnounceAdded).
//
// Recording a source twice changes nothing, nor does an arrival the
// reader's feed hides (the followee set names its user or the post's
// author). A new post by its author does not come here but through
// Deliver's plain commands; what comes (a repost, a backfill) costs, for a
// new entry above the inbox's lowest, five calls: the gate's read of the
// floor marker (and the trim flag), ZCOUNT of the entries at or below it
// (any tells that the new one is not below the floor, which is never above
// the lowest entry), the hidden check, ZADD NX and the trim's ZCARD.
var addSourceScript = redis.NewScript(luaInboxLib + `
local o, u, e, author = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local g = gate(tonumber(ARGV[5])) if g then return g end
local below = redis.call('ZCOUNT', KEYS[1], 0, e)
local fl
if below == 0 then fl = floor() end
if redis.call('SISMEMBER', KEYS[4], 'h' .. u) == 1 then return 1 end
if u ~= author and redis.call('SISMEMBER', KEYS[4], 'h' .. author) == 1 then return 1 end
-- A new entry whose only source is this one (a sources field never
-- outlives its entry).
if (below > 0 or tonumber(e) >= fl) and redis.call('ZADD', KEYS[1], 'NX', e, o) == 1 then
  if not (u == author and e == o) then
    redis.call('HSET', KEYS[2], o, u)
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  end
  trim(tonumber(ARGV[5]), tonumber(ARGV[6]))
  return e
end
local list, known = sources(o, author)
for _, s in ipairs(list) do
  if s[1] == u and s[2] == e then return 5 end
end
list[#list + 1] = {u, e}
local what, key = store(o, author, list, fl or floor(), known)
trim(tonumber(ARGV[5]), tonumber(ARGV[6]))
if what == 'add' then return key end
if what then return 4 end
return 1`)

// removeSourceScript takes user ARGV[3]'s arrivals out of entry ARGV[2]
// (author ARGV[5]): the one with event ARGV[4], or all of them for "*".
// The entry moves to its next arrival, or leaves when none is left.
var removeSourceScript = livemsg.NewScript(luaInboxLib + `
local g = gate(tonumber(ARGV[#ARGV])) if g then return g end
local o, u, e, author = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not redis.call('ZSCORE', KEYS[1], o) then return 1 end
local kept = {}
for _, s in ipairs(sources(o, author)) do
  if not (s[1] == u and (e == '*' or s[2] == e)) then kept[#kept + 1] = s end
end
local what, key = store(o, author, kept, floor())
announce(what, key, o)
return 1`)

// dropEntryScript takes entry ARGV[2] out (its post was deleted).
var dropEntryScript = livemsg.NewScript(luaInboxLib + `
local g = gate(tonumber(ARGV[#ARGV])) if g then return g end
if redis.call('ZREM', KEYS[1], ARGV[2]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[2])
  redis.call('PUBLISH', ARGV[1], 'change')
end
return 1`)

// raiseFloorScript raises the inbox floor to ARGV[2]: the entries below it
// leave, and MySQL serves that part of the feed. A backfill that cannot add
// all of a followee's posts raises the floor to the oldest one it adds, so
// that none of the followee's older posts is missed.
var raiseFloorScript = livemsg.NewScript(luaInboxLib + `
local g = gate(tonumber(ARGV[#ARGV])) if g then return g end
if tonumber(ARGV[2]) <= floor() then return 1 end
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], 0, '(' .. ARGV[2])
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('HDEL', KEYS[2], unpack(gone))
  redis.call('PUBLISH', ARGV[1], 'change')
end
set_floor(ARGV[2])
return 1`)

// readInboxScript returns {floor, {member, score, ...}, {sources...},
// {member, score, sources, ...}, due} for up to ARGV[3] entries beyond ARGV[2]
// ("older" or "newer" per ARGV[1]), and for those of the posts ARGV[7..]
// that are in the inbox outside that page, wherever they lie (sources empty
// for the author alone: a merge looks up there the posts it found in
// outboxes, in the same round trip; those in the page are known already);
// nil when there is no inbox, or no whole one (no floor marker). It first
// settles a trim of the fan-out's (see trimFlag), the inbox's cap being
// ARGV[6]. due is 1 when the inbox's or the followee set's (KEYS[3])
// remaining TTL is under ARGV[5] ms: the reader then refreshes the TTLs
// (refreshTTLScript, to ARGV[4] ms; see inboxTTLRefreshDivisor), after it
// raised its score in the index of active inboxes, which a script cannot
// reach (another slot). The posts are looked up with one ZMSCORE
// and one HMGET per redisx.UnpackChunk of them, not a ZSCORE and an HGET each:
// each command called from Lua costs Redis its dispatch and the conversion
// of its reply whatever it does, and a hybrid page asks about every post in
// its celebrities' outbox windows.
var readInboxScript = redis.NewScript(luaSettle + `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return false end
local m = redis.call('ZRANGEBYSCORE', KEYS[1], -2, -1)
local fl, flagged = nil, false
for _, x in ipairs(m) do
  if x == '` + trimFlag + `' then flagged = true else fl = string.sub(x, 2) end
end
if not fl then return false end
if flagged then
  settle(tonumber(ARGV[6]))
  settle_sources()
  fl = string.sub(redis.call('ZRANGEBYSCORE', KEYS[1], -1, -1)[1], 2)
end
local refresh = tonumber(ARGV[5])
local due = 0
if ttl < refresh or redis.call('PTTL', KEYS[3]) < refresh then due = 1 end
local items
if ARGV[1] == 'older' then
  items = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], fl, 'WITHSCORES', 'LIMIT', 0, ARGV[3])
else
  local min = '(' .. ARGV[2]
  if tonumber(ARGV[2]) < tonumber(fl) then min = fl end
  items = redis.call('ZRANGEBYSCORE', KEYS[1], min, '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[3])
end
local srcs = {}
if #items > 0 then
  local members = {}
  for i = 1, #items, 2 do members[#members + 1] = items[i] end
  srcs = redis.call('HMGET', KEYS[2], unpack(members))
end
local asked = {}
if #ARGV > 6 then
  local inPage = {}
  for i = 1, #items, 2 do inPage[items[i]] = true end
  for i = 7, #ARGV do
    if not inPage[ARGV[i]] then asked[#asked + 1] = ARGV[i] end
  end
end
local looked = {}
local chunk = ` + strconv.Itoa(redisx.UnpackChunk) + `
for first = 1, #asked, chunk do
  local last = math.min(first + chunk - 1, #asked)
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(asked, first, last))
  local found = {}
  for i, score in ipairs(scores) do
    if score then
      found[#found + 1] = asked[first + i - 1]
      looked[#looked + 1] = asked[first + i - 1]
      looked[#looked + 1] = score
      looked[#looked + 1] = ''
    end
  end
  if #found > 0 then
    local s = redis.call('HMGET', KEYS[2], unpack(found))
    local at = #looked - 3 * #found
    for i = 1, #found do looked[at + 3 * i] = s[i] or '' end
  end
end
return {fl, items, srcs, looked, due}`)

// refreshTTLScript sets the TTL of the inbox KEYS[1], its sources KEYS[2],
// the followee set KEYS[3] and its version KEYS[4] to ARGV[1] ms. A read
// runs it when readInboxScript says the TTL is due, after it raised the
// reader's score in the index of active inboxes (see Inboxes.refreshTTL).
var refreshTTLScript = redis.NewScript(`
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[1])
return 1`)

// inboxTTLRefreshDivisor sets how often reads refresh an inbox's TTL: only
// once InboxTTL/inboxTTLRefreshDivisor of it has run out (16.8 hours of the
// default 7 days), not on every read. A warm page then runs two PTTLs where
// it ran four PEXPIREs and an EXISTS, and an inbox lives at least
// InboxTTL*(1-1/inboxTTLRefreshDivisor) after its last read, and at most
// InboxTTL.
const inboxTTLRefreshDivisor = 10

// swapInboxScript replaces the inbox, and the followee set beside it, with
// rebuilt ones, keeping the entries the fan-out wrote meanwhile into the
// key the inbox will take (see Deliver: the rebuild raised the reader in
// the index of active inboxes before it read MySQL, so an entry that
// MySQL's answer lacks was written there; reads filter what is stale), if the rebuild still holds the lock (token ARGV[1]); KEYS:
// temp inbox, temp sources, inbox, sources, lock, temp followee set,
// followee set, its version. ARGV[2] is the TTL in ms, ARGV[3] the set's
// new version.
var swapInboxScript = redis.NewScript(`
if redis.call('GET', KEYS[5]) ~= ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[6])
  return 0
end
local late = redis.call('ZRANGEBYSCORE', KEYS[3], '(0', '+inf', 'WITHSCORES')
for i = 1, #late, 2 do redis.call('ZADD', KEYS[1], 'NX', late[i + 1], late[i]) end
redis.call('RENAME', KEYS[1], KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('RENAME', KEYS[6], KEYS[7])
redis.call('PEXPIRE', KEYS[7], ARGV[2])
redis.call('SET', KEYS[8], ARGV[3], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('RENAME', KEYS[2], KEYS[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[2])
else
  redis.call('DEL', KEYS[4])
end
redis.call('DEL', KEYS[5])
return 1`)

// InboxItem is one entry read from an inbox.
type InboxItem struct {
	PostID  int64
	Score   int64
	Sources []Source // nil: the author alone, at the post's id
}

// inboxPage is what one read of an inbox found.
type inboxPage struct {
	Floor int64 // entries below it are not in the inbox; 0: MySQL has nothing older
	Items []InboxItem
	// Looked are the posts looked up beside the page that are in the
	// inbox, wherever they lie.
	Looked []InboxItem
	// refreshDue says the TTL of the reader's keys is to be refreshed.
	refreshDue bool
}

// errNoInbox is returned by readPage when the reader has no inbox.
var errNoInbox = errors.New("no inbox")

// readPage reads up to limit entries beyond bound, looks up the posts
// lookups, and refreshes the TTL when it runs low.
func (ib *Inboxes) readPage(ctx context.Context, userID int64, older bool, bound int64, limit int, lookups []int64) (inboxPage, error) {
	keys, args := ib.readArgs(userID, older, bound, limit, lookups)
	return ib.refreshIfDue(ctx, userID)(parseInboxPage(userID, readInboxScript.Run(ctx, ib.d.Redis, keys, args...)))
}

// refreshIfDue passes a page read on, after it refreshed the TTL of the
// reader's keys if the page says it is due. A failed refresh fails the
// read: the next read tries again.
func (ib *Inboxes) refreshIfDue(ctx context.Context, reader int64) func(inboxPage, error) (inboxPage, error) {
	return func(page inboxPage, err error) (inboxPage, error) {
		if err != nil || !page.refreshDue {
			return page, err
		}
		return page, ib.refreshTTL(ctx, reader)
	}
}

// refreshTTL raises reader's score in the index of active inboxes, then
// sets their keys' TTL back to InboxTTL: in that order, so that the index
// never says an inbox is gone while it lives (the fan-out would skip it,
// and the inbox would miss an entry).
func (ib *Inboxes) refreshTTL(ctx context.Context, reader int64) error {
	if err := ib.activate(ctx, reader); err != nil {
		return err
	}
	k := ib.d.Keys
	keys := []string{k.Inbox(reader), k.InboxSources(reader), k.Following(reader), k.FollowingVersion(reader)}
	return refreshTTLScript.Run(ctx, ib.d.Redis, keys, ib.d.Cfg.InboxTTL.Milliseconds()).Err()
}

// queueRead adds readInboxScript to pipe, for a read that shares a
// round trip with others; finishRead reads its answer.
func (ib *Inboxes) queueRead(ctx context.Context, pipe redis.Pipeliner, userID int64, older bool, bound int64, limit int, lookups []int64) *redis.Cmd {
	keys, args := ib.readArgs(userID, older, bound, limit, lookups)
	return readInboxScript.EvalSha(ctx, pipe, keys, args...)
}

// finishRead is the page a queued inbox read answered, or, when the
// script was not loaded yet (Redis restarted), the page read again alone.
func (ib *Inboxes) finishRead(ctx context.Context, cmd *redis.Cmd, userID int64, older bool, bound int64, limit int, lookups []int64) (inboxPage, error) {
	if redisx.IsNoScript(cmd.Err()) {
		return ib.readPage(ctx, userID, older, bound, limit, lookups)
	}
	return ib.refreshIfDue(ctx, userID)(parseInboxPage(userID, cmd))
}

func (ib *Inboxes) readArgs(userID int64, older bool, bound int64, limit int, lookups []int64) ([]string, []any) {
	dir := "newer"
	if older {
		dir = "older"
	}
	keys := []string{ib.d.Keys.Inbox(userID), ib.d.Keys.InboxSources(userID), ib.d.Keys.Following(userID), ib.d.Keys.FollowingVersion(userID)}
	ttl := ib.d.Cfg.InboxTTL
	args := make([]any, 0, 6+len(lookups))
	args = append(args, dir, scoreArg(bound), limit, ttl.Milliseconds(), (ttl - ttl/inboxTTLRefreshDivisor).Milliseconds(), ib.d.Cfg.InboxCap)
	for _, id := range lookups {
		args = append(args, itoa(id))
	}
	return keys, args
}

// parseInboxPage reads readInboxScript's answer.
func parseInboxPage(userID int64, cmd *redis.Cmd) (inboxPage, error) {
	raw, err := cmd.Slice()
	if errors.Is(err, redis.Nil) {
		return inboxPage{}, errNoInbox
	}
	if err != nil {
		return inboxPage{}, err
	}
	var page inboxPage
	page.Floor, _ = strconv.ParseInt(raw[0].(string), 10, 64)
	items, _ := raw[1].([]any)
	srcs, _ := raw[2].([]any)
	for i := 0; i+1 < len(items); i += 2 {
		id, err1 := strconv.ParseInt(items[i].(string), 10, 64)
		score, err2 := strconv.ParseFloat(items[i+1].(string), 64)
		if err1 != nil || err2 != nil {
			return inboxPage{}, fmt.Errorf("inbox of %d holds %v", userID, items[i])
		}
		item := InboxItem{PostID: id, Score: int64(score)}
		if s, ok := srcs[i/2].(string); ok {
			item.Sources = parseSources(s, item.Score)
		}
		page.Items = append(page.Items, item)
	}
	looked, _ := raw[3].([]any)
	for i := 0; i+2 < len(looked); i += 3 {
		m, _ := looked[i].(string)
		sc, _ := looked[i+1].(string)
		id, err1 := strconv.ParseInt(m, 10, 64)
		score, err2 := strconv.ParseFloat(sc, 64)
		if err1 != nil || err2 != nil {
			return inboxPage{}, fmt.Errorf("inbox of %d holds %v", userID, looked[i])
		}
		item := InboxItem{PostID: id, Score: int64(score)}
		if s, _ := looked[i+2].(string); s != "" {
			item.Sources = parseSources(s, item.Score)
		}
		page.Looked = append(page.Looked, item)
	}
	if len(raw) > 4 {
		due, _ := raw[4].(int64)
		page.refreshDue = due == 1
	}
	return page, nil
}

// lookup queues, on pipe, the lookup of the given posts in the
// reader's inbox; the function it returns, once pipe ran, gives those in
// it (the others are left out). With no posts, pipe is not used (nil will do).
// One ZMSCORE names them all, where a missing member reads as 0: no entry
// scores 0 (an entry's score is the id of a post, and the floor marker's
// is -1).
func (ib *Inboxes) lookup(ctx context.Context, pipe redis.Pipeliner, reader int64, posts []int64) func() ([]InboxItem, error) {
	if len(posts) == 0 {
		return func() ([]InboxItem, error) { return nil, nil }
	}
	members := make([]string, len(posts))
	for i, p := range posts {
		members[i] = itoa(p)
	}
	scores := pipe.ZMScore(ctx, ib.d.Keys.Inbox(reader), members...)
	srcs := pipe.HMGet(ctx, ib.d.Keys.InboxSources(reader), members...)
	return func() ([]InboxItem, error) {
		if err := scores.Err(); err != nil {
			return nil, err
		}
		if err := srcs.Err(); err != nil {
			return nil, err
		}
		var out []InboxItem
		for i, p := range posts {
			score := scores.Val()[i]
			if score == 0 {
				continue // not in the inbox
			}
			item := InboxItem{PostID: p, Score: int64(score)}
			if s, ok := srcs.Val()[i].(string); ok {
				item.Sources = parseSources(s, item.Score)
			}
			out = append(out, item)
		}
		return out, nil
	}
}

// scoreArg writes a bound for a score range; MaxInt64 (no bound) as +inf.
func scoreArg(bound int64) string {
	if bound == math.MaxInt64 {
		return "+inf"
	}
	return strconv.FormatInt(bound, 10)
}

// parseSources reads the sources field of an entry keyed key (see
// formatSources).
func parseSources(s string, key int64) []Source {
	var out []Source
	for _, part := range strings.Split(s, ",") {
		u, ev, ok := strings.Cut(part, ":")
		uid, err1 := strconv.ParseInt(u, 10, 64)
		eid, err2 := key, error(nil)
		if ok {
			eid, err2 = strconv.ParseInt(ev, 10, 64)
		}
		if err1 == nil && err2 == nil {
			out = append(out, Source{User: uid, Event: eid})
		}
	}
	return out
}

// formatSources writes the sources of an entry keyed key as its field of
// the sources hash: "user:event" for each arrival, joined by commas, but
// the user alone for the arrival at key (the entry's first, whose event is
// its score). A repost that alone brought an entry is then one integer,
// which a listpack holds in 9 bytes where "user:event" took 35.
func formatSources(list []Source, key int64) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = strconv.FormatInt(s.User, 10)
		if s.Event != key {
			parts[i] += ":" + strconv.FormatInt(s.Event, 10)
		}
	}
	return strings.Join(parts, ",")
}

// Change is one change of one reader's inbox.
type Change struct {
	script *livemsg.Script // nil: an added source (see AddSource)
	reader int64
	args   []any
}

// AddSource records that s brought reader's entry postID (by author),
// trimming the inbox to capEntries past its slack. Its script publishes
// nothing: Apply announces the entries a round added in one message an
// entry (see livemsg.Publisher.AnnounceAdded).
func AddSource(reader, postID, author int64, s Source, capEntries int) Change {
	return Change{nil, reader, []any{postID, s.User, s.Event, author, capEntries, TrimSlack(capEntries)}}
}

// inboxTrimSlackDivisor sets how far past its cap an inbox may grow before
// an added entry trims it back to the cap: by cap/inboxTrimSlackDivisor
// entries (50 of the default 800; none under a cap of 16). Trimming (the
// oldest entries' removal and the floor's move) is most of the cost of
// adding an entry to a full inbox; done once per slack entries instead of
// at each, a fan-out to thousands of full inboxes takes Redis about half
// the time. The entries past the cap are above the floor, so reads serve
// them as any other.
const inboxTrimSlackDivisor = 16

// TrimSlack is how many entries past capEntries an inbox may hold.
func TrimSlack(capEntries int) int { return capEntries / inboxTrimSlackDivisor }

// RemoveSource takes user's arrival event ("*": all of theirs) out of
// reader's entry postID (by author).
func RemoveSource(reader, postID, author, user int64, event string) Change {
	return Change{removeSourceScript, reader, []any{postID, user, event, author}}
}

// RaiseFloor raises reader's inbox floor to floor.
func RaiseFloor(reader, floor int64) Change {
	return Change{raiseFloorScript, reader, []any{floor}}
}

// DropEntry takes reader's entry postID out (its post was deleted).
func DropEntry(reader, postID int64) Change {
	return Change{dropEntryScript, reader, []any{postID}}
}

func (ib *Inboxes) keys(reader int64) []string {
	return []string{ib.d.Keys.Inbox(reader), ib.d.Keys.InboxSources(reader), ib.d.Keys.RebuildLock(reader), ib.d.Keys.Following(reader)}
}

// rebuildWaitLimit bounds how long a change waits for a running rebuild.
const rebuildWaitLimit = 5 * time.Second

// inboxPipelineSize bounds the changes sent in one round trip, so that each
// stays well within the Redis read timeout on a loaded server (a change is
// a script of some microseconds). A fan-out task of
// DefaultFanoutBatchSize readers is one round trip.
const inboxPipelineSize = config.DefaultFanoutBatchSize

// Apply runs changes, pipelined in rounds of inboxPipelineSize. A
// change that meets a running rebuild waits for it and runs again, so it
// lands on the rebuilt inbox. It returns how many changes found an inbox.
func (ib *Inboxes) Apply(ctx context.Context, changes []Change) (int, error) {
	applied := 0
	for len(changes) > inboxPipelineSize {
		n, err := ib.applyRound(ctx, changes[:inboxPipelineSize])
		applied += n
		if err != nil {
			return applied, err
		}
		changes = changes[inboxPipelineSize:]
	}
	n, err := ib.applyRound(ctx, changes)
	return applied + n, err
}

// announced collects what a round's batches of added sources are to
// announce: the readers an entry entered, by entry, and the readers whose
// entry moved or left.
type announced struct {
	added   map[livemsg.Add][]int64
	changed []int64
}

func (ib *Inboxes) applyRound(ctx context.Context, changes []Change) (int, error) {
	applied := 0
	deadline := time.Now().Add(rebuildWaitLimit)
	for len(changes) > 0 {
		pipe := ib.d.Redis.Pipeline()
		cmds := make([]*redis.Cmd, len(changes))
		for i, c := range changes {
			cmds[i] = ib.script(c).EvalSha(ctx, pipe, ib.keys(c.reader), ib.scriptArgs(c)...)
		}
		_, failed := pipe.Exec(ctx)
		if failed != nil && redisx.IsNoScript(failed) {
			failed = nil
		}
		var again []Change
		ann := announced{added: map[livemsg.Add][]int64{}}
		for i, cmd := range cmds {
			c := changes[i]
			if failed != nil {
				// Announce what the answers that came say, before the error.
				if cmd.Err() == nil {
					ib.collect(c, cmd.Val(), &ann)
				}
				continue
			}
			outcome, err := redisx.Queued(ctx, ib.d.Redis, ib.script(c), cmd, ib.keys(c.reader), ib.scriptArgs(c)...).Result()
			if err != nil {
				ib.announce(ctx, ann)
				return applied, err
			}
			n, isCode := outcome.(int64)
			switch {
			case isCode && n == rebuilding:
				again = append(again, c)
			case isCode && n == inboxMissing:
			default:
				applied++
				ib.collect(c, outcome, &ann)
			}
		}
		ib.announce(ctx, ann)
		if failed != nil {
			return applied, failed
		}
		if len(again) > 0 {
			if time.Now().After(deadline) {
				return applied, fmt.Errorf("%d inbox changes waited past %s for a rebuild", len(again), rebuildWaitLimit)
			}
			time.Sleep(10 * time.Millisecond)
		}
		changes = again
	}
	return applied, nil
}

// script is the script that makes change c.
func (ib *Inboxes) script(c Change) *redis.Script {
	if c.script == nil {
		return addSourceScript
	}
	return c.script.For(ib.d.Redis)
}

// scriptArgs are change c's script arguments: an added source's own,
// another change's after the reader's channel, on which its script
// publishes, and before the inbox's cap (which settling a trim needs).
func (ib *Inboxes) scriptArgs(c Change) []any {
	if c.script == nil {
		return c.args
	}
	args := make([]any, 0, len(c.args)+2)
	args = append(args, ib.d.Keys.ReaderChannel(c.reader))
	args = append(args, c.args...)
	return append(args, ib.d.Cfg.InboxCap)
}

// collect adds to ann what added source c's script answered, if anything.
func (ib *Inboxes) collect(c Change, outcome any, ann *announced) {
	if c.script != nil {
		return
	}
	switch o := outcome.(type) {
	case string:
		key, _ := strconv.ParseInt(o, 10, 64)
		add := livemsg.Add{Post: c.args[0].(int64), Key: key}
		ann.added[add] = append(ann.added[add], c.reader)
	case int64:
		// A re-delivery is announced as a change: the first delivery's
		// announcement may have been lost with its answers (a timeout, a
		// worker that died), and a change makes a count recount, where a
		// second "add" would hand a feedItemAdded subscriber the entry twice.
		if o == inboxChanged || o == inboxRecorded {
			ann.changed = append(ann.changed, c.reader)
		}
	}
}

// announce tells the readers' listeners, on every instance, what a round
// of added sources changed: one message an entry, one for the changes.
func (ib *Inboxes) announce(ctx context.Context, ann announced) {
	for add, readers := range ann.added {
		ib.pub.AnnounceAdded(ctx, add, readers)
	}
	if len(ann.changed) > 0 {
		ib.pub.AnnounceChanged(ctx, ann.changed)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
