// Package ids makes the time-ordered 53-bit ids of users, posts and follows,
// and leases each instance its node number.
package ids

import (
	"fmt"
	"sync"
	"time"
)

// IDs of users, posts and follows are 53-bit integers, so that a Redis score
// and a JavaScript number hold them exactly, and ordering by id is ordering
// by time:
//
//	bit 52 ........... 12 | 11 ..... 7 | 6 ...... 0
//	milliseconds since    | node (5    | sequence
//	idEpoch (41 bits,     | bits, 0-31)| within the
//	until 2093)           |            | ms (7 bits)
//
// Each server instance holds a node number of its own (leased from Redis
// unless configured), so ids are unique across instances without talking to
// anyone: up to 128 ids per millisecond per instance.
const (
	idTimeBits = 41
	idNodeBits = 5
	idSeqBits  = 7
	// MaxNodes is how many instances can make ids at once.
	MaxNodes = 1 << idNodeBits
	idSeqMax = 1<<idSeqBits - 1
)

var idEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// ShardModulus is the modulus of an id's shard residue: id mod
// ShardModulus is the sequence's low bits. A post takes the residue of its
// author (NextBeside), so that on sharded MySQL (store.MaxShards, equal to
// it) a post lives on its author's data node and is found there by id
// alone. The residues of a generator's first ids in successive
// milliseconds rotate, so that users spread over the data nodes.
const ShardModulus = 16

// IDGenerator makes time-ordered ids for one node.
type IDGenerator struct {
	mu     sync.Mutex
	node   int64
	lastMs int64
	seq    int64 // the last sequence used in lastMs
	start  int64 // the first sequence of lastMs, rotating over the residues
	now    func() time.Time
}

// NewIDGenerator makes ids for node, which must be in [0, MaxNodes).
func NewIDGenerator(node int) (*IDGenerator, error) {
	if node < 0 || node >= MaxNodes {
		return nil, fmt.Errorf("node id %d out of range 0-%d", node, MaxNodes-1)
	}
	return &IDGenerator{node: int64(node), now: time.Now}, nil
}

// Next returns a new id, larger than every id this generator made before.
// When the clock steps back it waits for it to catch up.
func (g *IDGenerator) Next() int64 { return g.next(-1) }

// NextBeside returns a new id, as Next, with the residue of peer: id and
// peer are equal mod ShardModulus, and so live on the same shard. It skips
// the sequence numbers of other residues, so at most 128/ShardModulus such
// ids of one residue are made per millisecond.
func (g *IDGenerator) NextBeside(peer int64) int64 { return g.next(int64(peer % ShardModulus)) }

// next makes the id; residue, when not negative, is its residue.
func (g *IDGenerator) next(residue int64) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if ms := g.now().Sub(idEpoch).Milliseconds(); ms > g.lastMs {
			g.lastMs = ms
			g.start = (g.start + 1) % ShardModulus
			g.seq = g.start - 1
		}
		seq := g.seq + 1
		if residue >= 0 {
			seq += ((residue-seq)%ShardModulus + ShardModulus) % ShardModulus
		}
		if seq > idSeqMax {
			time.Sleep(100 * time.Microsecond) // sequence used up, or clock behind
			continue
		}
		g.seq = seq
		return g.lastMs<<(idNodeBits+idSeqBits) | g.node<<idSeqBits | seq
	}
}

// IDTime is the moment an id was made, to the millisecond.
func IDTime(id int64) time.Time {
	return idEpoch.Add(time.Duration(id>>(idNodeBits+idSeqBits)) * time.Millisecond).UTC()
}

// IDAt is the smallest id that could be made at t: every id made at or after
// t is at least IDAt(t).
func IDAt(t time.Time) int64 {
	return t.Sub(idEpoch).Milliseconds() << (idNodeBits + idSeqBits)
}
