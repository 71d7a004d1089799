package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// The bulk writes below load many rows in a few statements (the demo graph
// of `go run . -seed`). Each leaves the database as the same changes made
// one by one would: the rows, every count they move and one outbox event
// per change, from which the engine derives its Redis state as from any
// other change (unless told that there is nothing to derive: EventsApplied).

// BulkEvents says what becomes of the outbox events of a bulk write.
type BulkEvents int

const (
	// EventsPending leaves the events to the dispatcher, as every other
	// change's: right on any Redis, while any instance runs.
	EventsPending BulkEvents = iota
	// EventsApplied records the events as dispatched when they are
	// written. Only for a Redis that holds nothing derived from the
	// database (the embedded one, before its engine started), where every
	// key the events would touch is built from MySQL on its first read:
	// their fan-out would be work for nothing.
	EventsApplied
)

// outboxEvent is the event of kind with payload at, dispatched as events says.
func (events BulkEvents) outboxEvent(kind string, payload any, at time.Time) (models.OutboxEvent, error) {
	ev, err := newEvent(kind, payload, at)
	if events == EventsApplied {
		ev.DispatchedAt = &at
	}
	return ev, err
}

// bulkRows is how many rows one INSERT carries: far below the bind
// variables a statement may have on SQLite (32,766) and MySQL (65,535).
const bulkRows = 500

// bulkHalfOps is how many follows (CreateFollows) or reposts
// (CreatePosts) one relayed half of a bulk write carries on the sharded
// layout: each is about 400 bytes of JSON with its event, and a half's ops
// are one TEXT value (64 KiB at most).
const bulkHalfOps = 100

// UsersByUsernames finds the users with the given names, ignoring case;
// names nobody holds are left out, and the order is the database's.
func (s *Store) UsersByUsernames(ctx context.Context, usernames []string) ([]*models.User, error) {
	keys := make([]string, len(usernames))
	for i, name := range usernames {
		keys[i] = strings.ToLower(name)
	}
	var users []*models.User
	for start := 0; start < len(keys); start += bulkRows {
		var page []*models.User
		var err error
		if s.shards == nil {
			err = s.db.WithContext(ctx).Where("username_key IN ?", keys[start:min(start+bulkRows, len(keys))]).Find(&page).Error
		} else {
			var ids []int64
			if err = s.db.WithContext(ctx).Model(&username{}).Where("username_key IN ?", keys[start:min(start+bulkRows, len(keys))]).Pluck("user_id", &ids).Error; err == nil {
				page, err = s.UsersByIDs(Primary(ctx), ids)
			}
		}
		if err != nil {
			return nil, err
		}
		users = append(users, page...)
	}
	return users, nil
}

// CreateUsers inserts new users in one transaction; ErrUsernameTaken when
// a name, ignoring case, is in use (and then none is inserted).
func (s *Store) CreateUsers(ctx context.Context, users []*models.User) error {
	if len(users) == 0 {
		return nil
	}
	for _, u := range users {
		u.UsernameKey = strings.ToLower(u.Username)
	}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := s.claimUsernames(tx, users); err != nil {
			return err
		}
		return tx.CreateInBatches(users, bulkRows).Error
	})
	if isDuplicate(err) {
		return ErrUsernameTaken
	}
	return err
}

// NewFollow is one relation for CreateFollows: FollowerID follows
// FolloweeID from At; ID orders the lists (a time-ordered id, as Follow's
// seq).
type NewFollow struct {
	FollowerID, FolloweeID, ID int64
	At                         time.Time
}

