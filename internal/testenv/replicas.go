package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv/testrun"
)

// GormStatementStoreGoroutine is the goroutine of the prepared-statement
// store that gorm.io/plugin/dbresolver makes for each pool of a store with
// read replicas: gorm's internal LRU never closes its done channel, so it
// outlives the store, and the packages' leak checks ignore it.
const GormStatementStoreGoroutine = "gorm.io/gorm/internal/lru.NewLRU[...].func1"

// MySQLReplicaServerDSNs are the DSNs (without a database) of the read
// replicas of the test MariaDB, from TEST_MYSQL_REPLICA_DSNS (a comma
// list, as scripts/mysql-replica.sh prints it; the primary is then
// TEST_MYSQL_DSN). None when unset: the tests run on the primary alone.
func MySQLReplicaServerDSNs() []string { return servers("TEST_MYSQL_REPLICA_DSNS", "") }

// MySQLReplicas returns DSNs that select the database of dbDSN (made by
// MySQL) on the shared replicas, once it has reached them: every replica
// but the last, which StoppableReplica keeps for the test that stops
// replication (with one replica, that one). None without replicas, or when
// dbDSN is not on the TEST_MYSQL_DSN server (a private MariaDB).
func MySQLReplicas(t testing.TB, dbDSN string) []string {
	t.Helper()
	db, err1 := mysql.ParseDSN(dbDSN)
	server, err2 := mysql.ParseDSN(MySQLServerDSN())
	if err1 != nil || err2 != nil || db.Addr != server.Addr {
		return nil
	}
	servers := MySQLReplicaServerDSNs()
	if len(servers) > 1 {
		servers = servers[:len(servers)-1]
	}
	var out []string
	for _, server := range servers {
		out = append(out, replicaOf(t, server, dbDSN))
	}
	return out
}

// StoppableReplica returns the DSN of the last replica of
// TEST_MYSQL_REPLICA_DSNS, selecting dbDSN's database, and the DSN of that
// replica without a database, for a test that stops and starts its
// replication: no other test reads it. It fails the test unless at least
// two replicas are given (scripts/mysql-replica.sh starts them).
//
// The replicas are shared by every test run on the machine, so the test
// holds the replica's machine-wide lock (StoppableReplicaLock) until it
// ends: the same test of a run in another checkout waits for it, and
// scripts/mysql-replica.sh leaves that replica's replication alone
// meanwhile. Once it has the lock it starts the replication, in case a
// run killed during such a test left it stopped.
func StoppableReplica(t testing.TB, dbDSN string) (dsn, server string) {
	t.Helper()
	servers := MySQLReplicaServerDSNs()
	if len(servers) < 2 {
		t.Fatalf("this test stops replication on a replica of its own: it needs TEST_MYSQL_REPLICA_DSNS with two replicas and TEST_MYSQL_DSN their primary (eval $(bash scripts/mysql-replica.sh) prints them), got %q", os.Getenv("TEST_MYSQL_REPLICA_DSNS"))
	}
	server = servers[len(servers)-1]
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		t.Fatalf("TEST_MYSQL_REPLICA_DSNS: %v", err)
	}
	wait := Scale(stoppableReplicaWait)
	unlock, err := testrun.Lock(StoppableReplicaLock(cfg.Addr), wait)
	if err != nil {
		t.Fatalf("the replica at %s is held by a test of another run for over %s: %v", cfg.Addr, wait, err)
	}
	t.Cleanup(unlock)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("START SLAVE"); err != nil {
		t.Fatalf("START SLAVE on the replica at %s: %v", cfg.Addr, err)
	}
	return replicaOf(t, server, dbDSN), server
}

// stoppableReplicaWait is how long StoppableReplica waits for a test of
// another run to let go of the replica (stretched by Scale).
const stoppableReplicaWait = 5 * time.Minute

// StoppableReplicaLock is the name of the machine-wide lock (testrun.Lock)
// of the replica at addr (host:port) that tests stop: its file is
// testrun.LockPath of it, which scripts/mysql-replica.sh takes with flock.
func StoppableReplicaLock(addr string) string { return "stoppable-replica-" + addr }

// replicaWait is how long a new database may take to reach a replica
// (stretched by Scale).
const replicaWait = 30 * time.Second

// replicaOf waits until dbDSN's database exists on the replica server,
// with as many tables as it has on the primary now (a copy of a
// MySQLTemplate has its tables before it is returned), and returns a DSN
// that selects it there.
func replicaOf(t testing.TB, server, dbDSN string) string {
	t.Helper()
	want, err := mysql.ParseDSN(dbDSN)
	if err != nil {
		t.Fatal(err)
	}
	wantTables := tableCount(t, dbDSN, want.DBName)
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		t.Fatalf("TEST_MYSQL_REPLICA_DSNS: %v", err)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	within := Scale(replicaWait)
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
		var name string
		var tables int
		err := db.QueryRowContext(ctx, "SELECT SCHEMA_NAME, (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = SCHEMA_NAME) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", want.DBName).Scan(&name, &tables)
		cancel()
		if err == nil && tables >= wantTables {
			break
		}
		if err == nil {
			err = fmt.Errorf("%d of its %d tables there", tables, wantTables)
		}
		if time.Now().After(deadline) {
			t.Fatalf("database %s did not reach the replica at %s within %s (is it replicating from TEST_MYSQL_DSN?): %v", want.DBName, cfg.Addr, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cfg.DBName = want.DBName
	return cfg.FormatDSN()
}

// tableCount is how many tables the database name has on the server of
// dsn.
func tableCount(t testing.TB, dsn, name string) int {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", name).Scan(&n); err != nil {
		t.Fatalf("count the tables of %s: %v", name, err)
	}
	return n
}

// Replication runs STOP SLAVE or START SLAVE on the replica server (a
// StoppableReplica's).
func Replication(t testing.TB, server, statement string) {
	t.Helper()
	db, err := sql.Open("mysql", server)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(statement); err != nil {
		t.Fatalf("%s on the replica: %v", statement, err)
	}
}
