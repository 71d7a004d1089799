package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"feedservice/models"
)

// The sharded layout (Config.ShardDSNs): the service talks to one MariaDB
// head with the Spider engine, whose tables hold no rows but route each
// statement to the data nodes. Every table is partitioned by its owner's
// user, one partition per data node, shard = owner id MOD number of nodes:
//
//	users            id             home_dismissals  user_id
//	usernames        username_key   blocks           blocker_id
//	followings       user_id        mutes            muter_id
//	followers        user_id        relation_marks   user_id
//	posts            id             promoted_posts   post_id
//	outbox_events    id             blocked_by       user_id (the blocked)
//	lists            owner_id       muted_by         user_id (the muted)
//	list_members     owner_id       follow_requests  user_id (the asked)
//	relay_changes    id             follow_requests_sent  user_id (the asker)
//	                                reposts_by_original   original_id
//
// A post's id carries its author's shard (ids.NextBeside), and an outbox
// event's id the shard of the user whose change wrote it, so that both are
// found by id alone (a relay change's id, like an event's, its actor's
// node). usernames is the one table placed by a hash of a name
// (Spider's KEY partitioning): sign-in reads it, then the user by id.
// usernames, blocked_by, muted_by, follow_requests_sent, relay_changes
// and reposts_by_original exist on this layout alone.
// schema_migrations and the outbox_event_ids sequence stay on the head.
// store/migrate makes the layout: the tables on every data node, and the
// head's Spider tables over them, each placed by its column above.

// shardLayout is the sharded layout's shape; nil on one database.
type shardLayout struct {
	n     int      // data nodes
	nodes []string // their DSNs, as Config.ShardDSNs gives them (migrate only)
}

// MaxShards is how many data nodes the sharded layout may have: a post id
// carries its author's id modulo MaxShards (feed/ids' ShardModulus, which
// its tests hold equal to this), so the shard count must divide it.
const MaxShards = 16

// Sharded reports whether the store runs on a Spider head.
func (s *Store) Sharded() bool { return s.shards != nil }

// Shards is the number of data nodes (1 on one database).
func (s *Store) Shards() int {
	if s.shards == nil {
		return 1
	}
	return s.shards.n
}

// ShardOf is the data node that holds the rows owned by id (a user, a
// post, an outbox event): 0 on one database.
func (s *Store) ShardOf(id int64) int {
	if s.shards == nil {
		return 0
	}
	return int(id % int64(s.shards.n))
}

// on names table restricted to the partition of owner's shard, for a
// statement whose WHERE names the owner by a column that is not the
// table's partitioning one (posts by author_id): MariaDB then sends it to
// that data node alone. The table itself on one database.
func (s *Store) on(table string, owner int64) string {
	if s.shards == nil {
		return table
	}
	return fmt.Sprintf("%s PARTITION (s%d)", table, s.ShardOf(owner))
}

// validShardCount checks n data nodes against MaxShards.
func validShardCount(n int) error {
	if n < 2 || MaxShards%n != 0 {
		return fmt.Errorf("MYSQL_SHARD_DSNS: %d data nodes; the sharded layout takes a number that divides %d, at least 2", n, MaxShards)
	}
	return nil
}

// detectShards reads the layout of the head's database: the partitions of
// its users table when it is a Spider table, nil when it is not.
func detectShards(ctx context.Context, db *gorm.DB) (*shardLayout, error) {
	// One table's row first: on one database (every test's) that is all,
	// and it needs no join, which MariaDB would make in a temporary table.
	var engine string
	err := db.WithContext(ctx).Raw(`SELECT COALESCE(MAX(ENGINE), '') FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'users'`).Scan(&engine).Error
	if err != nil || !strings.EqualFold(engine, "SPIDER") {
		return nil, err
	}
	var n int64
	err = db.WithContext(ctx).Raw(`SELECT COUNT(*) FROM information_schema.PARTITIONS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'users' AND PARTITION_NAME IS NOT NULL`).Scan(&n).Error
	if err != nil || n == 0 {
		return nil, err
	}
	return &shardLayout{n: int(n)}, nil
}

// eventOwner is the user whose change an outbox event describes: the event
// lives on that user's shard, with the rows the change wrote there.
func eventOwner(payload any) int64 {
	switch p := payload.(type) {
	case models.UserEventPayload:
		return p.UserID
	case models.FollowEventPayload:
		return p.FollowerID
	case models.PostEventPayload:
		return p.AuthorID
	case models.BlockEventPayload:
		return p.BlockerID
	case models.MuteEventPayload:
		return p.MuterID
	}
	panic(fmt.Sprintf("store: an outbox payload of type %T names no owner", payload))
}

// assignEventIDs gives each event, on the sharded layout, an id on its
// owner's shard: the next value of the head's outbox_event_ids sequence
// times the shard count, plus the shard. Ids stay unique and grow with
// time, as the auto-increment ids of one database do. Nothing on one
// database, where MySQL numbers them.
func (s *Store) assignEventIDs(tx *gorm.DB, events []models.OutboxEvent, owners []int64) error {
	if s.shards == nil {
		return nil
	}
	for i := range events {
		var next int64
		if err := tx.Raw("SELECT NEXT VALUE FOR outbox_event_ids").Scan(&next).Error; err != nil {
			return fmt.Errorf("outbox event id: %w", err)
		}
		events[i].ID = next*int64(s.shards.n) + int64(s.ShardOf(owners[i]))
	}
	return nil
}

// openShards is the layout of the head's database: the given data nodes,
// or those its Spider tables were made over, or nil on one database.
func openShards(ctx context.Context, db *gorm.DB, nodes []string) (*shardLayout, error) {
	found, err := detectShards(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read the layout: %w", err)
	}
	if len(nodes) == 0 {
		return found, nil
	}
	if err := validShardCount(len(nodes)); err != nil {
		return nil, err
	}
	if found != nil && found.n != len(nodes) {
		return nil, fmt.Errorf("MYSQL_SHARD_DSNS names %d data nodes, the head's tables are over %d: moving to another count is a copy (see docs/operations.md)", len(nodes), found.n)
	}
	return &shardLayout{n: len(nodes), nodes: nodes}, nil
}

// byShard splits ids (of rows placed by id: users, posts, events) into one
// list per data node that holds some, so that a statement over each list
// reaches one node; on one database, ids whole. No list is empty.
func (s *Store) byShard(ids []int64) [][]int64 {
	if len(ids) == 0 {
		return nil
	}
	if s.shards == nil {
		return [][]int64{ids}
	}
	lists := make([][]int64, s.shards.n)
	for _, id := range ids {
		lists[s.ShardOf(id)] = append(lists[s.ShardOf(id)], id)
	}
	return slices.DeleteFunc(lists, func(l []int64) bool { return len(l) == 0 })
}

// deleteRows deletes the rows of table (model's) that match where and
// returns how many it deleted. A DELETE through Spider deletes the rows
// but reports none affected (MariaDB 10.11: ROW_COUNT() is 0), so on the
// sharded layout it counts the rows DELETE ... RETURNING gives back.
func (s *Store) deleteRows(tx *gorm.DB, model any, table, where string, args ...any) (int64, error) {
	if s.shards == nil {
		res := tx.Where(where, args...).Delete(model)
		return res.RowsAffected, res.Error
	}
	var deleted []int
	err := tx.Raw("DELETE FROM "+table+" WHERE "+where+" RETURNING 1", args...).Scan(&deleted).Error
	return int64(len(deleted)), err
}