// CreateFollows makes each relation of follows that does not exist yet, in
// one transaction: both rows, both users' counts and a "followed" event
// per relation, as Follow does one at a time. It returns how many it made.
// The offset index of each list that grew is dropped (a follow one at a
// time moves it instead); the next page jump through MySQL rebuilds it.
// On the sharded layout it commits on each follower's node in turn, the
// followees' sides relayed (createFollowsOnNodes).
func (s *Store) CreateFollows(ctx context.Context, follows []NewFollow, events BulkEvents) (int, error) {
	if s.shards != nil {
		return s.createFollowsOnNodes(ctx, follows, events)
	}
	made := 0
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		made = 0
		fresh, err := newFollows(tx, follows)
		if err != nil || len(fresh) == 0 {
			return err
		}
		made = len(fresh)
		followings := make([]models.Following, len(fresh))
		followers := make([]models.Follower, len(fresh))
		outbox := make([]models.OutboxEvent, len(fresh))
		following, followed := map[int64]int{}, map[int64]int{}
		for i, f := range fresh {
			followings[i] = models.Following{UserID: f.FollowerID, FolloweeID: f.FolloweeID, ID: f.ID, CreatedAt: f.At}
			followers[i] = models.Follower{UserID: f.FolloweeID, FollowerID: f.FollowerID, ID: f.ID, CreatedAt: f.At}
			if outbox[i], err = events.outboxEvent(models.EventFollowed, models.FollowEventPayload{FollowerID: f.FollowerID, FolloweeID: f.FolloweeID}, f.At); err != nil {
				return err
			}
			following[f.FollowerID]++
			followed[f.FolloweeID]++
		}
		owners := make([]int64, len(fresh))
		for i, f := range fresh {
			owners[i] = f.FollowerID
		}
		if err := s.assignEventIDs(tx, outbox, owners); err != nil {
			return err
		}
		for _, rows := range []any{followings, followers, outbox} {
			if err := tx.CreateInBatches(rows, bulkRows).Error; err != nil {
				return err
			}
		}
		if err := addToCounts(tx, "following_count", following); err != nil {
			return err
		}
		if err := addToCounts(tx, "follower_count", followed); err != nil {
			return err
		}
		for list, users := range map[RelationList]map[int64]int{FollowingList: following, FollowersList: followed} {
			if err := tx.Where("list = ? AND user_id IN ?", list, keysOf(users)).Delete(&relationMark{}).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return made, err
}

// createFollowsOnNodes is CreateFollows on the sharded layout: one
// transaction on each follower's node, in node order, with the followings
// rows and the followers' counts, and the followees' sides (followers
// rows, counts and marks, and each follow's event) in halves for each
// followee's node (bulkHalfOps follows each): applied at once on the
// same node, relayed to the others. The followees' nodes check their blocks, as a follow's half
// does: a follow refused there is undone on the follower's node. It
// returns how many follows it wrote on the followers' nodes.
func (s *Store) createFollowsOnNodes(ctx context.Context, follows []NewFollow, events BulkEvents) (int, error) {
	byNode := map[int][]NewFollow{}
	for _, f := range follows {
		byNode[s.ShardOf(f.FollowerID)] = append(byNode[s.ShardOf(f.FollowerID)], f)
	}
	made := 0
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		n := 0
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			n = 0
			fresh, err := newFollows(tx, byNode[node])
			if err != nil || len(fresh) == 0 {
				return err
			}
			n = len(fresh)
			followings := make([]models.Following, len(fresh))
			following := map[int64]int{}
			halves := bulkHalves{}
			for i, f := range fresh {
				followings[i] = models.Following{UserID: f.FollowerID, FolloweeID: f.FolloweeID, ID: f.ID, CreatedAt: f.At}
				following[f.FollowerID]++
				ev, err := events.outboxEvent(models.EventFollowed, models.FollowEventPayload{FollowerID: f.FollowerID, FolloweeID: f.FolloweeID}, f.At)
				if err != nil {
					return err
				}
				ev.TraceParent = TraceParent(tx.Statement.Context)
				halves.add(s.ShardOf(f.FolloweeID), f.FolloweeID, relayOp{Op: opFollowerAdded, User: f.FolloweeID, Other: f.FollowerID, Seq: f.ID, At: f.At, Event: &ev})
			}
			if err := tx.CreateInBatches(followings, bulkRows).Error; err != nil {
				return err
			}
			if err := addToCounts(tx, "following_count", following); err != nil {
				return err
			}
			if err := tx.Where("list = ? AND user_id IN ?", FollowingList, keysOf(following)).Delete(&relationMark{}).Error; err != nil {
				return err
			}
			return s.relayHalves(tx, fresh[0].FollowerID, halves)
		})
		if err != nil {
			return made, err
		}
		made += n
	}
	return made, nil
}

// newFollows is follows without the relations that exist already or come
// twice.
func newFollows(tx *gorm.DB, follows []NewFollow) ([]NewFollow, error) {
	type pair struct{ follower, followee int64 }
	seen := map[pair]bool{}
	followerIDs := map[int64]int{}
	for _, f := range follows {
		followerIDs[f.FollowerID]++
	}
	ids := keysOf(followerIDs)
	for start := 0; start < len(ids); start += bulkRows {
		var rows []models.Following
		err := tx.Select("user_id", "followee_id").Where("user_id IN ?", ids[start:min(start+bulkRows, len(ids))]).Find(&rows).Error
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			seen[pair{r.UserID, r.FolloweeID}] = true
		}
	}
	var fresh []NewFollow
	for _, f := range follows {
		if p := (pair{f.FollowerID, f.FolloweeID}); !seen[p] {
			seen[p] = true
			fresh = append(fresh, f)
		}
	}
	return fresh, nil
}

