package store

import (
	"context"
	"fmt"

	"feedservice/store/migrate"
)

// Migrate brings the database's schema up to date (store/migrate) and
// returns the steps it applied; on the sharded layout it makes the tables
// on the data nodes of Config.ShardDSNs and the head's Spider tables over
// them. Instances starting together take a MySQL named lock, so each step
// runs once.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	t := migrate.Target{DB: s.db, MySQL: s.mysql, Sharded: s.shards != nil, HeadDSN: s.dsn}
	if s.shards != nil {
		for i, raw := range s.shards.nodes {
			dsn, err := mysqlDSN(raw)
			if err != nil {
				return nil, fmt.Errorf("MYSQL_SHARD_DSNS entry %d: %w", i+1, err)
			}
			t.NodeDSNs = append(t.NodeDSNs, dsn)
		}
		t.NodeTables = []any{&username{}, &blockedBy{}, &mutedBy{}, &followRequestSent{}, &relayChange{}, &relayApplied{}, &repostByOriginal{}, &voidedRequests{}}
	}
	return migrate.Apply(ctx, t)
}
