package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The sharded MariaDB of the TestShardedMySQL tests: a head with the
// Spider engine and four data nodes, which scripts/mysql-shards.sh starts
// (on 3320 and 3321-3324, their data under /tmp/feed-shards) and leaves
// running for the next run; `make test-clean` stops them. A test that
// finds the head silent runs the script itself, once per test process.

// MySQLShardHeadDSN is the head's DSN without a database, from
// TEST_MYSQL_SHARD_HEAD (default root@tcp(127.0.0.1:3320)/).
func MySQLShardHeadDSN() string { return server("TEST_MYSQL_SHARD_HEAD", "root@tcp(127.0.0.1:3320)/") }

// MySQLShardNodeDSNs are the data nodes' DSNs without a database, from
// TEST_MYSQL_SHARD_DSNS (a comma list; default the four the script
// starts).
func MySQLShardNodeDSNs() []string {
	return servers("TEST_MYSQL_SHARD_DSNS", "root@tcp(127.0.0.1:3321)/,root@tcp(127.0.0.1:3322)/,root@tcp(127.0.0.1:3323)/,root@tcp(127.0.0.1:3324)/")
}

// ShardedMySQL is a database of this test's own on the sharded MariaDB,
// dropped when it ends: the head's DSN selecting it, and the data nodes'
// DSNs selecting the database of the same name there (empty until
// migrated: store.Migrate with them as ShardDSNs makes the tables).
func ShardedMySQL(t testing.TB) (head string, nodes []string) {
	t.Helper()
	ensureShardServers(t)
	WatchLibraryLog(t)
	name := Name("feedtest_")
	head = createDatabase(t, MySQLShardHeadDSN(), name)
	for _, node := range MySQLShardNodeDSNs() {
		nodes = append(nodes, createDatabase(t, node, name))
	}
	return head, nodes
}

// shardServers starts the sharded MariaDB once per test process, when its
// head does not answer.
var shardServers struct {
	once sync.Once
	err  error
}

// shardStartWait bounds scripts/mysql-shards.sh, which installs five data
// directories on its first run (stretched by Scale).
const shardStartWait = 5 * time.Minute

func ensureShardServers(t testing.TB) {
	t.Helper()
	shardServers.once.Do(func() {
		if answers(MySQLShardHeadDSN()) {
			return
		}
		root, err := moduleRoot()
		if err != nil {
			shardServers.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), Scale(shardStartWait))
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "mysql-shards.sh"))
		cmd.Env = append(os.Environ(), shardScriptEnv()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			shardServers.err = fmt.Errorf("scripts/mysql-shards.sh: %v\n%s", err, out)
		}
	})
	if shardServers.err != nil {
		t.Fatalf("the sharded MariaDB does not answer and could not be started: %v", shardServers.err)
	}
}

// shardScriptEnv moves the script's ports to those of TEST_MYSQL_SHARD_*
// when they are set.
func shardScriptEnv() []string {
	var env []string
	if cfg, err := mysql.ParseDSN(MySQLShardHeadDSN()); err == nil {
		env = append(env, "FEED_TEST_SHARD_HEAD="+portOf(cfg.Addr))
	}
	var ports []string
	for _, dsn := range MySQLShardNodeDSNs() {
		if cfg, err := mysql.ParseDSN(dsn); err == nil {
			ports = append(ports, portOf(cfg.Addr))
		}
	}
	return append(env, "FEED_TEST_SHARD_PORTS="+strings.Join(ports, " "))
}

func portOf(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

// answers reports whether the MySQL server of dsn takes a connection.
func answers(dsn string) bool {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return false
	}
	cfg.Timeout = time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return false
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx) == nil
}

// moduleRoot is the directory of go.mod above the test's working
// directory (its package's).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}
