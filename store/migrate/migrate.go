// Package migrate brings a database's schema to the version the store
// reads and writes: the versioned steps (migrate.go), applied once each and
// recorded in schema_migrations, and on the sharded layout the data nodes'
// tables and the head's Spider tables over them (shards.go).
package migrate

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one versioned step of the schema. Steps are applied in order,
// once each, and recorded in schema_migrations; a step never changes after it
// has shipped, so each declares the tables as they were at its version.
type migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

var migrations = []migration{
	{1, "users, followings, followers, posts, outbox_events", migrateV1},
	{2, "users.version, posts.version", migrateV2},
	{3, "relation_marks (the offset index of follower and following lists)", migrateV3},
	{4, "promoted_posts, home_dismissals", migrateV4},
	{5, "users.token_version", migrateV5},
	{6, "outbox_events.trace_parent", migrateV6},
	{7, "blocks, mutes", migrateV7},
	{8, "muted_by (the sharded layout's who-mutes-whom, on the muted's node)", migrateV8},
	{9, "lists, list_members", migrateV9},
	{10, "follow_requests", migrateV10},
	{11, "users.is_protected", migrateV11},
}

// Target is the database Apply migrates, as the store opened it.
type Target struct {
	// DB is the database, or the sharded layout's head.
	DB *gorm.DB
	// MySQL is set for MariaDB or MySQL, unset for SQLite.
	MySQL bool
	// Sharded is set when DB is the head of the sharded layout (Spider
	// tables over data nodes; store/shards.go).
	Sharded bool
	// HeadDSN is the head's DSN: a data node's database is the head's
	// unless the node's DSN names one.
	HeadDSN string
	// NodeDSNs are the data nodes' DSNs, with the settings the store adds
	// to a DSN; none for a head migrated already.
	NodeDSNs []string
	// NodeTables are the sharded layout's own tables (usernames,
	// blocked_by, ...), made on every data node from the store's rows.
	NodeTables []any
}

// schemaMigration records an applied step.
type schemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// Apply applies the steps the database has not seen yet, and returns them.
// Instances starting together take a MySQL named lock, so each step runs
// once.
func Apply(ctx context.Context, t Target) (applied []string, err error) {
	db := t.DB.WithContext(ctx)
	if t.MySQL {
		conn, err := t.DB.DB()
		if err != nil {
			return nil, err
		}
		c, err := conn.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var got int
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK('feedservice_migrate', 60)").Scan(&got); err != nil || got != 1 {
			return nil, fmt.Errorf("take migration lock: %v", err)
		}
		defer c.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK('feedservice_migrate')")
	}
	if t.Sharded {
		return t.migrateShards(ctx)
	}
	if err := t.tableOptions(db).AutoMigrate(&schemaMigration{}); err != nil {
		return nil, fmt.Errorf("schema_migrations: %w", err)
	}
	var done []schemaMigration
	if err := db.Find(&done).Error; err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, m := range done {
		seen[m.Version] = true
	}
	for _, m := range migrations {
		if seen[m.Version] {
			continue
		}
		if err := m.Up(t.tableOptions(db)); err != nil {
			return applied, fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if err := db.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error; err != nil {
			return applied, err
		}
		applied = append(applied, fmt.Sprintf("%d %s", m.Version, m.Name))
	}
	return applied, nil
}

// Applied counts the steps recorded in db's schema_migrations.
func Applied(ctx context.Context, db *gorm.DB) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Model(&schemaMigration{}).Count(&n).Error
	return n, err
}

