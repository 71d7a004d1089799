package feed

import "context"

// syncInvalidations returns once this instance has applied every
// invalidation message published before the call: the tests read across
// instances "after the messages arrived", as WaitIdle is "after the
// workers".
func (e *Engine) syncInvalidations(ctx context.Context) error {
	if e.hub == nil {
		return nil // not started: no local copies to drop by message
	}
	return e.cache.SyncInvalidations(ctx)
}