// CreatePosts inserts posts and reposts in one transaction, in the order
// given, with a "post_created" event each and the counts they move: each
// author's post count and each reposted original's repost count, as
// CreatePost and Repost do one at a time. A repost's RepostOfID must name
// a live original (one given earlier in posts, or stored), which its
// author has not reposted yet: Repost's idempotence is the caller's to
// keep here. ErrNotFound, and nothing written, when an original is
// missing or deleted. On the sharded layout it commits on each author's
// node in turn, the originals' sides relayed (createPostsOnNodes).
func (s *Store) CreatePosts(ctx context.Context, posts []*models.Post, events BulkEvents) error {
	if len(posts) == 0 {
		return nil
	}
	if s.shards != nil {
		return s.createPostsOnNodes(ctx, posts, events)
	}
	return s.transaction(ctx, func(tx *gorm.DB) error {
		outbox := make([]models.OutboxEvent, len(posts))
		byAuthor, reposts := map[int64]int{}, map[int64]int{}
		for i, p := range posts {
			var err error
			if outbox[i], err = events.outboxEvent(models.EventPostCreated, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, p.CreatedAt); err != nil {
				return err
			}
			byAuthor[p.AuthorID]++
			if p.RepostOfID != nil {
				reposts[*p.RepostOfID]++
			}
		}
		if err := tx.CreateInBatches(posts, bulkRows).Error; err != nil {
			return err
		}
		owners := make([]int64, len(posts))
		for i, p := range posts {
			owners[i] = p.AuthorID
		}
		if err := s.assignEventIDs(tx, outbox, owners); err != nil {
			return err
		}
		if err := tx.CreateInBatches(outbox, bulkRows).Error; err != nil {
			return err
		}
		if err := addToCounts(tx, "post_count", byAuthor); err != nil {
			return err
		}
		for _, original := range keysOf(reposts) {
			res := tx.Model(&models.Post{}).Where("id = ? AND repost_of_id IS NULL AND deleted_at IS NULL", original).
				Updates(map[string]any{"repost_count": gorm.Expr("repost_count + ?", reposts[original]), "version": nextVersion})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return fmt.Errorf("repost of post %d: %w", original, ErrNotFound)
			}
		}
		return nil
	})
}

