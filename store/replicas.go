package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"
)

// Read replicas (Config.ReplicaDSNs), through gorm.io/plugin/dbresolver.
//
// Every statement goes to the primary unless its caller marked the context
// with AllowReplica or AllowReplicaSince: the engine does so only for the
// reads that may lag (relation and timeline pages, pull pages, inbox
// rebuilds, cache fills) and only when the users concerned have not written
// lately (see feed's read-your-writes rule). Writes and transactions always
// go to the primary.
//
// Even a marked read goes to a replica only while the replicas are fresh: a
// poller compares, every ReplicaPollInterval, the primary's binary log
// position (MariaDB's @@gtid_binlog_pos) with each replica's applied
// position (@@gtid_slave_pos). A replica that has applied the primary's
// position read at time t holds every commit before t; the replicas are
// "fresh as of" the oldest such t among them. A marked read needs them
// fresh as of now minus Config.ReplicaMaxLag (or as of the time its caller
// gave); otherwise it goes to the primary. So a stopped or lagging replica
// sends the lag-tolerant reads back to the primary instead of serving rows
// older than ReplicaMaxLag.

// ReplicaPollInterval is how often the replicas' positions are compared
// with the primary's.
const ReplicaPollInterval = 50 * time.Millisecond

// DefaultReplicaMaxLag is how far behind the primary a replica may be and
// still serve the reads that may lag.
const DefaultReplicaMaxLag = time.Second

// replicaTargets is how many of the primary's recent positions a lagging
// replica is compared with (ReplicaPollInterval apart: 10 seconds).
const replicaTargets = 200

// replicas is the state of the read replicas of a Store.
type replicas struct {
	reader  *gorm.DB  // statements marked for the replicas
	conns   []*sql.DB // one per replica, owned here
	maxLag  time.Duration
	freshAt atomic.Int64 // Unix nanoseconds: the replicas hold every commit before it
	stop    chan struct{}
	done    sync.WaitGroup

	routedReplica, routedPrimary atomic.Int64
}

// routeKey marks a context's reads (see AllowReplica).
type routeKey struct{}

type route struct {
	since   time.Time // the replicas must be fresh as of this, besides within the lag
	primary bool
}

// AllowReplica lets ctx's reads of lag-tolerant data go to a replica that is
// at most Config.ReplicaMaxLag behind.
func AllowReplica(ctx context.Context) context.Context {
	return context.WithValue(ctx, routeKey{}, route{})
}

// AllowReplicaSince is AllowReplica for a read that must also see every
// commit before t (an inbox rebuild: what was committed before the reader
// entered the index of active inboxes).
func AllowReplicaSince(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, routeKey{}, route{since: t})
}

// Primary sends ctx's reads to the primary, whatever an outer context
// allowed: a copy refreshed after a commit must hold that commit.
func Primary(ctx context.Context) context.Context {
	return context.WithValue(ctx, routeKey{}, route{primary: true})
}

// HasReplicas says whether reads may go to replicas at all.
func (s *Store) HasReplicas() bool { return s.replicas != nil }

// ReplicaMaxLag is Config.ReplicaMaxLag as in force (0 without replicas).
func (s *Store) ReplicaMaxLag() time.Duration {
	if s.replicas == nil {
		return 0
	}
	return s.replicas.maxLag
}

// ReadRoutes counts the marked reads sent to a replica and those sent back
// to the primary because the replicas were not fresh enough.
func (s *Store) ReadRoutes() (replica, primary int64) {
	if s.replicas == nil {
		return 0, 0
	}
	return s.replicas.routedReplica.Load(), s.replicas.routedPrimary.Load()
}

// read is the handle of a read: a replica when ctx allows one and the
// replicas are fresh enough, else the primary.
func (s *Store) read(ctx context.Context) *gorm.DB {
	r, ok := ctx.Value(routeKey{}).(route)
	if s.replicas == nil || !ok || r.primary {
		return s.db.WithContext(ctx)
	}
	if !s.freshAsOf(r.since) {
		s.replicas.routedPrimary.Add(1)
		return s.db.WithContext(ctx)
	}
	s.replicas.routedReplica.Add(1)
	return s.replicas.reader.WithContext(ctx)
}

// freshAsOf says whether the replicas hold every commit before t and before
// now minus the allowed lag.
func (s *Store) freshAsOf(t time.Time) bool {
	need := time.Now().Add(-s.replicas.maxLag)
	if t.After(need) {
		need = t
	}
	return s.replicas.freshAt.Load() >= need.UnixNano()
}

// WaitFresh waits up to wait for the replicas to hold every commit before
// t, and says whether they do.
func (s *Store) WaitFresh(ctx context.Context, t time.Time, wait time.Duration) bool {
	if s.replicas == nil {
		return false
	}
	deadline := time.Now().Add(wait)
	for !s.freshAsOf(t) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(ReplicaPollInterval / 5)
	}
	return true
}

// CatchUp waits, up to wait per replica, until every replica has applied
// everything the primary committed before the call, and says whether they
// all did. The engine's WaitIdle uses it, so that tests read what they wrote from any
// replica; a stopped replica makes it wait the whole bound.
func (s *Store) CatchUp(ctx context.Context, wait time.Duration) (bool, error) {
	if s.replicas == nil {
		return true, nil
	}
	primary, err := s.db.DB()
	if err != nil {
		return false, err
	}
	var pos string
	if err := primary.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		return false, err
	}
	all := true
	for _, conn := range s.replicas.conns {
		var got int
		if err := conn.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", pos, wait.Seconds()).Scan(&got); err != nil {
			return false, err
		}
		all = all && got == 0
	}
	return all, nil
}

