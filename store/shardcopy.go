package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"

	"feedservice/models"
	"feedservice/store/migrate"
)

// copyBatch is how many rows CopyFrom moves per statement.
const copyBatch = 1000

// ErrCopyTargetNotEmpty refuses a copy into a sharded layout that holds
// users already: a copy runs once, into an empty layout.
var ErrCopyTargetNotEmpty = errors.New("the sharded layout is not empty")

// CopyFrom copies the database of src (one MySQL or SQLite database, at
// the same migration) into s, a migrated sharded layout with no users:
// users, relations, blocks, mutes, lists, follow requests, posts and
// reposts, promoted posts, home dismissals and the undispatched outbox
// events, with the layout's own tables (usernames, blocked_by, muted_by,
// follow_requests_sent, reposts_by_original) filled beside them. A post's
// id is renumbered to carry its author's residue (NewPostID), and every
// reference to it rewritten. progress hears each table's rows as they go.
// A layout that holds users is refused with ErrCopyTargetNotEmpty: a copy
// that was interrupted is started again on a new layout, never resumed
// over its own rows, so nothing is copied twice.
func (s *Store) CopyFrom(ctx context.Context, src *Store, progress func(table string, copied, total int64)) error {
	return s.copyFrom(ctx, src, copyBatch, progress)
}

// copyFrom is CopyFrom, batch rows a statement.
func (s *Store) copyFrom(ctx context.Context, src *Store, batch int, progress func(table string, copied, total int64)) error {
	if s.shards == nil || src.shards != nil {
		return errors.New("shard-copy copies one database (-from) into the sharded layout (MYSQL_DSN with MYSQL_SHARD_DSNS)")
	}
	var have int64
	if err := s.db.WithContext(ctx).Model(&models.User{}).Count(&have).Error; err != nil {
		return err
	}
	if have > 0 {
		return fmt.Errorf("%w: it holds %d users. A copy runs once, into an empty layout: after an interrupted copy, drop the database on the head and on every data node, run migrate again, then shard-copy", ErrCopyTargetNotEmpty, have)
	}
	srcSteps, err := migrate.Applied(ctx, src.db)
	if err != nil {
		return fmt.Errorf("the source's migrations: %w", err)
	}
	steps, err := migrate.Applied(ctx, s.db)
	if err != nil {
		return err
	}
	if srcSteps != steps {
		return fmt.Errorf("the source is at %d migrations and the sharded layout at %d: migrate the source first", srcSteps, steps)
	}
	c := &shardCopy{s: s, src: src, ctx: ctx, batch: batch, progress: progress, postIDs: map[int64]int64{}}
	if err := c.renumberPosts(); err != nil {
		return err
	}
	steps2 := []struct {
		table string
		key   []string // the primary key's columns: the order of the copy
		model any
		write func(tx *gorm.DB, rows any) error
	}{
		{"users", []string{"id"}, &[]*models.User{}, func(tx *gorm.DB, rows any) error {
			users := *rows.(*[]*models.User)
			for _, u := range users {
				u.UsernameKey = strings.ToLower(u.Username)
			}
			if err := s.claimUsernames(tx, users); err != nil {
				return err
			}
			return tx.Create(users).Error
		}},
		{"followings", []string{"user_id", "followee_id"}, &[]models.Following{}, plain},
		{"followers", []string{"user_id", "follower_id"}, &[]models.Follower{}, plain},
		{"relation_marks", []string{"list", "user_id", "id"}, &[]relationMark{}, plain},
		{"blocks", []string{"blocker_id", "blocked_id"}, &[]models.Block{}, func(tx *gorm.DB, rows any) error {
			blocks := *rows.(*[]models.Block)
			by := make([]blockedBy, len(blocks))
			for i, b := range blocks {
				by[i] = blockedBy{UserID: b.BlockedID, BlockerID: b.BlockerID}
			}
			return errors.Join(tx.Create(blocks).Error, tx.Create(by).Error)
		}},
		{"mutes", []string{"muter_id", "muted_id"}, &[]models.Mute{}, func(tx *gorm.DB, rows any) error {
			mutes := *rows.(*[]models.Mute)
			by := make([]mutedBy, len(mutes))
			for i, m := range mutes {
				by[i] = mutedBy{UserID: m.MutedID, MuterID: m.MuterID}
			}
			return errors.Join(tx.Create(mutes).Error, tx.Create(by).Error)
		}},
		{"lists", []string{"owner_id", "id"}, &[]models.List{}, plain},
		{"list_members", []string{"owner_id", "list_id", "member_id"}, &[]models.ListMember{}, plain},
		{"follow_requests", []string{"user_id", "requester_id"}, &[]models.FollowRequest{}, func(tx *gorm.DB, rows any) error {
			requests := *rows.(*[]models.FollowRequest)
			sent := make([]followRequestSent, len(requests))
			for i, r := range requests {
				sent[i] = followRequestSent{UserID: r.RequesterID, TargetID: r.UserID, ID: r.ID}
			}
			return errors.Join(tx.Create(requests).Error, tx.Create(sent).Error)
		}},
		{"posts", []string{"id"}, &[]*models.Post{}, func(tx *gorm.DB, rows any) error {
			posts := *rows.(*[]*models.Post)
			var reposts []repostByOriginal
			for _, p := range posts {
				p.ID = c.postIDs[p.ID]
				if p.RepostOfID != nil {
					original := c.postIDs[*p.RepostOfID]
					p.RepostOfID = &original
					reposts = append(reposts, repostByOriginal{OriginalID: original, ID: p.ID, AuthorID: p.AuthorID, DeletedAt: p.DeletedAt})
				}
			}
			if err := tx.Create(posts).Error; err != nil {
				return err
			}
			if len(reposts) == 0 {
				return nil
			}
			return tx.Create(reposts).Error
		}},
		{"promoted_posts", []string{"post_id"}, &[]promotedPost{}, func(tx *gorm.DB, rows any) error {
			promoted := *rows.(*[]promotedPost)
			for i := range promoted {
				promoted[i].PostID = c.postIDs[promoted[i].PostID]
			}
			return tx.Create(promoted).Error
		}},
		{"home_dismissals", []string{"user_id", "kind", "item_id"}, &[]homeDismissal{}, func(tx *gorm.DB, rows any) error {
			dismissals := *rows.(*[]homeDismissal)
			for i, d := range dismissals {
				if id, ok := c.postIDs[d.ItemID]; ok {
					dismissals[i].ItemID = id
				}
			}
			return tx.Create(dismissals).Error
		}},
		{"outbox_events", []string{"id"}, &[]models.OutboxEvent{}, c.writeEvents},
	}
	for _, st := range steps2 {
		if err := c.table(st.table, st.key, st.model, st.write); err != nil {
			return fmt.Errorf("copy %s: %w", st.table, err)
		}
	}
	return nil
}

