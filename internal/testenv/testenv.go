// Package testenv gives each test its own MariaDB database and Redis key
// prefix on the real servers that the test command starts, found through
// TEST_MYSQL_DSN (default root@tcp(127.0.0.1:3306)/) and TEST_REDIS_ADDR
// (default 127.0.0.1:6379). A server that does not answer fails the test:
// nothing is skipped.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// MySQLServerDSN is the DSN of the test MariaDB server, without a database.
func MySQLServerDSN() string {
	if dsn := os.Getenv("TEST_MYSQL_DSN"); dsn != "" {
		return dsn
	}
	return "root@tcp(127.0.0.1:3306)/"
}

// RedisAddr is the address of the test Redis (a comma list for a cluster).
func RedisAddr() string {
	if addr := os.Getenv("TEST_REDIS_ADDR"); addr != "" {
		return addr
	}
	return "127.0.0.1:6379"
}

// Name returns a short random name for a database or key prefix.
func Name(prefix string) string {
	buf := make([]byte, 6)
	rand.Read(buf)
	return prefix + hex.EncodeToString(buf)
}

// MySQL creates a database for this test, dropped when it ends, and returns
// a DSN that selects it.
func MySQL(t testing.TB) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(MySQLServerDSN())
	if err != nil {
		t.Fatalf("TEST_MYSQL_DSN: %v", err)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := Name("feedtest_")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		db.Close()
		t.Fatalf("MariaDB at %s does not answer (the test command starts it): %v", cfg.Addr, err)
	}
	t.Cleanup(func() {
		db.Exec("DROP DATABASE " + name)
		db.Close()
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// Redis returns a client of the test Redis and a key prefix of this test's
// own; the keys under it are deleted when the test ends.
func Redis(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{RedisAddr()}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s does not answer (the test command starts it): %v", RedisAddr(), err)
	}
	prefix := Name("t") + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return rdb, prefix
}