func (t Target) tableOptions(db *gorm.DB) *gorm.DB {
	if t.MySQL {
		return db.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	return db
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// The tables of version 1.

type v1User struct {
	ID             int64  `gorm:"primaryKey;autoIncrement:false"`
	Username       string `gorm:"size:30;not null"`
	UsernameKey    string `gorm:"size:30;not null;uniqueIndex:ux_users_username_key"`
	DisplayName    string `gorm:"size:200;not null"`
	Bio            string `gorm:"size:1200;not null"`
	PasswordHash   string `gorm:"size:100;not null"`
	CreatedAt      time.Time
	FollowerCount  int `gorm:"not null;default:0;index:ix_users_follower_count"`
	FollowingCount int `gorm:"not null;default:0"`
	PostCount      int `gorm:"not null;default:0"`
	LastActiveAt   time.Time
	FeedReadKey    int64 `gorm:"not null;default:0"`
}

// A relation page is one range scan of (user_id, id).
type v1Following struct {
	UserID     int64 `gorm:"primaryKey;autoIncrement:false;index:ix_followings_user_seq,priority:1"`
	FolloweeID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID         int64 `gorm:"not null;index:ix_followings_user_seq,priority:2"`
	CreatedAt  time.Time
}

type v1Follower struct {
	UserID     int64 `gorm:"primaryKey;autoIncrement:false;index:ix_followers_user_seq,priority:1"`
	FollowerID int64 `gorm:"primaryKey;autoIncrement:false"`
	ID         int64 `gorm:"not null;index:ix_followers_user_seq,priority:2"`
	CreatedAt  time.Time
}

// ix_posts_author is (author_id, id) extended to cover the pull scan, which
// then reads the index alone (the deferred join DESIGN.md measures).
// ix_posts_repost finds the reposts of an original by given authors.
type v1Post struct {
	ID          int64  `gorm:"primaryKey;autoIncrement:false;index:ix_posts_author,priority:2"`
	AuthorID    int64  `gorm:"not null;index:ix_posts_author,priority:1;index:ix_posts_repost,priority:2"`
	Body        string `gorm:"type:text;not null"`
	RepostOfID  *int64 `gorm:"index:ix_posts_author,priority:3;index:ix_posts_repost,priority:1"`
	RepostCount int    `gorm:"not null;default:0"`
	CreatedAt   time.Time
	DeletedAt   *time.Time `gorm:"index:ix_posts_author,priority:4"`
}

type v1OutboxEvent struct {
	ID           int64  `gorm:"primaryKey"`
	Kind         string `gorm:"size:32;not null"`
	Payload      string `gorm:"type:text;not null"`
	CreatedAt    time.Time
	DispatchedAt *time.Time `gorm:"index:ix_outbox_pending"`
}

func (v1User) TableName() string        { return "users" }
func (v1Following) TableName() string   { return "followings" }
func (v1Follower) TableName() string    { return "followers" }
func (v1Post) TableName() string        { return "posts" }
func (v1OutboxEvent) TableName() string { return "outbox_events" }

func migrateV1(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v1User{}, &v1Following{}, &v1Follower{}, &v1Post{}, &v1OutboxEvent{})
}

// Version 2: a row version on users and posts, moved by every update of
// the row in the same statement, so that the Redis copies of a row (see
// feed/cache/copies.go) keep the newest of two writes that race.
func migrateV2(db *gorm.DB) error {
	for _, table := range []string{"users", "posts"} {
		if err := db.Exec("ALTER TABLE " + table + " ADD COLUMN version BIGINT NOT NULL DEFAULT 0").Error; err != nil {
			return err
		}
	}
	return nil
}

// Version 3: the offset index of the relation lists (see store/jumps.go). The
// primary key finds a list's marks; ix_relation_marks_below finds the mark
// nearest below an ascending position.
type v3RelationMark struct {
	List   int8  `gorm:"primaryKey;autoIncrement:false;index:ix_relation_marks_below,priority:1"`
	UserID int64 `gorm:"primaryKey;autoIncrement:false;index:ix_relation_marks_below,priority:2"`
	ID     int64 `gorm:"primaryKey;autoIncrement:false;index:ix_relation_marks_below,priority:4"`
	Below  int64 `gorm:"not null;index:ix_relation_marks_below,priority:3"`
}

func (v3RelationMark) TableName() string { return "relation_marks" }

func migrateV3(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v3RelationMark{})
}

// The tables of version 4: the home's inserted entries (see store/home.go).
// Versions run in list order and are recorded one by one, so a database
// may have 4 before 3: no step assumes another it does not name.

