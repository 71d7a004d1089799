package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"feedservice/models"
)

// The relay (the sharded layout only): a write that concerns two users on
// two data nodes commits on one, the actor's, with a relay_changes row in
// the same local transaction that holds the other node's half (the ops
// below) and the write's outbox events. ApplyRelays applies the half on the
// other node in one transaction there, with the events, then deletes the
// row: a node that is down only delays it, and a half applied twice (the
// relay stopped between the two, or two relays ran at once) changes
// nothing the second time: the target node keeps the ids of the changes
// it applied (relayApplied).
// Each op also writes a row only if it is missing, removes only the one
// it names, and moves a count only with a row. Seed 002's change table.
//
// The events travel with the half so that the fan-out, which reads both
// sides (the followers list, both users' counts), runs once both are
// written; the actor's own reads need no event (see feed.relationChanged).

// relayChange is a row of relay_changes, on the actor's node (its id
// carries that node, as an outbox event's does).
type relayChange struct {
	ID int64 `gorm:"primaryKey;autoIncrement:false"`
	// Target is a user or post of the node the half is for.
	Target    int64     `gorm:"not null"`
	Ops       string    `gorm:"type:text;not null"` // JSON, []relayOp
	Events    string    `gorm:"type:text;not null"` // JSON, []models.OutboxEvent without ids
	CreatedAt time.Time `gorm:"not null"`
}

func (relayChange) TableName() string { return "relay_changes" }

// The ops of a half, each on rows of the target node.
const (
	// opFollowerAdded writes followers(User, Other, Seq) with User's count
	// and marks, unless User blocks Other: then the follow is undone on
	// Other's node (opFollowingRemoved, through the relay).
	opFollowerAdded = "follower+"
	// opFollowingAdded writes followings(User, Other, Seq) with User's
	// count and marks, and removes User's record of their request to
	// follow Other (follow_requests_sent): Other approved it. Unless User
	// blocks Other: then the approval is undone on Other's node
	// (opFollowerRemoved, through the relay).
	opFollowingAdded = "following+"
	// opFollowerRemoved removes followers(User, Other), with User's count
	// and marks: the row of the follow Seq (any when 0), or with Before
	// any made before Before (an unfollow's id). With Before, Seq is the
	// follow the actor's node ended, and another one ended here is taken
	// away there too (an approval of the followee's, on its way to the
	// follower's node when they unfollowed).
	opFollowerRemoved = "follower-"
	// opFollowingRemoved removes followings(User, Other), with User's
	// count and marks and Other from User's lists: the row of the follow
	// Seq, or with Before any made before Before (a block's or a
	// follower's removal's id: a follow made after the block, before its
	// follower's node knew of it, is refused on arrival if the block still
	// holds). With Before, Seq is the follow the actor's node ended (0:
	// none), and another one ended here is taken away there too.
	opFollowingRemoved = "following-"
	opBlockedByAdded   = "blocked_by+" // blocked_by(User, Other)
	opBlockedByRemoved = "blocked_by-"
	opMutedByAdded     = "muted_by+" // muted_by(User, Other)
	opMutedByRemoved   = "muted_by-"
	// opRequestsDropped removes the follow requests between User and
	// Other that User's node keeps: Other's to User, and User's records of
	// their own to Other made before Before (all when 0). A block sends
	// it to the blocked user's node: Other's requests travel ahead of it,
	// and a record with a larger id is of a request still on its way to
	// Other's node, whose arrival there decides (requestArrived), so that
	// both sides keep it or neither does.
	opRequestsDropped = "requests-"
	// opRequestAdded writes follow_requests(User, Other, Seq): Other asked
	// to follow User. Refused (Other's record of it removed on their node,
	// opRequestSentRemoved) when a block lies between them, a block of
	// User's came after it (voidedRequests), or Other follows User
	// already; approved on arrival (the followers row with
	// User's count and marks here, Other's side by opFollowingAdded, with
	// the follow's event) when User is not protected any more.
	opRequestAdded = "request+"
	// opRequestRemoved removes follow_requests(User, Other), the request
	// Seq (any when 0): Other withdrew it.
	opRequestRemoved = "request-"
	// opRequestSentRemoved removes User's record of their request to
	// follow Other (follow_requests_sent), if it is the request Seq or an
	// older one: Other rejected it, and a request made again since stays.
	opRequestSentRemoved = "request_sent-"
	// opRepostAdded writes reposts_by_original(Post, Repost, Other) with
	// the original's repost count; opRepostRemoved marks it deleted and
	// moves the count back.
	opRepostAdded   = "repost+"
	opRepostRemoved = "repost-"
)