func plain(tx *gorm.DB, rows any) error { return tx.Create(rows).Error }

// shardCopy is one run of CopyFrom.
type shardCopy struct {
	s, src   *Store
	ctx      context.Context
	batch    int // rows a statement
	progress func(table string, copied, total int64)
	postIDs  map[int64]int64 // a post's id in the source: its id in the copy
}

// NewPostID is the id a post copied into the sharded layout takes: the
// first id from id up that carries its author's residue (the low four
// bits, which ids.NextBeside gives a new post) and that taken does not
// hold, within id's millisecond (its 4,096 ids: 32 server nodes of 128);
// failing that, the highest free one below id there; false when all 256
// of the residue's ids of the millisecond are taken. So a copy keeps its
// millisecond (order by id is order by time still), and moves up by less
// than 16 unless posts of one millisecond collide: a page read older than
// a cursor (an id) from before the copy is the same page, as no post
// crosses the cursor's id.
func NewPostID(id, author int64, taken func(int64) bool) (int64, bool) {
	const msBits, residues = 12, MaxShards
	base := id &^ (1<<msBits - 1)
	first := id + (author%residues-id%residues+residues)%residues
	for cand := first; cand < base+1<<msBits; cand += residues {
		if !taken(cand) {
			return cand, true
		}
	}
	for cand := first - residues; cand >= base; cand -= residues {
		if !taken(cand) {
			return cand, true
		}
	}
	return 0, false
}

// renumberPosts gives every post of the source its id in the copy.
func (c *shardCopy) renumberPosts() error {
	taken := map[int64]bool{}
	var last int64
	for {
		var rows []struct{ ID, AuthorID int64 }
		err := c.src.db.WithContext(c.ctx).Model(&models.Post{}).Select("id, author_id").
			Where("id > ?", last).Order("id").Limit(c.batch * 10).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("read the posts' ids: %w", err)
		}
		for _, r := range rows {
			id, ok := NewPostID(r.ID, r.AuthorID, func(id int64) bool { return taken[id] })
			if !ok {
				return fmt.Errorf("post %d: no id left in its millisecond for its author's residue (over 256 posts of one residue in one millisecond)", r.ID)
			}
			taken[id] = true
			c.postIDs[r.ID] = id
		}
		if len(rows) < c.batch*10 {
			return nil
		}
		last = rows[len(rows)-1].ID
	}
}

// copiedRows narrows a table's copy to the rows that are copied at all:
// the outbox's dispatched events are done with (writeEvents skips them
// too), and reading them only to skip them was half the time of a copy of
// 600,000 events.
var copiedRows = map[string]string{"outbox_events": "dispatched_at IS NULL"}

