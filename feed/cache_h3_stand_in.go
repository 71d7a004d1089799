package feed

import (
	"context"

	"feedservice/models"
)

// The tiers below the local one, as MySQL alone: stand-ins for the Redis
// tier of another branch, which replaces this file.

// postsBelowLocal loads posts by id from the tiers below the local one.
func (e *Engine) postsBelowLocal(ctx context.Context, ids []int64) (map[int64]*models.Post, error) {
	posts, err := e.store.PostsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*models.Post, len(posts))
	for _, p := range posts {
		out[p.ID] = p
	}
	return out, nil
}

// usersBelowLocal loads users by id from the tiers below the local one.
func (e *Engine) usersBelowLocal(ctx context.Context, ids []int64) (map[int64]*models.User, error) {
	users, err := e.store.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*models.User, len(users))
	for _, u := range users {
		out[u.ID] = u
	}
	return out, nil
}