// relayOp is one step of a half.
type relayOp struct {
	Op     string    `json:"op"`
	User   int64     `json:"user,omitempty"`
	Other  int64     `json:"other,omitempty"`
	Seq    int64     `json:"seq,omitempty"`
	Post   int64     `json:"post,omitempty"`
	Repost int64     `json:"repost,omitempty"`
	Before int64     `json:"before,omitempty"`
	At     time.Time `json:"at"`
	// Event, when set, is written with the half if the op changed a row
	// and the half's own events carry none of that kind: a follow the
	// actor's node did not know of yet, ended by a block; or each follow
	// of a bulk write's half (CreateFollows), which has no events of its
	// own, so that a follow refused on arrival takes only its own event
	// away.
	Event *models.OutboxEvent `json:"event,omitempty"`
}

// relayed builds the half of one write inside the actor's transaction.
type relayed struct {
	ops    []relayOp
	events []models.OutboxEvent
}

func (r *relayed) op(o relayOp) { r.ops = append(r.ops, o) }

func (r *relayed) event(tx *gorm.DB, kind string, payload any, at time.Time) error {
	ev, err := newEvent(kind, payload, at)
	if err != nil {
		return err
	}
	ev.TraceParent = TraceParent(tx.Statement.Context)
	r.events = append(r.events, ev)
	return nil
}

// relay ends the actor's transaction tx: the half r for target's node,
// from actor's. On the actor's node itself (both users on one node) the
// half is applied in tx at once, with the events.
func (s *Store) relay(tx *gorm.DB, actor, target int64, r *relayed) error {
	if s.ShardOf(actor) == s.ShardOf(target) {
		return s.applyHalf(tx, target, r.ops, r.events)
	}
	ops, err := json.Marshal(r.ops)
	if err != nil {
		return err
	}
	events, err := json.Marshal(r.events)
	if err != nil {
		return err
	}
	c := relayChange{Target: target, Ops: string(ops), Events: string(events), CreatedAt: time.Now().UTC()}
	var next int64
	if err := tx.Raw("SELECT NEXT VALUE FOR outbox_event_ids").Scan(&next).Error; err != nil {
		return fmt.Errorf("relay change id: %w", err)
	}
	c.ID = next*int64(s.shards.n) + int64(s.ShardOf(actor))
	return tx.Create(&c).Error
}

// ApplyRelays applies the pending halves of every data node, oldest first
// on each, and returns how many it applied. A half whose target node
// fails is retried at the next call, and the later halves of its node for
// the same target wait for it, so that each target sees one node's halves
// in their order; the others go on. It applies nothing once ctx is done:
// its caller gives it the deadline of its lease, which bounds how long a
// half it read may wait to be applied (see relayApplied). Nothing on one
// database.
func (s *Store) ApplyRelays(ctx context.Context, limit int) (int, error) {
	if s.shards == nil {
		return 0, nil
	}
	applied := 0
	var errs []error
	for shard := range s.shards.n {
		if err := ctx.Err(); err != nil {
			return applied, errors.Join(append(errs, err)...)
		}
		var pending []relayChange
		err := s.db.WithContext(ctx).Table(s.on("relay_changes", int64(shard))).Order("id").Limit(limit).Find(&pending).Error
		if err != nil {
			errs = append(errs, fmt.Errorf("relay changes of data node %d: %w", shard, err))
			continue
		}
		failed := map[int]bool{}
		for _, c := range pending {
			if err := ctx.Err(); err != nil {
				return applied, errors.Join(append(errs, err)...)
			}
			target := s.ShardOf(c.Target)
			if failed[target] {
				continue
			}
			if err := s.applyChange(ctx, c); err != nil {
				failed[target] = true
				errs = append(errs, fmt.Errorf("relay change %d from data node %d to %d: %w", c.ID, shard, target, err))
				continue
			}
			applied++
		}
	}
	return applied, errors.Join(errs...)
}

