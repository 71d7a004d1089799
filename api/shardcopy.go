package api

import (
	"context"
	"errors"
	"fmt"
	"io"

	"feedservice/api/settings"
	"feedservice/store"
)

// ShardCopy is the shard-copy command: it migrates the sharded layout of
// cfg (MYSQL_DSN, a Spider head, with MYSQL_SHARD_DSNS), then copies the
// one database of cfg.CopyFromDSN into it (store.CopyFrom), writing its
// progress to out. The server must not run on either while it copies.
func ShardCopy(ctx context.Context, cfg settings.Settings, out io.Writer) error {
	if cfg.CopyFromDSN == "" || cfg.MySQLDSN == "" || len(cfg.MySQLShardDSNs) == 0 {
		return errors.New("shard-copy needs -copy-from (the database to copy), -mysql-dsn (the Spider head) and -mysql-shards (its data nodes)")
	}
	dst, err := store.Open(ctx, store.Config{MySQLDSN: cfg.MySQLDSN, ShardDSNs: cfg.MySQLShardDSNs})
	if err != nil {
		return fmt.Errorf("the sharded layout: %w", err)
	}
	defer dst.Close()
	if _, err := dst.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate the sharded layout: %w", err)
	}
	src, err := store.Open(ctx, store.Config{MySQLDSN: cfg.CopyFromDSN})
	if err != nil {
		return fmt.Errorf("the database to copy (-copy-from): %w", err)
	}
	defer src.Close()
	last := ""
	err = dst.CopyFrom(ctx, src, func(table string, copied, total int64) {
		if table != last && last != "" {
			fmt.Fprintln(out)
		}
		last = table
		fmt.Fprintf(out, "\rshard-copy: %s %d of %d", table, copied, total)
	})
	if last != "" {
		fmt.Fprintln(out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "shard-copy: done")
	return nil
}
