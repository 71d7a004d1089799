package fanout

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// trimStreamScript drops the fan-out stream's entries that every consumer
// group is done with, and returns how many it dropped and how many remain.
// An entry is still needed while a group has not read it yet (past the
// group's last-delivered-id) or read it and not acknowledged it (pending:
// a worker may still be on it, or died and leaves it to be claimed), so the
// trim stops at the oldest of those over all groups (XTRIM MINID keeps
// entries at or above the id). It runs as one script: no group can read,
// acknowledge or be created between the look and the trim. A stream
// without a group is left alone (the MAXLEN cap bounds it). Ids are
// "ms-seq"; ms is compared as a number (below 2^53) and seq too. The
// embedded default's in-process Redis reports a group's last-delivered-id
// 0-0 as "0", read as ms 0, seq 0.
var trimStreamScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {0, 0}
end
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
if #groups == 0 then
  return {0, redis.call('XLEN', KEYS[1])}
end
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  if ms == nil then
    ms, seq = string.match(id, '^(%d+)$'), '0' -- the embedded Redis says "0" for 0-0
  end
  return ms, tonumber(ms), tonumber(seq)
end
local floorText, floorMs, floorSeq
local function lower(text, ms, seq)
  if floorText == nil or ms < floorMs or (ms == floorMs and seq < floorSeq) then
    floorText, floorMs, floorSeq = text, ms, seq
  end
end
for _, g in ipairs(groups) do
  local name, last
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
  end
  -- The first entry the group has not read: the one after last-delivered-id.
  local msText, ms, seq = parse(last)
  lower(msText .. '-' .. (seq + 1), ms, seq + 1)
  local pending = redis.call('XPENDING', KEYS[1], name)
  if pending[1] > 0 then
    local _, pms, pseq = parse(pending[2])
    lower(pending[2], pms, pseq)
  end
end
local trimmed = redis.call('XTRIM', KEYS[1], 'MINID', floorText)
return {trimmed, redis.call('XLEN', KEYS[1])}`)

// TrimStream drops the stream entries every group acknowledged, and
// returns how many it dropped and the stream's length after.
func (st *Stream) TrimStream(ctx context.Context) (trimmed, length int64, err error) {
	res, err := trimStreamScript.Run(ctx, st.d.Redis, []string{st.d.Keys.Stream()}).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	return res[0], res[1], nil
}

// trimStreamOnce trims the stream and notes its length. The dispatcher
// calls it every StreamTrimInterval while it holds its lease, so one
// instance trims at a time (the script would make several safe, but each
// would look at every group for nothing).
func (st *Stream) trimStreamOnce(ctx context.Context) {
	_, length, err := st.TrimStream(ctx)
	if err != nil {
		if ctx.Err() == nil {
			st.d.Log.Warn("trim fan-out stream", "err", err)
		}
		return
	}
	st.d.Metrics.StreamLength.Set(float64(length))
}