// applyChange applies c on its target node, then deletes it on its own.
func (s *Store) applyChange(ctx context.Context, c relayChange) error {
	if err := s.applyOnTarget(ctx, c); err != nil {
		return err
	}
	return s.db.WithContext(ctx).Exec("DELETE FROM relay_changes WHERE id = ?", c.ID).Error
}

// applyOnTarget applies c's half on its target node, in one transaction
// there, unless that node applied it already (relayApplied).
func (s *Store) applyOnTarget(ctx context.Context, c relayChange) error {
	var ops []relayOp
	var events []models.OutboxEvent
	if err := json.Unmarshal([]byte(c.Ops), &ops); err != nil {
		return fmt.Errorf("ops: %w", err)
	}
	if err := json.Unmarshal([]byte(c.Events), &events); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	return s.transaction(ctx, func(tx *gorm.DB) error {
		now := time.Now().UTC()
		// Not gorm's Create: it would read seen_at back (a column with a
		// default), and a row read back counts as written.
		res := tx.Exec("INSERT INTO relay_applied (target, id, seen_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE id = id", c.Target, c.ID, now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Applied before: the row's time starts again, as the change
			// may be deleted on its node only now.
			return tx.Model(&relayApplied{}).Where("target = ? AND id = ?", c.Target, c.ID).Update("seen_at", now).Error
		}
		return s.applyHalf(tx, c.Target, ops, events)
	})
}

// relayApplied is a row of relay_applied, on a half's target node: the
// relay change applied there, written in the half's transaction. A relay
// may apply a change that was applied already: it stopped after the
// target's commit and before it deleted the change on the actor's node,
// or two relays ran at once (the lease lapsed in the middle of a batch,
// or Redis lost its key) and the second applies a change from its own
// read that the first applied and deleted meanwhile. It then finds the
// change here and changes nothing. The ops alone would not do: written
// twice, a half's events would be too, and its ops, each writing a row if
// it is missing, would bring back what the target's user removed in
// between (the follower the half brought, the request it brought and they
// rejected).
//
// So a row stays as long as its change may be applied again: while the
// change is pending on its node (which may be down for days), and then
// for Config.RelayAppliedRetention after the last time a relay applied
// it or found it here (SeenAt). A relay deletes a change right after
// applying it, in the same call of ApplyRelays, and applies nothing in a
// call once the call's deadline (its lease's end, 10 s at most) has
// passed. So a second relay, which read the change before its deletion,
// applies its copy within twice that time of SeenAt or never; the
// retention is kept far above it (at least MinRelayAppliedRetention),
// which also covers the instances' clocks differing. PruneRelayApplied
// removes the rows past it, in bulk.
type relayApplied struct {
	Target int64 `gorm:"primaryKey;autoIncrement:false"` // the change's target: places the row
	ID     int64 `gorm:"primaryKey;autoIncrement:false"` // the change's id
	// SeenAt is when a relay last applied the change here or found it
	// applied. The rows made before the column have the time it was
	// added.
	SeenAt time.Time `gorm:"not null;default:CURRENT_TIMESTAMP(3);index:ix_relay_applied_seen_at"`
}

func (relayApplied) TableName() string { return "relay_applied" }