// createPostsOnNodes is CreatePosts on the sharded layout. The reposted
// originals are checked first, one statement on each of their nodes
// (ErrNotFound, and nothing written, when one is missing, deleted or a
// repost), bulkRows at a time. Then one transaction on each author's node, in node order,
// first for the posts that are not reposts, then for the reposts (whose
// originals may be among the former): the posts, their authors' counts,
// and the events of the posts that are not reposts; each repost's
// reposts_by_original row and its original's count, with the repost's
// event, in halves for the original's node (bulkHalfOps reposts each),
// applied at once on the same node, relayed to the others, as Repost's
// half. A node that fails leaves the nodes before it written.
func (s *Store) createPostsOnNodes(ctx context.Context, posts []*models.Post, events BulkEvents) error {
	given := map[int64]bool{} // id: not a repost
	stored := map[int64]int{} // originals to read: reposts of each
	for _, p := range posts {
		given[p.ID] = p.RepostOfID == nil
	}
	for _, p := range posts {
		if p.RepostOfID == nil {
			continue
		}
		if original, ok := given[*p.RepostOfID]; ok {
			if !original {
				return fmt.Errorf("repost of post %d: %w", *p.RepostOfID, ErrNotFound)
			}
			continue
		}
		stored[*p.RepostOfID]++
	}
	for _, some := range s.byShard(keysOf(stored)) {
		for start := 0; start < len(some); start += bulkRows {
			batch := some[start:min(start+bulkRows, len(some))]
			var live []int64
			err := s.db.WithContext(ctx).Model(&models.Post{}).Where("id IN ? AND repost_of_id IS NULL AND deleted_at IS NULL", batch).Pluck("id", &live).Error
			if err != nil {
				return err
			}
			if len(live) < len(batch) {
				for _, id := range live {
					delete(stored, id)
				}
				for _, id := range batch {
					if _, missing := stored[id]; missing {
						return fmt.Errorf("repost of post %d: %w", id, ErrNotFound)
					}
				}
			}
		}
	}
	var originals, reposts []*models.Post
	for _, p := range posts {
		if p.RepostOfID == nil {
			originals = append(originals, p)
		} else {
			reposts = append(reposts, p)
		}
	}
	for _, kind := range [][]*models.Post{originals, reposts} {
		byNode := map[int][]*models.Post{}
		for _, p := range kind {
			byNode[s.ShardOf(p.AuthorID)] = append(byNode[s.ShardOf(p.AuthorID)], p)
		}
		for _, node := range slices.Sorted(maps.Keys(byNode)) {
			if err := s.transaction(ctx, func(tx *gorm.DB) error {
				return s.createPostsOnNode(tx, byNode[node], events)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// createPostsOnNode is createPostsOnNodes' transaction on one author's
// node: posts are of authors of that node, all reposts or none.
func (s *Store) createPostsOnNode(tx *gorm.DB, posts []*models.Post, events BulkEvents) error {
	byAuthor := map[int64]int{}
	var outbox []models.OutboxEvent
	var owners []int64
	halves := bulkHalves{}
	for _, p := range posts {
		byAuthor[p.AuthorID]++
		ev, err := events.outboxEvent(models.EventPostCreated, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, p.CreatedAt)
		if err != nil {
			return err
		}
		ev.TraceParent = TraceParent(tx.Statement.Context)
		if p.RepostOfID == nil {
			outbox = append(outbox, ev)
			owners = append(owners, p.AuthorID)
			continue
		}
		original := *p.RepostOfID
		halves.add(s.ShardOf(original), original, relayOp{Op: opRepostAdded, Post: original, Repost: p.ID, Other: p.AuthorID, At: p.CreatedAt, Event: &ev})
	}
	if err := tx.CreateInBatches(posts, bulkRows).Error; err != nil {
		return err
	}
	if len(outbox) > 0 {
		if err := s.assignEventIDs(tx, outbox, owners); err != nil {
			return err
		}
		if err := tx.CreateInBatches(outbox, bulkRows).Error; err != nil {
			return err
		}
	}
	if err := addToCounts(tx, "post_count", byAuthor); err != nil {
		return err
	}
	return s.relayHalves(tx, posts[0].AuthorID, halves)
}

// bulkHalves are the halves of a bulk write for other nodes' users or
// posts, by node, each of bulkHalfOps ops at most (a half is one TEXT
// value).
type bulkHalves map[int][]bulkHalf

// bulkHalf is one half: its ops, for the node of target.
type bulkHalf struct {
	target int64 // a user or post of the half's node
	ops    *relayed
}

// add puts o, an op on rows of target's node, in that node's last half,
// or in a new one when that one is full.
func (halves bulkHalves) add(node int, target int64, o relayOp) {
	if hs := halves[node]; len(hs) == 0 || len(hs[len(hs)-1].ops.ops) == bulkHalfOps {
		halves[node] = append(hs, bulkHalf{target: target, ops: &relayed{}})
	}
	halves[node][len(halves[node])-1].ops.op(o)
}

// relayHalves ends tx, a bulk write's transaction on actor's node, with
// its halves, node by node in order (relay).
func (s *Store) relayHalves(tx *gorm.DB, actor int64, halves bulkHalves) error {
	for _, node := range slices.Sorted(maps.Keys(halves)) {
		for _, h := range halves[node] {
			if err := s.relay(tx, actor, h.target, h.ops); err != nil {
				return err
			}
		}
	}
	return nil
}

// addToCounts adds delta[id] to column of each user id, moving its version;
// in id order, as bumpFollowCounts locks rows, so that two writers cannot
// deadlock.
func addToCounts(tx *gorm.DB, column string, delta map[int64]int) error {
	for _, id := range keysOf(delta) {
		res := tx.Model(&models.User{}).Where("id = ?", id).
			Updates(map[string]any{column: gorm.Expr(column+" + ?", delta[id]), "version": nextVersion})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("user %d: %w", id, ErrNotFound)
		}
	}
	return nil
}

// keysOf is the ids of m, smallest first.
func keysOf(m map[int64]int) []int64 { return slices.Sorted(maps.Keys(m)) }
