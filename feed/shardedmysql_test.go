package feed

import (
	"testing"

	"feedservice/feed/internal/depstest"
	"feedservice/internal/testenv"
	"feedservice/store"
)

// newShardedTestStore opens a store on a sharded database of the test's
// own (a Spider head over four data nodes), migrated.
func newShardedTestStore(t testing.TB) *store.Store {
	t.Helper()
	head, nodes := testenv.ShardedMySQL(t)
	return depstest.Store(t, store.Config{MySQLDSN: head, ShardDSNs: nodes})
}

// The sharded run of the reference-model test: shorter than the one on one
// database (shardedModelSteps), in every feed mode side by side.
const (
	shardedModelSteps = 150
	shardedModelUsers = 60
)

// TestShardedMySQLEngineMatchesModel is TestEngineMatchesModel on the
// sharded layout: every feed, paged both ways on either instance, equals
// the reference model's when the rows live on four data nodes behind a
// Spider head.
func TestShardedMySQLEngineMatchesModel(t *testing.T) {
	runModelModes(t, newShardedTestStore, envCount("SHARDED_MODEL_STEPS", shardedModelSteps), shardedModelUsers)
}