const (
	// DefaultRelayAppliedRetention is Config.RelayAppliedRetention's
	// default.
	DefaultRelayAppliedRetention = time.Hour
	// MinRelayAppliedRetention is the least Config.RelayAppliedRetention
	// may be: well above the relay's batch, which ends with its lease
	// (feed/fanout's dispatcherLeaseTTL, 10 s).
	MinRelayAppliedRetention = time.Minute
	// relayAppliedPruneBatch is how many rows of one node PruneRelayApplied
	// looks at in one statement.
	relayAppliedPruneBatch = 1000
)

// PruneRelayApplied removes the relay_applied rows seen last before
// Config.RelayAppliedRetention whose change is gone from its node, and
// returns how many. A row whose change is still pending stays; so does a
// batch of rows whose changes' nodes do not all answer, and the rest of
// its node's: they wait for the next call. Nothing on one database.
func (s *Store) PruneRelayApplied(ctx context.Context) (int, error) {
	if s.shards == nil {
		return 0, nil
	}
	before := time.Now().UTC().Add(-s.relayAppliedRetention)
	pruned := 0
	var errs []error
	for shard := range s.shards.n {
		n, err := s.pruneRelayAppliedOn(ctx, int64(shard), before)
		pruned += n
		if err != nil {
			errs = append(errs, fmt.Errorf("relay_applied of data node %d: %w", shard, err))
		}
	}
	return pruned, errors.Join(errs...)
}

// pruneRelayAppliedOn is PruneRelayApplied on data node shard, oldest
// rows first, a batch at a time.
func (s *Store) pruneRelayAppliedOn(ctx context.Context, shard int64, before time.Time) (int, error) {
	db := s.db.WithContext(ctx)
	pruned := 0
	from := time.Time{}
	for {
		var rows []relayApplied
		err := db.Table(s.on("relay_applied", shard)).Where("seen_at >= ? AND seen_at < ?", from, before).
			Order("seen_at").Limit(relayAppliedPruneBatch).Find(&rows).Error
		if err != nil || len(rows) == 0 {
			return pruned, err
		}
		bySource := map[int][]int64{}
		for _, r := range rows {
			bySource[s.ShardOf(r.ID)] = append(bySource[s.ShardOf(r.ID)], r.ID)
		}
		pending := map[int64]bool{}
		for source, ids := range bySource {
			var found []int64
			if err := db.Table(s.on("relay_changes", int64(source))).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
				return pruned, err
			}
			for _, id := range found {
				pending[id] = true
			}
		}
		var gone [][]any
		for _, r := range rows {
			if !pending[r.ID] {
				gone = append(gone, []any{r.Target, r.ID})
			}
		}
		if len(gone) > 0 {
			// seen_at again: a relay that found a row meanwhile keeps it.
			n, err := s.deleteRows(db, &relayApplied{}, s.on("relay_applied", shard), "(target, id) IN ? AND seen_at < ?", gone, before)
			pruned += int(n)
			if err != nil {
				return pruned, err
			}
		}
		last := rows[len(rows)-1].SeenAt
		if len(rows) < relayAppliedPruneBatch || !last.After(from) {
			return pruned, nil
		}
		// The next batch starts at the last one's time: the rows kept
		// there are read again, the batch's size above them.
		from = last
	}
}

