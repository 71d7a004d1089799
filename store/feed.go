package store

import (
	"cmp"
	"context"
	"slices"

	"gorm.io/gorm"

	"feedservice/models"
)

// FeedEvent is a live post or repost as the pull feed scans it: ids only, so
// the scan reads the (author_id, id, repost_of_id, deleted_at) index alone.
type FeedEvent struct {
	ID         int64
	AuthorID   int64
	RepostOfID *int64
}

// OriginalID is the post the event stands for in a feed.
func (e FeedEvent) OriginalID() int64 {
	if e.RepostOfID != nil {
		return *e.RepostOfID
	}
	return e.ID
}

// FeedEvents lists the live posts and reposts by authorIDs beyond bound, in
// page order: the pull feed's scan. A window's edge other than 0 stops the
// list there (edge included): older events from edge up, newer ones up to
// edge. Each author's events are then a range of the (author_id, id)
// index, so the statement reads the window's rows alone; without an edge
// it reads every row by authorIDs beyond bound, whatever limit is, before
// it sorts them (a filesort of 40,000 rows for 42 at 200 authors of 200
// posts, against about 100 rows read for a window of a day's posts).
func (s *Store) FeedEvents(ctx context.Context, authorIDs []int64, dir Direction, bound, edge int64, limit int) ([]FeedEvent, error) {
	var events []FeedEvent
	if len(authorIDs) == 0 {
		return events, nil
	}
	q := s.read(ctx).Model(&models.Post{}).Select("id, author_id, repost_of_id").
		Where("author_id IN ? AND deleted_at IS NULL", authorIDs)
	switch {
	case edge != 0 && dir == Older:
		q = q.Where("id >= ?", edge)
	case edge != 0:
		q = q.Where("id <= ?", edge)
	}
	err := keyset(q, "id", dir, bound).Limit(limit).Scan(&events).Error
	return events, err
}

// FirstReposts returns, for each original, the id of its earliest live
// repost by any of authorIDs.
func (s *Store) FirstReposts(ctx context.Context, authorIDs, originalIDs []int64) (map[int64]int64, error) {
	first := map[int64]int64{}
	if len(authorIDs) == 0 || len(originalIDs) == 0 {
		return first, nil
	}
	if s.shards != nil {
		events, err := s.Reposts(ctx, authorIDs, originalIDs)
		for _, ev := range events { // newest first: the last one of each original stays
			first[*ev.RepostOfID] = ev.ID
		}
		return first, err
	}
	var rows []struct {
		RepostOfID int64
		FirstID    int64
	}
	err := s.read(ctx).Model(&models.Post{}).Select("repost_of_id, MIN(id) AS first_id").
		Where("repost_of_id IN ? AND author_id IN ? AND deleted_at IS NULL", originalIDs, authorIDs).
		Group("repost_of_id").Scan(&rows).Error
	for _, r := range rows {
		first[r.RepostOfID] = r.FirstID
	}
	return first, err
}

// Reposts lists the live reposts by authorIDs of the given originals, newest first.
func (s *Store) Reposts(ctx context.Context, authorIDs, originalIDs []int64) ([]FeedEvent, error) {
	var events []FeedEvent
	if len(authorIDs) == 0 || len(originalIDs) == 0 {
		return events, nil
	}
	if s.shards != nil {
		return s.repostsOnOriginalsNodes(ctx, originalIDs, func(q *gorm.DB) *gorm.DB { return q.Where("author_id IN ?", authorIDs) })
	}
	err := s.read(ctx).Model(&models.Post{}).Select("id, author_id, repost_of_id").
		Where("repost_of_id IN ? AND author_id IN ? AND deleted_at IS NULL", originalIDs, authorIDs).
		Order("id DESC").Scan(&events).Error
	return events, err
}

