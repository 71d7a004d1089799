package timeline

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/redisx"
)

// The state of a reader's followee set, as readerStateScript tells it.
const (
	FollowingMissing   = 0
	FollowingWhole     = 1 // read whole: the ids came back
	FollowingLarge     = 2 // more members than FollowingReadMax: ask per page
	FollowingUnchanged = 3 // the caller's copy is at the set's version: no ids sent
)

// FollowingState is what readerStateScript said of the followee set.
type FollowingState struct {
	State   int
	IDs     []int64 // sorted; when read whole
	Hidden  []int64 // the hidden users, sorted; when read whole
	Version string  // the set's version, when read whole or unchanged; "" for none
}

// StateRead is a read of a reader's state queued on a pipeline (see
// QueueState), with the copy of the followee set it was sent with: only
// that copy's version may be confirmed, whatever another read stores
// meanwhile.
type StateRead struct {
	Held FolloweeCopy
	keys []string
	cmd  *redis.Cmd
}

// QueueState queues, on pipe, the read of reader's state: whether their
// inbox exists, and their followee set (whole unless it is large, or only
// its version when this instance's copy is at it).
func (x *Inboxes) QueueState(ctx context.Context, pipe redis.Pipeliner, reader int64) *StateRead {
	k := x.d.Keys
	s := &StateRead{Held: x.FolloweeCopy(reader), keys: []string{k.Inbox(reader), k.Following(reader), k.FollowingVersion(reader)}}
	s.cmd = readerStateScript.EvalSha(ctx, pipe, s.keys, x.d.Cfg.FollowingReadMax, s.Held.Version)
	return s
}

// FinishState is the state a queued read answered (read again alone when
// Redis did not know the script).
func (x *Inboxes) FinishState(ctx context.Context, s *StateRead) (inbox bool, set FollowingState, err error) {
	if redisx.IsNoScript(s.cmd.Err()) {
		return x.ReadState(ctx, s) // Redis restarted
	}
	return parseState(s.cmd)
}

// ReadState reads s's state again, alone (after a rebuild).
func (x *Inboxes) ReadState(ctx context.Context, s *StateRead) (inbox bool, set FollowingState, err error) {
	return parseState(readerStateScript.Run(ctx, x.d.Redis, s.keys, x.d.Cfg.FollowingReadMax, s.Held.Version))
}

// parseState decodes readerStateScript's answer: whether the inbox exists,
// and the followee set.
func parseState(cmd *redis.Cmd) (bool, FollowingState, error) {
	vals, err := cmd.Slice()
	if err != nil {
		return false, FollowingState{}, err
	}
	if len(vals) != 4 {
		return false, FollowingState{}, fmt.Errorf("reader state: %v", vals)
	}
	inbox, _ := vals[0].(int64)
	state, _ := vals[1].(int64)
	joined, _ := vals[2].(string)
	version, _ := vals[3].(string)
	set := FollowingState{State: int(state), Version: version}
	if set.State == FollowingWhole {
		set.IDs, set.Hidden = parseFollowing(joined)
	}
	return inbox == 1, set, nil
}