// applyHalf runs ops on target's node within tx and writes the events
// there. What the half finds changed on this node goes back to the
// actor's through the relay: a follow refused here (the followee blocks
// the follower, or the follower, whose request the followee approved,
// blocks the followee) is undone there, its events replaced by the
// undoing's;
// and a follow a block's half ended here, which the blocker's node had
// not seen, is removed there too (its followers row arrived, or will
// arrive, after the block: possibly after an unblock as well).
func (s *Store) applyHalf(tx *gorm.DB, target int64, ops []relayOp, events []models.OutboxEvent) error {
	back, backTo := &relayed{}, int64(0)
	var opEvents []models.OutboxEvent
	for _, o := range ops {
		r, err := s.applyOp(tx, o)
		if err != nil {
			return fmt.Errorf("%s %d %d: %w", o.Op, o.User, o.Other, err)
		}
		switch {
		case r.refused && o.Op == opRequestAdded:
			back.op(relayOp{Op: opRequestSentRemoved, User: o.Other, Other: o.User, Seq: o.Seq, At: o.At})
			backTo = o.Other
		case r.approved:
			back.op(relayOp{Op: opFollowingAdded, User: o.Other, Other: o.User, Seq: o.Seq, At: o.At})
			if err := back.event(tx, models.EventFollowed, models.FollowEventPayload{FollowerID: o.Other, FolloweeID: o.User}, o.At); err != nil {
				return err
			}
			backTo = o.Other
		case r.refused && o.Op == opFollowingAdded:
			back.op(relayOp{Op: opFollowerRemoved, User: o.Other, Other: o.User, Seq: o.Seq, At: o.At})
			if err := back.event(tx, models.EventUnfollowed, models.FollowEventPayload{FollowerID: o.User, FolloweeID: o.Other}, o.At); err != nil {
				return err
			}
			backTo, events = o.Other, nil
		case r.refused:
			back.op(relayOp{Op: opFollowingRemoved, User: o.Other, Other: o.User, Seq: o.Seq, At: o.At})
			if err := back.event(tx, models.EventUnfollowed, models.FollowEventPayload{FollowerID: o.Other, FolloweeID: o.User}, o.At); err != nil {
				return err
			}
			backTo, events = o.Other, nil
		case r.changed && o.Op == opFollowerRemoved && o.Before != 0 && r.seq != o.Seq:
			back.op(relayOp{Op: opFollowingRemoved, User: o.Other, Other: o.User, Seq: r.seq, At: o.At})
			if err := back.event(tx, models.EventUnfollowed, models.FollowEventPayload{FollowerID: o.Other, FolloweeID: o.User}, o.At); err != nil {
				return err
			}
			backTo = o.Other
		case r.changed && o.Op == opFollowingRemoved && o.Before != 0 && r.seq != o.Seq:
			back.op(relayOp{Op: opFollowerRemoved, User: o.Other, Other: o.User, Seq: r.seq, At: o.At})
			if err := back.event(tx, models.EventFollowerRemoved, models.FollowEventPayload{FollowerID: o.User, FolloweeID: o.Other}, o.At); err != nil {
				return err
			}
			backTo = o.Other
		}
		if r.changed && o.Event != nil && !carries(events, o.Event.Kind) {
			opEvents = append(opEvents, *o.Event)
		}
	}
	events = append(events, opEvents...)
	if len(back.ops) > 0 {
		if err := s.relay(tx, target, backTo, back); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		return nil
	}
	owners := make([]int64, len(events))
	for i := range owners {
		owners[i] = target
	}
	for i := range events {
		events[i].ID = 0
	}
	if err := s.assignEventIDs(tx, events, owners); err != nil {
		return err
	}
	return tx.Create(&events).Error
}

func carries(events []models.OutboxEvent, kind string) bool {
	for _, ev := range events {
		if ev.Kind == kind {
			return true
		}
	}
	return false
}

// opResult is what an op did: whether it changed a row, whether it
// refused a follow or a request, whether it approved a request on
// arrival, and the follow id of the row it removed.
type opResult struct {
	changed, refused, approved bool
	seq                        int64
}