type v4PromotedPost struct {
	PostID    int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

type v4HomeDismissal struct {
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Kind      int   `gorm:"primaryKey;autoIncrement:false"`
	ItemID    int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

func (v4PromotedPost) TableName() string  { return "promoted_posts" }
func (v4HomeDismissal) TableName() string { return "home_dismissals" }

func migrateV4(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v4PromotedPost{}, &v4HomeDismissal{})
}

// Version 5: the version of a user's tokens (see feed/auth.go). Every
// token issued so far carries none, which reads as 0: they stay valid
// until their user logs out.
func migrateV5(db *gorm.DB) error {
	return db.Exec("ALTER TABLE users ADD COLUMN token_version BIGINT NOT NULL DEFAULT 0").Error
}

// Version 6: the trace context of an outbox event's change (see
// feed/fanout/tracing.go); events written before it have none.
func migrateV6(db *gorm.DB) error {
	return db.Exec("ALTER TABLE outbox_events ADD COLUMN trace_parent VARCHAR(64) NOT NULL DEFAULT ''").Error
}

// The tables of version 7: blocks and mutes, one row per edge. The primary
// key (owner, other) answers "does A block B" and the owner's batch checks;
// the _seq index is the owner's list, newest first by the edge's id, as a
// follow list; the reverse index (other, owner) answers "who blocks me"
// (or mutes me) for a given user: the set whole, or which of a batch. The
// reverse direction is never paged (nobody is shown who blocks them), so
// it is keyed by the owner, not by the id, which keeps a batch check one
// probe per id however many block the user.

type v7Block struct {
	BlockerID int64 `gorm:"primaryKey;autoIncrement:false;index:ix_blocks_blocker_seq,priority:1;uniqueIndex:ux_blocks_blocked,priority:2"`
	BlockedID int64 `gorm:"primaryKey;autoIncrement:false;uniqueIndex:ux_blocks_blocked,priority:1"`
	ID        int64 `gorm:"not null;index:ix_blocks_blocker_seq,priority:2"`
	CreatedAt time.Time
}

type v7Mute struct {
	MuterID   int64 `gorm:"primaryKey;autoIncrement:false;index:ix_mutes_muter_seq,priority:1;uniqueIndex:ux_mutes_muted,priority:2"`
	MutedID   int64 `gorm:"primaryKey;autoIncrement:false;uniqueIndex:ux_mutes_muted,priority:1"`
	ID        int64 `gorm:"not null;index:ix_mutes_muter_seq,priority:2"`
	CreatedAt time.Time
}

func (v7Block) TableName() string { return "blocks" }
func (v7Mute) TableName() string  { return "mutes" }

func migrateV7(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v7Block{}, &v7Mute{})
}

// migrateV8 changes nothing on one database, where mutes' reverse index
// answers "who mutes me". On the sharded layout it marks the step that
// adds muted_by (migrateShards makes the table on every node and fills it
// from mutes once).
func migrateV8(*gorm.DB) error { return nil }

// The tables of version 9: readers' lists and their members, keyed by the
// owner first (every statement of a list names its owner). The primary
// key finds a list; ix_lists_owner_seq and ix_list_members_seq page the
// owner's lists and a list's members by id; ix_list_members_member finds
// a followee in every list of the owner's, which an unfollow empties.

type v9List struct {
	OwnerID   int64  `gorm:"primaryKey;autoIncrement:false;index:ix_lists_owner_seq,priority:1"`
	ID        int64  `gorm:"primaryKey;autoIncrement:false;index:ix_lists_owner_seq,priority:2"`
	Name      string `gorm:"size:400;not null"`
	CreatedAt time.Time
}

type v9ListMember struct {
	OwnerID   int64 `gorm:"primaryKey;autoIncrement:false;index:ix_list_members_seq,priority:1;index:ix_list_members_member,priority:1"`
	ListID    int64 `gorm:"primaryKey;autoIncrement:false;index:ix_list_members_seq,priority:2"`
	MemberID  int64 `gorm:"primaryKey;autoIncrement:false;index:ix_list_members_member,priority:2"`
	ID        int64 `gorm:"not null;index:ix_list_members_seq,priority:3"`
	CreatedAt time.Time
}

func (v9List) TableName() string       { return "lists" }
func (v9ListMember) TableName() string { return "list_members" }

func migrateV9(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v9List{}, &v9ListMember{})
}

// The table of version 10: follow requests, keyed by the asked user
// first. ix_follow_requests_seq pages their requests by id; the reverse
// index answers "have I asked" for a batch of users.
type v10FollowRequest struct {
	UserID      int64 `gorm:"primaryKey;autoIncrement:false;index:ix_follow_requests_seq,priority:1;uniqueIndex:ux_follow_requests_requester,priority:2"`
	RequesterID int64 `gorm:"primaryKey;autoIncrement:false;uniqueIndex:ux_follow_requests_requester,priority:1"`
	ID          int64 `gorm:"not null;index:ix_follow_requests_seq,priority:2"`
	CreatedAt   time.Time
}

func (v10FollowRequest) TableName() string { return "follow_requests" }

func migrateV10(db *gorm.DB) error {
	return db.Migrator().CreateTable(&v10FollowRequest{})
}

// Version 11: protected accounts (see feed/protected.go). Every account
// so far is public.
func migrateV11(db *gorm.DB) error {
	return db.Exec("ALTER TABLE users ADD COLUMN is_protected BOOLEAN NOT NULL DEFAULT FALSE").Error
}
