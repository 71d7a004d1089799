package ids

import (
	"testing"
	"time"

	"feedservice/store"
)

func TestShardModulusIsTheStores(t *testing.T) {
	if ShardModulus != store.MaxShards {
		t.Fatalf("ShardModulus %d, store.MaxShards %d: a post would not live on its author's data node", ShardModulus, store.MaxShards)
	}
}

// A post's id has its author's residue, and ids keep growing whatever
// residues are asked for, within one millisecond and across them.
func TestNextBesideKeepsThePeersResidue(t *testing.T) {
	g, err := NewIDGenerator(3)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return at }
	last := int64(0)
	for i := range 200 {
		if i%8 == 0 { // eight ids of any residues fit in one millisecond
			at = at.Add(time.Millisecond)
		}
		peer := int64(1000 + i*7)
		id := g.NextBeside(peer)
		if id%ShardModulus != peer%ShardModulus {
			t.Fatalf("id %d has residue %d, its peer %d has %d", id, id%ShardModulus, peer, peer%ShardModulus)
		}
		if id <= last {
			t.Fatalf("id %d after %d", id, last)
		}
		last = id
	}
}

// Users made in successive milliseconds spread over every residue, so
// over every data node.
func TestNextSpreadsOverResidues(t *testing.T) {
	g, err := NewIDGenerator(0)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return at }
	seen := map[int64]int{}
	for range 4 * ShardModulus {
		at = at.Add(time.Millisecond)
		seen[g.Next()%ShardModulus]++
	}
	for r := range int64(ShardModulus) {
		if seen[r] != 4 {
			t.Fatalf("residue %d made %d times of %d: %v", r, seen[r], 4, seen)
		}
	}
}