// applyOp runs one op.
func (s *Store) applyOp(tx *gorm.DB, o relayOp) (opResult, error) {
	switch o.Op {
	case opFollowerAdded:
		blocked, err := s.blocks(tx, o.User, o.Other)
		if err != nil || blocked {
			return opResult{refused: blocked}, err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Follower{UserID: o.User, FollowerID: o.Other, ID: o.Seq, CreatedAt: o.At})
		if res.Error != nil {
			return opResult{}, res.Error
		}
		if res.RowsAffected == 0 {
			return opResult{}, nil // the follow is here already, maybe by an approval, whose id stands
		}
		side := followSides{follower: true}
		if err := bumpFollowCounts(tx, o.Other, o.User, +1, side); err != nil {
			return opResult{}, err
		}
		return opResult{changed: true}, shiftRelationMarks(tx, o.Other, o.User, o.Seq, +1, side)
	case opFollowingAdded:
		blocked, err := s.blocks(tx, o.User, o.Other)
		if err != nil || blocked {
			return opResult{refused: blocked}, err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Following{UserID: o.User, FolloweeID: o.Other, ID: o.Seq, CreatedAt: o.At})
		if res.Error != nil {
			return opResult{}, res.Error
		}
		asked, err := s.deleteRows(tx, &followRequestSent{}, "follow_requests_sent", "user_id = ? AND target_id = ?", o.User, o.Other)
		if err != nil {
			return opResult{}, err
		}
		if res.RowsAffected == 0 {
			return opResult{changed: asked > 0}, takeApprovalID(tx, FollowingList, o.User, o.Other, o.Seq, o.At)
		}
		side := followSides{following: true}
		if err := bumpFollowCounts(tx, o.User, o.Other, +1, side); err != nil {
			return opResult{}, err
		}
		return opResult{changed: true}, shiftRelationMarks(tx, o.User, o.Other, o.Seq, +1, side)
	case opFollowerRemoved:
		seq, err := s.deleteFollow(tx, "followers", "follower_id", o.User, o.Other, o.Seq, o.Before)
		if err != nil || seq == 0 {
			return opResult{}, err
		}
		side := followSides{follower: true}
		if err := bumpFollowCounts(tx, o.Other, o.User, -1, side); err != nil {
			return opResult{}, err
		}
		return opResult{changed: true, seq: seq}, shiftRelationMarks(tx, o.Other, o.User, seq, -1, side)
	case opFollowingRemoved:
		seq, err := s.deleteFollow(tx, "followings", "followee_id", o.User, o.Other, o.Seq, o.Before)
		if err != nil || seq == 0 {
			return opResult{}, err
		}
		if err := removeFromLists(tx, o.User, o.Other); err != nil {
			return opResult{}, err
		}
		side := followSides{following: true}
		if err := bumpFollowCounts(tx, o.User, o.Other, -1, side); err != nil {
			return opResult{}, err
		}
		return opResult{changed: true, seq: seq}, shiftRelationMarks(tx, o.User, o.Other, seq, -1, side)
	case opBlockedByAdded:
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&blockedBy{UserID: o.User, BlockerID: o.Other})
		return opResult{changed: res.RowsAffected > 0}, res.Error
	case opBlockedByRemoved:
		n, err := s.deleteRows(tx, &blockedBy{}, "blocked_by", "user_id = ? AND blocker_id = ?", o.User, o.Other)
		return opResult{changed: n > 0}, err
	case opMutedByAdded:
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&mutedBy{UserID: o.User, MuterID: o.Other})
		return opResult{changed: res.RowsAffected > 0}, res.Error
	case opMutedByRemoved:
		n, err := s.deleteRows(tx, &mutedBy{}, "muted_by", "user_id = ? AND muter_id = ?", o.User, o.Other)
		return opResult{changed: n > 0}, err
	case opRequestsDropped:
		n, err := s.deleteRows(tx, &models.FollowRequest{}, "follow_requests", "user_id = ? AND requester_id = ?", o.User, o.Other)
		if err != nil {
			return opResult{}, err
		}
		where, args := "user_id = ? AND target_id = ?", []any{o.User, o.Other}
		if o.Before != 0 {
			where, args = where+" AND id < ?", append(args, o.Before)
		}
		m, err := s.deleteRows(tx, &followRequestSent{}, "follow_requests_sent", where, args...)
		return opResult{changed: n+m > 0}, err
	case opRequestAdded:
		return s.requestArrived(tx, o)
	case opRequestRemoved:
		seq, err := s.deleteFollow(tx, "follow_requests", "requester_id", o.User, o.Other, o.Seq, 0)
		return opResult{changed: seq != 0}, err
	case opRequestSentRemoved:
		n, err := s.deleteRows(tx, &followRequestSent{}, "follow_requests_sent", "user_id = ? AND target_id = ? AND id <= ?", o.User, o.Other, o.Seq)
		return opResult{changed: n > 0}, err
	case opRepostAdded:
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&repostByOriginal{OriginalID: o.Post, ID: o.Repost, AuthorID: o.Other})
		if res.Error != nil || res.RowsAffected == 0 {
			return opResult{}, res.Error
		}
		return opResult{changed: true}, tx.Model(&models.Post{}).Where("id = ?", o.Post).
			Updates(map[string]any{"repost_count": gorm.Expr("repost_count + 1"), "version": nextVersion}).Error
	case opRepostRemoved:
		res := tx.Model(&repostByOriginal{}).Where("original_id = ? AND id = ? AND deleted_at IS NULL", o.Post, o.Repost).
			Update("deleted_at", o.At)
		if res.Error != nil || res.RowsAffected == 0 {
			return opResult{}, res.Error
		}
		return opResult{changed: true}, tx.Model(&models.Post{}).Where("id = ? AND repost_count > 0", o.Post).
			Updates(map[string]any{"repost_count": gorm.Expr("repost_count - 1"), "version": nextVersion}).Error
	}
	return opResult{}, fmt.Errorf("unknown relay op %q", o.Op)
}

