package feed

import (
	"context"
	"math/rand/v2"
	"testing"

	"feedservice/feed/config"
	"feedservice/internal/testenv"
	"feedservice/store"
)

// newShardedTestStore opens a store on a sharded database of the test's
// own (a Spider head over four data nodes), migrated.
func newShardedTestStore(t testing.TB) *store.Store {
	t.Helper()
	head, nodes := testenv.ShardedMySQL(t)
	st, err := store.Open(context.Background(), store.Config{MySQLDSN: head, ShardDSNs: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
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
	for _, mode := range []config.Mode{config.ModePull, config.ModePush, config.ModeHybrid} {
		t.Run(string(mode), func(t *testing.T) {
			seed := modelSeed(t)
			t.Logf("seed %d (replay with MODEL_SEED=%d)", seed, seed)
			defer func() {
				if t.Failed() {
					t.Logf("failed with MODEL_SEED=%d", seed)
				}
			}()
			runModel(t, newShardedTestStore(t), mode, rand.New(rand.NewPCG(seed, seed>>1)), hidingRand(seed), toggleRand(seed),
				envCount("SHARDED_MODEL_STEPS", shardedModelSteps), shardedModelUsers)
		})
	}
}
