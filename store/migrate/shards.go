package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// migrateShards is Apply on the sharded layout: the versioned steps run
// on every data node (each records them in its own schema_migrations),
// with the tables the layout adds (usernames, blocked_by, muted_by,
// follow_requests_sent, relay_changes, relay_applied, reposts_by_original,
// voided_requests); then the head gets a server
// per node, a Spider table per data table over the nodes, and the
// outbox_event_ids sequence. The head's Spider tables are made again
// whenever the nodes' schema moved, so they always declare the nodes'
// columns. The caller holds the migration lock on the head.
func (t Target) migrateShards(ctx context.Context) ([]string, error) {
	head := t.DB.WithContext(ctx)
	if err := t.tableOptions(head).AutoMigrate(&schemaMigration{}); err != nil {
		return nil, fmt.Errorf("schema_migrations on the head: %w", err)
	}
	var done []schemaMigration
	if err := head.Find(&done).Error; err != nil {
		return nil, err
	}
	// The relay's tables, voided_requests, the request's id in
	// follow_requests_sent and relay_applied's seen_at came after the
	// last versioned step: a head without them is migrated again.
	var relayTables []string
	var laterColumns int64
	if err := head.Raw(`SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('relay_changes', 'relay_applied', 'reposts_by_original', 'voided_requests')`).Scan(&relayTables).Error; err != nil {
		return nil, err
	}
	if err := head.Raw(`SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
		AND (TABLE_NAME, COLUMN_NAME) IN (('follow_requests_sent', 'id'), ('relay_applied', 'seen_at'))`).Scan(&laterColumns).Error; err != nil {
		return nil, err
	}
	if len(done) == len(migrations) && len(relayTables) == 4 && laterColumns == 2 {
		return nil, nil
	}
	if len(t.NodeDSNs) == 0 {
		return nil, fmt.Errorf("the head's Spider tables are at %d of %d migrations: run migrate with MYSQL_SHARD_DSNS naming the data nodes", len(done), len(migrations))
	}
	headCfg, err := mysqldriver.ParseDSN(t.HeadDSN)
	if err != nil {
		return nil, err
	}
	var applied []string
	servers := make([]string, len(t.NodeDSNs))
	var tables map[string]string // name: the data node's CREATE TABLE
	for i, raw := range t.NodeDSNs {
		cfg, err := nodeConfig(raw, headCfg.DBName)
		if err != nil {
			return nil, fmt.Errorf("MYSQL_SHARD_DSNS entry %d: %w", i+1, err)
		}
		steps, created, err := migrateNode(ctx, cfg, t.NodeTables)
		if err != nil {
			return nil, fmt.Errorf("data node %s: %w", cfg.Addr, err)
		}
		if i == 0 {
			applied, tables = steps, created
		}
		servers[i] = ServerName(cfg)
		if err := head.Exec(fmt.Sprintf("CREATE SERVER IF NOT EXISTS %s FOREIGN DATA WRAPPER mysql OPTIONS (HOST %s, PORT %s, USER %s, PASSWORD %s)",
			servers[i], quote(addrHost(cfg.Addr)), addrPort(cfg.Addr), quote(cfg.User), quote(cfg.Passwd))).Error; err != nil {
			return nil, fmt.Errorf("server for data node %s: %w", cfg.Addr, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		ddl, err := spiderTable(name, tables[name], servers, nodeDatabases(t.NodeDSNs, headCfg.DBName))
		if err != nil {
			return nil, err
		}
		if err := head.Exec(ddl).Error; err != nil {
			return nil, fmt.Errorf("Spider table %s on the head: %w", name, err)
		}
	}
	if err := head.Exec("CREATE SEQUENCE IF NOT EXISTS outbox_event_ids ENGINE=InnoDB").Error; err != nil {
		return nil, fmt.Errorf("outbox_event_ids on the head: %w", err)
	}
	seen := map[int]bool{}
	for _, m := range done {
		seen[m.Version] = true
	}
	if !seen[8] {
		// The mutes made before muted_by existed, kept a second time by the
		// muted (one statement over every node, as migrate runs alone).
		if err := head.Exec("INSERT IGNORE INTO muted_by (user_id, muter_id) SELECT muted_id, muter_id FROM mutes").Error; err != nil {
			return nil, fmt.Errorf("muted_by from mutes: %w", err)
		}
	}
	if !slices.Contains(relayTables, "reposts_by_original") {
		// The reposts made before reposts_by_original existed, kept a
		// second time on their original's node.
		if err := head.Exec(`INSERT IGNORE INTO reposts_by_original (original_id, id, author_id, deleted_at)
			SELECT repost_of_id, id, author_id, deleted_at FROM posts WHERE repost_of_id IS NOT NULL`).Error; err != nil {
			return nil, fmt.Errorf("reposts_by_original from posts: %w", err)
		}
	}
	for _, m := range migrations {
		if seen[m.Version] {
			continue
		}
		if err := head.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error; err != nil {
			return nil, err
		}
	}
	return applied, nil
}

// placement is the column each table is partitioned by; a table a
// migration adds needs its row here before the sharded layout takes it.
var placement = map[string]string{
	"users":                "id",
	"usernames":            "username_key",
	"followings":           "user_id",
	"followers":            "user_id",
	"relation_marks":       "user_id",
	"posts":                "id",
	"promoted_posts":       "post_id",
	"home_dismissals":      "user_id",
	"blocks":               "blocker_id",
	"mutes":                "muter_id",
	"blocked_by":           "user_id",
	"muted_by":             "user_id",
	"lists":                "owner_id",
	"list_members":         "owner_id",
	"follow_requests":      "user_id",
	"follow_requests_sent": "user_id",
	"outbox_events":        "id",
	"relay_changes":        "id",
	"relay_applied":        "target",
	"reposts_by_original":  "original_id",
	"voided_requests":      "user_id",
}

// partitionName is the head's name of shard i's partition (store's
// Store.on names it in a statement).
func partitionName(i int) string { return fmt.Sprintf("s%d", i) }

// ServerName is the head's name (CREATE SERVER) of the data node cfg: one
// per address and user, shared by every database on the head that uses it.
func ServerName(cfg *mysqldriver.Config) string {
	r := strings.NewReplacer(".", "_", ":", "_", "-", "_", "[", "", "]", "")
	return "feed_" + r.Replace(cfg.Addr) + "_" + r.Replace(cfg.User)
}

// nodeConfig parses a data node's DSN; its database is the head's unless
// the DSN names one.
func nodeConfig(dsn, headDB string) (*mysqldriver.Config, error) {
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.DBName == "" {
		cfg.DBName = headDB
	}
	return cfg, nil
}

func nodeDatabases(nodes []string, headDB string) []string {
	out := make([]string, len(nodes))
	for i, raw := range nodes {
		cfg, _ := nodeConfig(raw, headDB)
		out[i] = cfg.DBName
	}
	return out
}

// migrateNode creates the node's database when missing, applies the
// versioned steps there and the layout's own tables, and returns the steps
// applied and every data table's CREATE TABLE.
func migrateNode(ctx context.Context, cfg *mysqldriver.Config, layoutTables []any) ([]string, map[string]string, error) {
	server := *cfg
	server.DBName = ""
	admin, err := sql.Open("mysql", server.FormatDSN())
	if err != nil {
		return nil, nil, err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+cfg.DBName+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		return nil, nil, err
	}
	db, err := gorm.Open(mysql.Open(cfg.FormatDSN()), &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
	if err != nil {
		return nil, nil, err
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	node := Target{DB: db, MySQL: true}
	applied, err := Apply(ctx, node)
	if err != nil {
		return nil, nil, err
	}
	if err := node.tableOptions(db.WithContext(ctx)).AutoMigrate(layoutTables...); err != nil {
		return nil, nil, fmt.Errorf("usernames, blocked_by, muted_by, follow_requests_sent, relay_changes, relay_applied, reposts_by_original, voided_requests: %w", err)
	}
	var names []string
	if err := db.WithContext(ctx).Raw("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'schema_migrations'").Scan(&names).Error; err != nil {
		return nil, nil, err
	}
	tables := map[string]string{}
	for _, name := range names {
		var row struct {
			Table       string `gorm:"column:Table"`
			CreateTable string `gorm:"column:Create Table"`
		}
		if err := db.WithContext(ctx).Raw("SHOW CREATE TABLE `" + name + "`").Scan(&row).Error; err != nil {
			return nil, nil, err
		}
		tables[name] = row.CreateTable
	}
	return applied, tables, nil
}

var (
	autoIncrementOption = regexp.MustCompile(` AUTO_INCREMENT=\d+`)
	uniqueKeyLine       = regexp.MustCompile("^(\\s*)UNIQUE KEY (`[^`]+`) \\(([^)]*)\\)(.*)$")
)

// spiderTable is the head's table over the data nodes' table name, whose
// CREATE TABLE on a node is create: the same columns and keys (a unique
// key without the partitioning column becomes a plain key, as MariaDB
// demands of a partitioned table: its uniqueness is the node's, and
// usernames keeps the one that must hold across nodes), ENGINE=SPIDER, one
// partition per node.
func spiderTable(name, create string, servers, databases []string) (string, error) {
	column, ok := placement[name]
	if !ok {
		return "", fmt.Errorf("table %s has no place in the sharded layout (placement, store/migrate/shards.go)", name)
	}
	lines := strings.Split(create, "\n")
	for i, line := range lines {
		if m := uniqueKeyLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[3], "`"+column+"`") {
			lines[i] = m[1] + "KEY " + m[2] + " (" + m[3] + ")" + m[4]
		}
		lines[i] = strings.Replace(lines[i], " AUTO_INCREMENT,", ",", 1)
	}
	ddl := strings.Join(lines, "\n")
	ddl = strings.Replace(ddl, "CREATE TABLE", "CREATE OR REPLACE TABLE", 1)
	ddl = strings.Replace(ddl, "ENGINE=InnoDB", "ENGINE=SPIDER", 1)
	ddl = autoIncrementOption.ReplaceAllString(ddl, "")
	var parts []string
	for i, server := range servers {
		comment := quote(fmt.Sprintf(`srv "%s", database "%s", table "%s"`, server, databases[i], name))
		if name == "usernames" {
			parts = append(parts, fmt.Sprintf("PARTITION %s COMMENT = %s", partitionName(i), comment))
		} else {
			parts = append(parts, fmt.Sprintf("PARTITION %s VALUES IN (%d) COMMENT = %s", partitionName(i), i, comment))
		}
	}
	if name == "usernames" {
		return ddl + fmt.Sprintf("\nPARTITION BY KEY (`%s`) (%s)", column, strings.Join(parts, ", ")), nil
	}
	return ddl + fmt.Sprintf("\nPARTITION BY LIST (`%s` MOD %d) (%s)", column, len(servers), strings.Join(parts, ", ")), nil
}

// quote is s as an SQL string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func addrHost(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[:i]
	}
	return addr
}

func addrPort(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i+1:]
	}
	return "3306"
}