// requestArrived is opRequestAdded on the asked user's node. Their row's
// lock, taken first as a change of their protection or a block of theirs
// takes it, orders the request with those: a block committed before
// refuses it, one after drops it. A block of theirs made after the
// request (by id) refuses it even when lifted since (voidedRequests).
func (s *Store) requestArrived(tx *gorm.DB, o relayOp) (opResult, error) {
	protected, err := s.isProtected(tx, o.User)
	if err != nil {
		return opResult{}, err
	}
	var between []int64
	err = tx.Raw(`SELECT 1 FROM blocks WHERE blocker_id = ? AND blocked_id = ?
		UNION ALL SELECT 1 FROM blocked_by WHERE user_id = ? AND blocker_id = ?
		UNION ALL SELECT 1 FROM voided_requests WHERE user_id = ? AND requester_id = ? AND before_id > ?
		UNION ALL SELECT 1 FROM followers WHERE user_id = ? AND follower_id = ?`,
		o.User, o.Other, o.User, o.Other, o.User, o.Other, o.Seq, o.User, o.Other).Scan(&between).Error
	if err != nil || len(between) > 0 {
		return opResult{refused: len(between) > 0}, err
	}
	if !protected {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Follower{UserID: o.User, FollowerID: o.Other, ID: o.Seq, CreatedAt: o.At})
		if res.Error != nil || res.RowsAffected == 0 {
			return opResult{refused: res.RowsAffected == 0}, res.Error
		}
		side := followSides{follower: true}
		if err := bumpFollowCounts(tx, o.Other, o.User, +1, side); err != nil {
			return opResult{}, err
		}
		return opResult{changed: true, approved: true}, shiftRelationMarks(tx, o.Other, o.User, o.Seq, +1, side)
	}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.FollowRequest{UserID: o.User, RequesterID: o.Other, ID: o.Seq, CreatedAt: o.At})
	return opResult{changed: res.RowsAffected > 0}, res.Error
}

// takeApprovalID gives the follow of userID and other, already written
// here under another id, the id of an approval of it (seq, made at at),
// with its list's marks. An approval's id stands on both nodes: its node
// writes it over the row it finds (approveAcross), and its half over the
// row it finds on the requester's node, where a follow's half keeps
// whatever row it finds (opFollowerAdded). So both nodes hold one id
// whichever of a follow and an approval of the same two, made at once on
// their two nodes, arrives first; and an approval made after the end of a
// follow whose half had not reached the approver's node yet, which found
// that follow's row there, outlives that end (an end names the follows
// made before it).
func takeApprovalID(tx *gorm.DB, list RelationList, userID, other, seq int64, at time.Time) error {
	table, column := list.table()
	var held []int64
	if err := tx.Table(table).Where("user_id = ? AND "+column+" = ?", userID, other).
		Clauses(clause.Locking{Strength: "UPDATE"}).Pluck("id", &held).Error; err != nil || len(held) == 0 || held[0] == seq {
		return err
	}
	err := tx.Table(table).Where("user_id = ? AND "+column+" = ?", userID, other).
		Updates(map[string]any{"id": seq, "created_at": at}).Error
	if err != nil {
		return err
	}
	// The row moves past the marks between the two ids.
	if err := shiftMarks(tx, list, userID, held[0], -1); err != nil {
		return err
	}
	return shiftMarks(tx, list, userID, seq, +1)
}

