package store

import (
	"context"
	"database/sql"
	"slices"

	"feedservice/models"
)

// SnapshotEvent is a live post or repost by one of a reader's followees as
// a rebuild of their inbox reads it (HomeEvents): for a repost, with its original's
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

// HomeEvents reads, in one statement, the newest limit live posts and
// reposts below bound and from edge up (edge included; 0 for no edge) by
// counted, the users readerID's feed counts through (followed, neither
// muted nor blocked either way: FeedView's), newest first, each repost with
// its original's author and state and its first arrival (see
// SnapshotEvent): what the rebuild of an inbox, and the page of a reader
// without one, read from MySQL, a window of time at a time.
//
// Each followee's events are a range of the (author_id, id, repost_of_id,
// deleted_at) index, named by their ids, so the statement reads the
// window's rows alone (see FeedEvents); each repost's original and first
// arrival are looked up for those rows alone. A statement that reached
// the events through the reader's followings (a join, so one statement
// with their view) read every post of every followee whatever its bounds:
// an index is joined by its first column alone.
//
// On the sharded layout the events are FeedEvents from every node, then
// their originals and first arrivals: three statements.
func (s *Store) HomeEvents(ctx context.Context, readerID int64, counted []int64, bound, edge int64, limit int) ([]SnapshotEvent, error) {
	if len(counted) == 0 {
		return nil, nil
	}
	if s.shards != nil {
		return s.homeEventsSharded(ctx, counted, bound, edge, limit)
	}
	_, byAuthor := s.joinHints()
	r := readerID
	rows, err := s.read(ctx).Raw(s.eventsWithArrivals(`SELECT p.id, p.author_id, p.repost_of_id FROM posts p `+byAuthor+`
				WHERE p.author_id IN ? AND p.deleted_at IS NULL AND p.id < ? AND p.id >= ?
				ORDER BY p.id DESC LIMIT ?`),
		r, r, r, r, // the first arrival's
		counted, bound, edge, limit, // the events'
	).Rows()
	if err != nil {
		return nil, err
	}
	events, err := scanSnapshotEvents(rows)
	if err != nil {
		return nil, err
	}
	sortNewestFirst(events)
	return events, nil
}

// joinHints are the join order and the index HomeEvents' statement names
// on MariaDB: left to itself, it walks every post by id and asks of each
// whether its author is followed; SQLite, the embedded default, takes none.
func (s *Store) joinHints() (straight, byAuthor string) {
	if s.db.Dialector.Name() == "sqlite" {
		return "JOIN", ""
	}
	return "STRAIGHT_JOIN", "FORCE INDEX (ix_posts_author)"
}

// notHidden is the condition that the reader (the statement's next three
// arguments) hides no post by col: neither mutes nor blocks them, nor is
// blocked by them.
func notHidden(col string) string {
	return col + ` NOT IN (SELECT muted_id FROM mutes WHERE muter_id = ?)
			AND ` + col + ` NOT IN (SELECT blocked_id FROM blocks WHERE blocker_id = ?)
			AND ` + col + ` NOT IN (SELECT blocker_id FROM blocks WHERE blocked_id = ?)`
}

// eventsWithArrivals is the rows of scan, a statement of events (id,
// author_id, repost_of_id), each repost with its original's author and
// state and its first arrival in the reader's feed. Its arguments are the
// reader four times, then scan's.
func (s *Store) eventsWithArrivals(scan string) string {
	straight, _ := s.joinHints()
	return `SELECT e.id, e.author_id, e.repost_of_id, o.author_id, o.id IS NOT NULL AND o.deleted_at IS NULL,
			CASE WHEN e.repost_of_id IS NULL THEN NULL ELSE
				(SELECT MIN(rp.id) FROM posts rp ` + straight + ` followings rf ON rf.user_id = ? AND rf.followee_id = rp.author_id
				WHERE rp.repost_of_id = e.repost_of_id AND rp.deleted_at IS NULL AND ` + notHidden("rp.author_id") + `) END
			FROM (` + scan + `) e
			LEFT JOIN posts o ON o.id = e.repost_of_id`
}

// scanSnapshotEvents reads the rows of HomeEvents' statement, and closes
// them. They are scanned by hand, not by gorm's Scan: its reflection per
// column was half the CPU a rebuild spent in this process (1,600 rows and
// more).
func scanSnapshotEvents(rows *sql.Rows) ([]SnapshotEvent, error) {
	defer rows.Close()
	var events []SnapshotEvent
	for rows.Next() {
		var (
			id, authorID                          int64
			repostOf, originalAuthor, firstRepost sql.NullInt64
			originalLive                          sql.NullBool
		)
		if err := rows.Scan(&id, &authorID, &repostOf, &originalAuthor, &originalLive, &firstRepost); err != nil {
			return nil, err
		}
		ev := SnapshotEvent{FeedEvent: FeedEvent{ID: id, AuthorID: authorID}}
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
	return events, rows.Err()
}

// homeEventsSharded is HomeEvents on the sharded layout: the events from
// every node, then their originals and first arrivals.
func (s *Store) homeEventsSharded(ctx context.Context, counted []int64, bound, edge int64, limit int) ([]SnapshotEvent, error) {
	feedEvents, err := s.FeedEvents(ctx, counted, Older, bound, edge, limit)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		for _, p := range posts {
			if p != nil {
				originals[p.ID] = p
			}
		}
	}
	firsts, err := s.FirstReposts(ctx, counted, reposted)
	if err != nil {
		return nil, err
	}
	// FirstReposts reads the reposts by original on the original's node,
	// where a repost from another node arrives through the relay: a repost
	// the events hold (read on its author's node) counts at once.
	for _, ev := range feedEvents {
		if o := ev.RepostOfID; o != nil && (firsts[*o] == 0 || ev.ID < firsts[*o]) {
			firsts[*o] = ev.ID
		}
	}
	events := make([]SnapshotEvent, len(feedEvents))
	for i, ev := range feedEvents {
		events[i] = SnapshotEvent{FeedEvent: ev}
		if ev.RepostOfID != nil {
			if o := originals[*ev.RepostOfID]; o != nil && o.DeletedAt == nil {
				events[i].OriginalAuthor, events[i].OriginalLive = o.AuthorID, true
			}
			events[i].FirstRepost = firsts[*ev.RepostOfID]
		}
	}
	return events, nil
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