// openReplicas checks that the primary keeps a binary log and that each
// replica reports its applied position, registers the replicas with
// dbresolver on a gorm handle of their own (the store's own handle, which
// every unmarked statement uses, stays on the primary alone, migrations
// included), and starts the poller.
func openReplicas(ctx context.Context, primary *sql.DB, cfg Config, conns int) (*replicas, error) {
	r := &replicas{maxLag: cfg.ReplicaMaxLag, stop: make(chan struct{})}
	if r.maxLag <= 0 {
		r.maxLag = DefaultReplicaMaxLag
	}
	var dialectors []gorm.Dialector
	for i, raw := range cfg.ReplicaDSNs {
		dsn, err := mysqlDSN(raw)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("MYSQL_REPLICA_DSNS entry %d: %w", i+1, err)
		}
		conn, err := sql.Open("mysql", dsn)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("MYSQL_REPLICA_DSNS entry %d: %w", i+1, err)
		}
		conn.SetMaxOpenConns(conns)
		conn.SetMaxIdleConns(conns)
		conn.SetConnMaxLifetime(30 * time.Minute)
		r.conns = append(r.conns, conn)
		if _, err := replicaPosition(ctx, conn); err != nil {
			r.close()
			return nil, fmt.Errorf("MYSQL_REPLICA_DSNS entry %d (%s): %w", i+1, hostOf(raw), err)
		}
		dialectors = append(dialectors, mysql.New(mysql.Config{Conn: conn}))
	}
	var logBin int
	if err := primary.QueryRowContext(ctx, "SELECT @@log_bin").Scan(&logBin); err != nil || logBin != 1 {
		r.close()
		return nil, fmt.Errorf("MYSQL_REPLICA_DSNS is set but the primary (MYSQL_DSN) keeps no binary log (log_bin=%d, %v): replicas could not follow it", logBin, err)
	}
	db, err := gorm.Open(mysql.New(mysql.Config{Conn: primary}), gormConfig())
	if err != nil {
		r.close()
		return nil, fmt.Errorf("open replica reader: %w", err)
	}
	if err := db.Use(dbresolver.Register(dbresolver.Config{Replicas: dialectors, Policy: dbresolver.RandomPolicy{}})); err != nil {
		r.close()
		return nil, fmt.Errorf("register replicas: %w", err)
	}
	r.reader = db.Clauses(dbresolver.Read).Session(&gorm.Session{})
	r.done.Add(1)
	go r.poll(primary)
	return r, nil
}

func hostOf(dsn string) string {
	if i, j := strings.Index(dsn, "("), strings.Index(dsn, ")"); i >= 0 && j > i {
		return dsn[i+1 : j]
	}
	return "?"
}

// poll keeps freshAt: every ReplicaPollInterval it reads the primary's
// position at time t and moves freshAt to the newest t whose position every
// replica has applied.
func (r *replicas) poll(primary *sql.DB) {
	defer r.done.Done()
	type target struct {
		at  int64
		pos gtidPosition
	}
	var targets []target
	tick := time.NewTicker(ReplicaPollInterval)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), ReplicaPollInterval*4)
		at := time.Now().UnixNano()
		var raw string
		if err := primary.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&raw); err == nil {
			targets = append(targets, target{at: at, pos: parseGTIDPosition(raw)})
			if len(targets) > replicaTargets {
				targets = targets[len(targets)-replicaTargets:]
			}
		}
		fresh := int64(-1)
		for _, conn := range r.conns {
			pos, err := replicaPosition(ctx, conn)
			best := int64(0)
			if err == nil {
				for i := len(targets) - 1; i >= 0; i-- {
					if pos.covers(targets[i].pos) {
						best = targets[i].at
						break
					}
				}
			}
			if fresh < 0 || best < fresh {
				fresh = best
			}
		}
		cancel()
		if fresh > r.freshAt.Load() {
			r.freshAt.Store(fresh)
		}
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
	}
}

// replicaPosition is the replica's applied position; an error when it does
// not report one (not MariaDB, or not a replica).
func replicaPosition(ctx context.Context, conn *sql.DB) (gtidPosition, error) {
	var raw sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&raw); err != nil {
		return nil, fmt.Errorf("read the replica's applied position (@@gtid_slave_pos; replicas must be MariaDB with GTID): %w", err)
	}
	return parseGTIDPosition(raw.String), nil
}

func (r *replicas) close() error {
	if r.stop != nil && r.reader != nil {
		close(r.stop)
		r.done.Wait()
	}
	var errs []error
	for _, c := range r.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// gtidPosition is a MariaDB GTID position: for each replication domain, the
// sequence number of its last transaction.
type gtidPosition map[uint64]uint64

// parseGTIDPosition reads "domain-server-seq,..." (as @@gtid_binlog_pos and
// @@gtid_slave_pos print it); malformed parts are left out.
func parseGTIDPosition(s string) gtidPosition {
	pos := gtidPosition{}
	for _, part := range strings.Split(s, ",") {
		fields := strings.Split(strings.TrimSpace(part), "-")
		if len(fields) != 3 {
			continue
		}
		domain, err1 := strconv.ParseUint(fields[0], 10, 32)
		seq, err2 := strconv.ParseUint(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		pos[domain] = max(pos[domain], seq)
	}
	return pos
}

// covers says whether a replica at p has applied everything up to q.
func (p gtidPosition) covers(q gtidPosition) bool {
	for domain, seq := range q {
		if p[domain] < seq {
			return false
		}
	}
	return true
}