// voidedRequests is a row of the sharded layout's voided_requests, on
// the blocker's node: RequesterID's requests to follow UserID made before
// BeforeID, the id of UserID's last block of them, are void. A request
// commits on its requester's node and reaches the asked user's through
// the relay; a block drops the requests between the two, but one still
// on its way arrives after it, possibly after an unblock too, and would
// stand where the block had ended it. blockAcross writes the row in the
// block's transaction (raising the floor of an earlier block), and
// requestArrived refuses a request below it. Requests and blocks take
// their ids from one time-ordered sequence (feed/ids), as the follows do
// that opFollowingRemoved's Before compares with a block's id.
//
// The row stays: a request below the floor may still be held back on its
// node (a node down, its halves waiting in their order), and nothing here
// learns when the last one has arrived. It is one row for each pair whose
// one user ever blocked the other across two nodes, no more than blocks.
type voidedRequests struct {
	UserID      int64 `gorm:"primaryKey;autoIncrement:false"`
	RequesterID int64 `gorm:"primaryKey;autoIncrement:false"`
	BeforeID    int64 `gorm:"not null"`
}

func (voidedRequests) TableName() string { return "voided_requests" }

// deleteFollow removes the row of table owned by user whose otherColumn
// is other: any made before before unless it is 0, else the follow seq's,
// or when seq is 0 any. It returns the removed row's follow id (0: none
// removed).
func (s *Store) deleteFollow(tx *gorm.DB, table, otherColumn string, user, other, seq, before int64) (int64, error) {
	where := "user_id = ? AND " + otherColumn + " = ?"
	args := []any{user, other}
	switch {
	case before != 0:
		where += " AND id < ?"
		args = append(args, before)
	case seq != 0:
		where += " AND id = ?"
		args = append(args, seq)
	}
	var removed []int64
	if err := tx.Raw("DELETE FROM "+table+" WHERE "+where+" RETURNING id", args...).Scan(&removed).Error; err != nil {
		return 0, err
	}
	if len(removed) == 0 {
		return 0, nil
	}
	return removed[0], nil
}

// blocks reports whether blocker blocks blocked, a locking read on
// blocker's node.
func (s *Store) blocks(tx *gorm.DB, blocker, blocked int64) (bool, error) {
	var found []int64
	err := tx.Model(&models.Block{}).Where("blocker_id = ? AND blocked_id = ?", blocker, blocked).
		Clauses(clause.Locking{Strength: "UPDATE"}).Limit(1).Pluck("blocker_id", &found).Error
	return len(found) > 0, err
}

// relayLag counts the pending halves and the time of the oldest.
func (s *Store) relayLag(ctx context.Context) (int64, time.Time, error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM relay_changes").Scan(&row).Error
	if err != nil || row.Oldest == nil {
		return row.N, time.Time{}, err
	}
	return row.N, *row.Oldest, nil
}

// repostByOriginal is a row of the sharded layout's reposts_by_original:
// a repost kept a second time on its original's node (placed by the
// original's id, which carries its author's node), so that the reposts of
// an original are read there alone. The relay writes it with the
// original's repost count, in one transaction.
type repostByOriginal struct {
	OriginalID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID         int64 `gorm:"primaryKey;autoIncrement:false"`
	AuthorID   int64 `gorm:"not null"`
	DeletedAt  *time.Time
}

func (repostByOriginal) TableName() string { return "reposts_by_original" }
