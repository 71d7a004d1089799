package feed

import (
	"context"

	"feedservice/feed/config"
)

// afterCommit runs after a change and its outbox event were committed. It
// wakes the dispatcher, and applies the change to the actor's own inbox at
// once (ownInbox), so that who follows or unfollows sees it on the next
// read. The event does the same again later, harmlessly; a failure here is
// only logged, since the event will do it.
func (e *Engine) afterCommit(ctx context.Context, ownInbox func(context.Context) error) {
	e.stream.Poke()
	if ownInbox == nil || e.cfg.Mode == config.ModePull {
		return
	}
	if err := ownInbox(ctx); err != nil {
		e.log.WarnContext(ctx, "apply change to own inbox; the fan-out will", "err", err)
	}
}