// repostsOnOriginalsNodes is Reposts on the sharded layout: the live
// reposts of originalIDs that where admits, read from reposts_by_original
// on the originals' nodes (one statement each), newest first.
func (s *Store) repostsOnOriginalsNodes(ctx context.Context, originalIDs []int64, where func(*gorm.DB) *gorm.DB) ([]FeedEvent, error) {
	var events []FeedEvent
	for _, some := range s.byShard(originalIDs) {
		var found []FeedEvent
		q := s.read(ctx).Model(&repostByOriginal{}).Select("id, author_id, original_id AS repost_of_id").
			Where("original_id IN ? AND deleted_at IS NULL", some)
		if err := where(q).Scan(&found).Error; err != nil {
			return nil, err
		}
		events = append(events, found...)
	}
	slices.SortFunc(events, func(a, b FeedEvent) int { return cmp.Compare(b.ID, a.ID) })
	return events, nil
}

// repostsByFolloweesOnOriginalsNodes is RepostsByFollowees on the sharded
// layout: the originals' live reposts from their nodes, then which of
// their authors the reader's feed counts through, on the reader's node.
func (s *Store) repostsByFolloweesOnOriginalsNodes(ctx context.Context, userID int64, originalIDs []int64) ([]FeedEvent, error) {
	events, err := s.repostsOnOriginalsNodes(ctx, originalIDs, func(q *gorm.DB) *gorm.DB { return q })
	if err != nil || len(events) == 0 {
		return events, err
	}
	var authors []int64
	for _, ev := range events {
		authors = append(authors, ev.AuthorID)
	}
	var counted []int64
	err = s.read(ctx).Model(&models.Following{}).
		Where("user_id = ? AND followee_id IN ? AND followee_id NOT IN (?)", userID, authors,
			s.db.Model(&models.Mute{}).Select("muted_id").Where("muter_id = ?", userID)).
		Pluck("followee_id", &counted).Error
	return slices.DeleteFunc(events, func(ev FeedEvent) bool { return !slices.Contains(counted, ev.AuthorID) }), err
}

// followeesOf is the subquery of the users userID's feed counts through:
// those they follow and do not mute (see FeedView).
func (s *Store) followeesOf(userID int64) any {
	return s.db.Model(&models.Following{}).Select("followee_id").
		Where("user_id = ? AND followee_id NOT IN (?)", userID, s.db.Model(&models.Mute{}).Select("muted_id").Where("muter_id = ?", userID))
}

// FirstRepostsByFollowees returns, for each original, the id of its
// earliest live repost by anyone userID's feed counts through. The followees stay in
// MySQL (a subquery), so the cost follows the reposts, not the followees.
func (s *Store) FirstRepostsByFollowees(ctx context.Context, userID int64, originalIDs []int64) (map[int64]int64, error) {
	first := map[int64]int64{}
	if len(originalIDs) == 0 {
		return first, nil
	}
	if s.shards != nil {
		events, err := s.repostsByFolloweesOnOriginalsNodes(ctx, userID, originalIDs)
		for _, ev := range events { // newest first: the last one of each original stays
			first[*ev.RepostOfID] = ev.ID
		}
		return first, err
	}
	var rows []struct {
		RepostOfID int64
		FirstID    int64
	}
	err := s.read(ctx).Model(&models.Post{}).Select("repost_of_id, MIN(id) AS first_id").
		Where("repost_of_id IN ? AND deleted_at IS NULL AND author_id IN (?)", originalIDs, s.followeesOf(userID)).
		Group("repost_of_id").Scan(&rows).Error
	for _, r := range rows {
		first[r.RepostOfID] = r.FirstID
	}
	return first, err
}

// RepostsByFollowees lists the live reposts of the originals by anyone
// userID's feed counts through, newest first.
func (s *Store) RepostsByFollowees(ctx context.Context, userID int64, originalIDs []int64) ([]FeedEvent, error) {
	var events []FeedEvent
	if len(originalIDs) == 0 {
		return events, nil
	}
	if s.shards != nil {
		return s.repostsByFolloweesOnOriginalsNodes(ctx, userID, originalIDs)
	}
	err := s.read(ctx).Model(&models.Post{}).Select("id, author_id, repost_of_id").
		Where("repost_of_id IN ? AND deleted_at IS NULL AND author_id IN (?)", originalIDs, s.followeesOf(userID)).
		Order("id DESC").Scan(&events).Error
	return events, err
}
