package fanout

import (
	"context"
	"errors"
	"fmt"

	"feedservice/feed/livemsg"
)

// A Hiding is a block or mute of Other by Actor, or its end. A block
// changes what each of the two sees of the other; a mute, what the actor
// sees.
type Hiding struct {
	Actor, Other int64
	Block        bool
}

// Readers are the users whose view h changed: the actor, and for a block
// the other user.
func (h Hiding) Readers() []int64 {
	if h.Block {
		return []int64{h.Actor, h.Other}
	}
	return []int64{h.Actor}
}

// ResetInboxes resets the inboxes of h's readers, to be rebuilt from MySQL
// through the new view, and tells their live listeners to re-subscribe and
// recount (livemsg.Hid). The other user's reset, for a block, is bounded:
// at most one per BlockResetInterval, else their followee set is patched
// or the reset deferred (timeline.Inboxes.ResetOther).
//
// It runs twice for each change. After the commit (afterCommit true) the
// actor's inbox is reset outright and every reader told, so that the
// actor's next read, on any instance, reflects the change. For the
// change's stream event only an inbox that does not reflect it yet is
// reset and its reader told (timeline.Inboxes.ResetIfStale): the first run
// may have been lost.
//
// Every reader is tried. It returns the readers whose inbox it reset (after
// the commit, the actor's always: a failed reset may have done part), and
// the errors.
func (st *Stream) ResetInboxes(ctx context.Context, h Hiding, afterCommit bool) (reset []int64, err error) {
	var errs []error
	for i, reader := range h.Readers() {
		other := h.Other
		if reader == h.Other {
			other = h.Actor
		}
		var done bool
		var rerr error
		switch {
		case !afterCommit:
			done, rerr = st.inboxes.ResetIfStale(ctx, reader, other, i > 0)
		case i == 0:
			done, rerr = true, st.inboxes.Reset(ctx, reader)
		default:
			done, rerr = st.inboxes.ResetOther(ctx, reader, other)
		}
		if rerr != nil {
			errs = append(errs, fmt.Errorf("reset the inbox of %d: %w", reader, rerr))
		}
		if done {
			reset = append(reset, reader)
		}
		if done || afterCommit {
			st.pub.Publish(ctx, st.d.Keys.ReaderChannel(reader), livemsg.Hid(other))
		}
	}
	return reset, errors.Join(errs...)
}

// onHidingChanged repeats, for h's stream event, the cache refresh and the
// inbox resets its mutation made after the commit (see ResetInboxes),
// where they were lost.
func (st *Stream) onHidingChanged(ctx context.Context, h Hiding) error {
	if err := st.cache.RefreshCopies(ctx, []int64{h.Actor, h.Other}, nil); err != nil {
		return err
	}
	_, err := st.ResetInboxes(ctx, h, false)
	return err
}
