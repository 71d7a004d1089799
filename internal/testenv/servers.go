package testenv

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The shared servers the tests use, each named by a TEST_* variable (one
// server, or a comma list of them) whose default is what the test
// command's scripts start: the MariaDB and Redis of scripts/services.sh
// (testenv.go), the read replicas of scripts/mysql-replica.sh
// (replicas.go), the sharded MariaDB of scripts/mysql-shards.sh
// (shards.go) and the Redis Cluster of scripts/redis-cluster.sh (through
// TEST_REDIS_ADDR).

// server is the value of the variable env, or def when it is unset.
func server(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// servers is server's value read as a comma list, blanks left out.
func servers(env, def string) []string {
	var out []string
	for _, s := range strings.Split(server(env, def), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// createDatabase makes the database name on the MariaDB of serverDSN (a
// DSN without a database), dropped when the test ends, and returns a DSN
// that selects it.
func createDatabase(t testing.TB, serverDSN, name string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		t.Fatalf("MySQL DSN %q: %v", serverDSN, err)
	}
	usesServers(t, serverDSN, "")
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(10*time.Second))
	defer cancel()
	if _, err := db.ExecContext(ctx, createDatabaseStatement(name)); err != nil {
		db.Close()
		t.Fatalf("create database %s on the MariaDB at %s (the test command starts it): %v", name, cfg.Addr, err)
	}
	t.Cleanup(func() {
		db.Exec("DROP DATABASE IF EXISTS " + name)
		db.Close()
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// createDatabaseStatement is the statement that creates the database name,
// in the character set and collation the store's tables take.
func createDatabaseStatement(name string) string {
	return "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
}
