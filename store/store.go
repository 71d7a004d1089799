// Package store keeps the service's data in MySQL (production) or SQLite
// (the embedded default) through gorm. It is the only package that writes SQL.
package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Sentinel errors returned by the store.
var (
	ErrNotFound      = errors.New("not found")
	ErrUsernameTaken = errors.New("username taken")
	// ErrBlocked refuses a follow between two users when either blocks
	// the other.
	ErrBlocked = errors.New("blocked")
)

// Direction says which way a keyset page runs from its bound.
type Direction int

const (
	// Older pages run from the bound towards smaller ids, newest first.
	Older Direction = iota
	// Newer pages run from the bound towards larger ids, oldest first.
	Newer
)

// Store is the gorm-backed storage of users, relations, posts and outbox events.
type Store struct {
	db       *gorm.DB
	mysql    bool
	replicas *replicas    // nil without Config.ReplicaDSNs
	shards   *shardLayout // nil on one database (see shards.go)
	dsn      string       // MySQLDSN as opened
	// relayAppliedRetention is Config.RelayAppliedRetention, its default
	// filled in.
	relayAppliedRetention time.Duration
}

// Config selects the database: MySQLDSN when set, else an SQLite file.
type Config struct {
	MySQLDSN   string
	SQLitePath string
	MaxConns   int
	// ReplicaDSNs are MariaDB replicas of MySQLDSN (GTID replication) that
	// serve the reads that may lag; none: every read on the primary.
	ReplicaDSNs []string
	// ReplicaMaxLag is how far behind a replica may be and still serve
	// them (DefaultReplicaMaxLag when 0).
	ReplicaMaxLag time.Duration
	// ShardDSNs are the data nodes of the sharded layout, when MySQLDSN is
	// a MariaDB head with the Spider engine (see shards.go): Migrate
	// creates the tables on them and the head's Spider tables over them.
	// A head migrated so is found sharded without them.
	ShardDSNs []string
	// RelayAppliedRetention is how long a data node of the sharded layout
	// keeps the id of a relay change it applied once the change is gone
	// from its own node (relayApplied; DefaultRelayAppliedRetention when
	// 0, at least MinRelayAppliedRetention).
	RelayAppliedRetention time.Duration
	// TracerProvider, when set, gives every SQL statement a span.
	TracerProvider trace.TracerProvider
}

// Open connects to the database selected by cfg. It does not migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	gcfg := gormConfig()
	if len(cfg.ReplicaDSNs) > 0 && cfg.MySQLDSN == "" {
		return nil, errors.New("MYSQL_REPLICA_DSNS needs MYSQL_DSN: the embedded SQLite has no replicas")
	}
	if len(cfg.ShardDSNs) > 0 && (cfg.MySQLDSN == "" || len(cfg.ReplicaDSNs) > 0) {
		return nil, errors.New("MYSQL_SHARD_DSNS needs MYSQL_DSN (the Spider head) and no MYSQL_REPLICA_DSNS")
	}
	var (
		db  *gorm.DB
		err error
	)
	if cfg.MySQLDSN != "" {
		dsn, derr := mysqlDSN(cfg.MySQLDSN)
		if derr != nil {
			return nil, derr
		}
		db, err = gorm.Open(mysql.Open(dsn), gcfg)
	} else {
		if err := os.MkdirAll(filepath.Dir(cfg.SQLitePath), 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		dsn := "file:" + cfg.SQLitePath + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		db, err = gorm.Open(sqlite.Open(dsn), gcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if cfg.MySQLDSN == "" {
		// SQLite has one writer; one connection makes every transaction serial
		// instead of failing with "database is locked".
		sqlDB.SetMaxOpenConns(1)
	} else {
		conns := cfg.MaxConns
		if conns <= 0 {
			conns = 32
		}
		sqlDB.SetMaxOpenConns(conns)
		sqlDB.SetMaxIdleConns(conns)
		sqlDB.SetConnMaxLifetime(30 * time.Minute)
	}
	if cfg.TracerProvider != nil {
		if err := useTracing(db, cfg.TracerProvider); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("sql tracing: %w", err)
		}
	}
	if cfg.RelayAppliedRetention == 0 {
		cfg.RelayAppliedRetention = DefaultRelayAppliedRetention
	}
	if cfg.RelayAppliedRetention < MinRelayAppliedRetention {
		sqlDB.Close()
		return nil, fmt.Errorf("the relay's retention of applied changes is %v, less than %v", cfg.RelayAppliedRetention, MinRelayAppliedRetention)
	}
	s := &Store{db: db, mysql: cfg.MySQLDSN != "", dsn: cfg.MySQLDSN, relayAppliedRetention: cfg.RelayAppliedRetention}
	if err := s.Ping(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if s.mysql {
		if s.shards, err = openShards(ctx, db, cfg.ShardDSNs); err != nil {
			sqlDB.Close()
			return nil, err
		}
	}
	if len(cfg.ReplicaDSNs) > 0 {
		conns := cfg.MaxConns
		if conns <= 0 {
			conns = 32
		}
		if s.replicas, err = openReplicas(ctx, sqlDB, cfg, conns); err != nil {
			sqlDB.Close()
			return nil, err
		}
	}
	return s, nil
}

func gormConfig() *gorm.Config {
	return &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true, PrepareStmt: false}
}

// mysqlDSN adds the settings the store relies on (parsed times, UTC, utf8mb4).
func mysqlDSN(dsn string) (string, error) {
	c, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("MYSQL_DSN: %w", err)
	}
	c.ParseTime = true
	c.Loc = time.UTC
	// One round trip per statement instead of prepare, execute and close:
	// the driver escapes the arguments into the statement itself.
	c.InterpolateParams = true
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	if _, ok := c.Params["charset"]; !ok {
		c.Params["charset"] = "utf8mb4"
	}
	return c.FormatDSN(), nil
}

// DB is the underlying gorm handle, for tests that count queries.
func (s *Store) DB() *gorm.DB { return s.db }

// ReplicaDB is the gorm handle of the reads sent to replicas (nil without
// replicas), for tests that count queries.
func (s *Store) ReplicaDB() *gorm.DB {
	if s.replicas == nil {
		return nil
	}
	return s.replicas.reader
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Close closes the connection pools.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	var rerr error
	if s.replicas != nil {
		rerr = s.replicas.close()
	}
	return errors.Join(rerr, sqlDB.Close())
}

// maxTxAttempts bounds the retries of a transaction that lost a deadlock.
const maxTxAttempts = 5

// transaction runs fn in a transaction, retrying it when MySQL picks it as a
// deadlock victim (two users following each other at the same moment).
func (s *Store) transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = s.db.WithContext(ctx).Transaction(fn)
		if !isRetryable(err) {
			return err
		}
		time.Sleep(time.Duration(attempt*attempt) * 5 * time.Millisecond)
	}
	return err
}

func isRetryable(err error) bool {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205 // deadlock, lock wait timeout
	}
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

func isDuplicate(err error) bool {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
