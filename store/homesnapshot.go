package store

import (
	"context"
	"database/sql"
	"slices"

	"feedservice/models"
)

// SnapshotEvent is a live post or repost by one of a reader's followees as
// a rebuild of their inbox reads it: for a repost, with its original's
// author and state and the reader's first arrival of that original.
type SnapshotEvent struct {
	FeedEvent
	// OriginalAuthor is a repost's original's author; 0 when the event is
	// an original post, or its original is gone.
	OriginalAuthor int64
	// OriginalLive says a repost's original is there and not deleted.
	OriginalLive bool
	// FirstRepost is, for a repost, the id of the earliest live repost of
	// its original by anyone the reader follows and does not mute (the
	// original's first arrival when its author is not followed); 0 when
	// there is none or the event is an original post.
	FirstRepost int64
}

// Kinds of the rows of HomeSnapshot's one statement, after FeedView's.
const viewEvent = 2

// HomeSnapshot reads, in one statement (so from one snapshot and one round
// trip), readerID's feed view as FeedView lists it, and the newest limit
// live posts and reposts below bound by those readerID follows and does
// not hide, newest first, each repost with its original's author and
// state and its first arrival (see SnapshotEvent): everything the rebuild
// of an inbox reads from MySQL.
//
// On the sharded layout the view is read on the reader's data node and the
// events, as FeedEvents, from every node: there it is three statements.
func (s *Store) HomeSnapshot(ctx context.Context, readerID, bound int64, limit int) (followees, hidden []int64, events []SnapshotEvent, err error) {
	if s.shards != nil {
		return s.homeSnapshotSharded(ctx, readerID, bound, limit)
	}
	// The events are the newest limit rows of the (author_id, id,
	// repost_of_id, deleted_at) index reached from the reader's followees
	// (those the feed counts through: followed, neither muted nor blocked
	// either way), in a derived table; each repost's original and first
	// arrival are looked up for those rows alone. MariaDB is told the join
	// order: left to itself, it walks every post by id and asks of each
	// whether its author is followed (ten times slower at 200 followees).
	straight, byAuthor := "STRAIGHT_JOIN", "FORCE INDEX (ix_posts_author)"
	if s.db.Dialector.Name() == "sqlite" {
		straight, byAuthor = "JOIN", ""
	}
	notHidden := func(col string) string {
		return col + ` NOT IN (SELECT muted_id FROM mutes WHERE muter_id = ?)
			AND ` + col + ` NOT IN (SELECT blocked_id FROM blocks WHERE blocker_id = ?)
			AND ` + col + ` NOT IN (SELECT blocker_id FROM blocks WHERE blocked_id = ?)`
	}
	r := readerID
	rows, err := s.read(ctx).Raw(`SELECT ? AS kind, followee_id AS other, 0 AS author_id, NULL AS repost_of_id, NULL AS original_author, NULL AS original_live, NULL AS first_repost
			FROM followings WHERE user_id = ?
		UNION ALL SELECT ?, muted_id, 0, NULL, NULL, NULL, NULL FROM mutes WHERE muter_id = ?
		UNION ALL SELECT ?, blocked_id, 0, NULL, NULL, NULL, NULL FROM blocks WHERE blocker_id = ?
		UNION ALL SELECT ?, blocker_id, 0, NULL, NULL, NULL, NULL FROM blocks WHERE blocked_id = ?
		UNION ALL SELECT ?, e.id, e.author_id, e.repost_of_id, o.author_id, o.id IS NOT NULL AND o.deleted_at IS NULL,
			CASE WHEN e.repost_of_id IS NULL THEN NULL ELSE
				(SELECT MIN(rp.id) FROM posts rp `+straight+` followings rf ON rf.user_id = ? AND rf.followee_id = rp.author_id
				WHERE rp.repost_of_id = e.repost_of_id AND rp.deleted_at IS NULL AND `+notHidden("rp.author_id")+`) END
			FROM (SELECT p.id, p.author_id, p.repost_of_id FROM followings f `+straight+` posts p `+byAuthor+` ON p.author_id = f.followee_id
				WHERE f.user_id = ? AND `+notHidden("f.followee_id")+` AND p.deleted_at IS NULL AND p.id < ?
				ORDER BY p.id DESC LIMIT ?) e
			LEFT JOIN posts o ON o.id = e.repost_of_id`,
		viewFollowee, r, viewHidden, r, viewHidden, r, viewHidden, r,
		viewEvent, r, r, r, r, // the first arrival's
		r, r, r, r, bound, limit, // the events'
	).Rows()
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	// Scanned by hand, not by gorm's Scan: its reflection per column was
	// half the CPU a rebuild spent in this process (1,600 rows and more).
	for rows.Next() {
		var (
			kind                                  int
			other, authorID                       int64
			repostOf, originalAuthor, firstRepost sql.NullInt64
			originalLive                          sql.NullBool
		)
		if err := rows.Scan(&kind, &other, &authorID, &repostOf, &originalAuthor, &originalLive, &firstRepost); err != nil {
			return nil, nil, nil, err
		}
		switch kind {
		case viewFollowee:
			followees = append(followees, other)
		case viewHidden:
			hidden = append(hidden, other)
		default:
			ev := SnapshotEvent{FeedEvent: FeedEvent{ID: other, AuthorID: authorID}}
			if repostOf.Valid {
				original := repostOf.Int64
				ev.RepostOfID = &original
				ev.OriginalLive = originalLive.Valid && originalLive.Bool
				if ev.OriginalLive {
					ev.OriginalAuthor = originalAuthor.Int64
				}
				ev.FirstRepost = firstRepost.Int64
			}
			events = append(events, ev)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	sortNewestFirst(events)
	return followees, hidden, events, nil
}

// homeSnapshotSharded is HomeSnapshot on the sharded layout: FeedView on the
// reader's node, then the events and their originals and first arrivals.
func (s *Store) homeSnapshotSharded(ctx context.Context, readerID, bound int64, limit int) (followees, hidden []int64, events []SnapshotEvent, err error) {
	if followees, hidden, err = s.FeedView(ctx, readerID); err != nil {
		return nil, nil, nil, err
	}
	counted := make([]int64, 0, len(followees))
	for _, id := range followees {
		if !slices.Contains(hidden, id) {
			counted = append(counted, id)
		}
	}
	feedEvents, err := s.FeedEvents(ctx, counted, Older, bound, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	var reposted []int64
	for _, ev := range feedEvents {
		if ev.RepostOfID != nil {
			reposted = append(reposted, *ev.RepostOfID)
		}
	}
	originals := map[int64]*models.Post{}
	if len(reposted) > 0 {
		posts, err := s.PostsByIDs(ctx, reposted)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, p := range posts {
			if p != nil {
				originals[p.ID] = p
			}
		}
	}
	firsts, err := s.FirstReposts(ctx, counted, reposted)
	if err != nil {
		return nil, nil, nil, err
	}
	// FirstReposts reads the reposts by original on the original's node,
	// where a repost from another node arrives through the relay: a repost
	// the events hold (read on its author's node) counts at once.
	for _, ev := range feedEvents {
		if o := ev.RepostOfID; o != nil && (firsts[*o] == 0 || ev.ID < firsts[*o]) {
			firsts[*o] = ev.ID
		}
	}
	events = make([]SnapshotEvent, len(feedEvents))
	for i, ev := range feedEvents {
		events[i] = SnapshotEvent{FeedEvent: ev}
		if ev.RepostOfID != nil {
			if o := originals[*ev.RepostOfID]; o != nil && o.DeletedAt == nil {
				events[i].OriginalAuthor, events[i].OriginalLive = o.AuthorID, true
			}
			events[i].FirstRepost = firsts[*ev.RepostOfID]
		}
	}
	return followees, hidden, events, nil
}

func sortNewestFirst(events []SnapshotEvent) {
	slices.SortFunc(events, func(a, b SnapshotEvent) int {
		switch {
		case a.ID > b.ID:
			return -1
		case a.ID < b.ID:
			return 1
		}
		return 0
	})
}