// table copies the rows of table from the source in the order of its
// primary key (the columns key), c.batch at a time, each batch written by
// write in one transaction of the layout. Each batch is read from the key
// of the last row of the one before: with an OFFSET the source would read
// every row before the batch again, quadratic on a table of millions.
func (c *shardCopy) table(table string, key []string, model any, write func(tx *gorm.DB, rows any) error) error {
	from := func() *gorm.DB {
		q := c.src.db.WithContext(c.ctx).Table(table)
		if where, ok := copiedRows[table]; ok {
			q = q.Where(where)
		}
		return q
	}
	var total int64
	if err := from().Count(&total).Error; err != nil {
		return err
	}
	var copied int64
	var last []any
	for {
		q := from().Order(strings.Join(key, ", ")).Limit(c.batch)
		if last != nil {
			where, args := c.src.keyAfter(key, last)
			q = q.Where(where, args...)
		}
		if err := q.Find(model).Error; err != nil {
			return err
		}
		n := reflect.ValueOf(model).Elem().Len()
		if n == 0 {
			break
		}
		// Before write, which renumbers some keys (a post's id).
		var err error
		if last, err = c.lastKey(model, key); err != nil {
			return err
		}
		if err := c.s.transaction(c.ctx, func(tx *gorm.DB) error { return write(tx, model) }); err != nil {
			return err
		}
		copied += int64(n)
		if c.progress != nil {
			c.progress(table, copied, total)
		}
		if n < c.batch {
			break
		}
	}
	if copied == 0 && c.progress != nil {
		c.progress(table, 0, total)
	}
	return nil
}

// lastKey is the values of the columns key in the last of rows (a
// pointer to a slice of models).
func (c *shardCopy) lastKey(rows any, key []string) ([]any, error) {
	stmt := &gorm.Statement{DB: c.src.db}
	if err := stmt.Parse(rows); err != nil {
		return nil, err
	}
	list := reflect.ValueOf(rows).Elem()
	row := list.Index(list.Len() - 1)
	values := make([]any, len(key))
	for i, column := range key {
		field := stmt.Schema.LookUpField(column)
		if field == nil {
			return nil, fmt.Errorf("%s has no column %s", stmt.Schema.Table, column)
		}
		values[i], _ = field.ValueOf(c.ctx, row)
	}
	return values, nil
}

// keyAfter is the condition on the rows whose key (the columns key, in
// order) sorts after last: (a, b) > (x, y). MariaDB range-scans it only
// spelled out, a > x OR (a = x AND b > y) (10.11 reads a row comparison's
// index from its start), and SQLite only as the row comparison.
func (s *Store) keyAfter(key []string, last []any) (string, []any) {
	if !s.mysql {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(key)), ", ")
		return "(" + strings.Join(key, ", ") + ") > (" + marks + ")", last
	}
	var terms []string
	var args []any
	for i := range key {
		var term []string
		for j := range i {
			term = append(term, key[j]+" = ?")
			args = append(args, last[j])
		}
		term = append(term, key[i]+" > ?")
		args = append(args, last[i])
		terms = append(terms, "("+strings.Join(term, " AND ")+")")
	}
	return "(" + strings.Join(terms, " OR ") + ")", args
}

// writeEvents copies the outbox's undispatched events (the dispatched are
// done with), each with a new id on its owner's node and the post ids of
// its payload renumbered.
func (c *shardCopy) writeEvents(tx *gorm.DB, rows any) error {
	var events []models.OutboxEvent
	var owners []int64
	for _, ev := range *rows.(*[]models.OutboxEvent) {
		if ev.DispatchedAt != nil {
			continue
		}
		payload, owner, err := c.eventPayload(ev)
		if err != nil {
			return fmt.Errorf("event %d: %w", ev.ID, err)
		}
		ev.ID, ev.Payload = 0, payload
		events = append(events, ev)
		owners = append(owners, owner)
	}
	if len(events) == 0 {
		return nil
	}
	if err := c.s.assignEventIDs(tx, events, owners); err != nil {
		return err
	}
	return tx.Create(&events).Error
}

// eventPayload is ev's payload in the copy, and the user it belongs to.
func (c *shardCopy) eventPayload(ev models.OutboxEvent) (string, int64, error) {
	decode := func(v any) error { return json.Unmarshal([]byte(ev.Payload), v) }
	var out any
	switch ev.Kind {
	case models.EventPostCreated, models.EventPostDeleted:
		var p models.PostEventPayload
		if err := decode(&p); err != nil {
			return "", 0, err
		}
		p.PostID = c.postIDs[p.PostID]
		if p.RepostOfID != nil {
			original := c.postIDs[*p.RepostOfID]
			p.RepostOfID = &original
		}
		out = p
	case models.EventFollowed, models.EventUnfollowed, models.EventFollowerRemoved:
		var p models.FollowEventPayload
		if err := decode(&p); err != nil {
			return "", 0, err
		}
		out = p
	case models.EventBlocked, models.EventUnblocked:
		var p models.BlockEventPayload
		if err := decode(&p); err != nil {
			return "", 0, err
		}
		out = p
	case models.EventMuted, models.EventUnmuted:
		var p models.MuteEventPayload
		if err := decode(&p); err != nil {
			return "", 0, err
		}
		out = p
	case models.EventUserChanged:
		var p models.UserEventPayload
		if err := decode(&p); err != nil {
			return "", 0, err
		}
		out = p
	default:
		return ev.Payload, 0, fmt.Errorf("an event of kind %q, which the copy does not know", ev.Kind)
	}
	b, err := json.Marshal(out)
	return string(b), eventOwner(out), err
}
