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

// IDGenerator makes time-ordered ids for one node.
type IDGenerator struct {
	mu     sync.Mutex
	node   int64
	lastMs int64
	seq    int64
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
func (g *IDGenerator) Next() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		ms := g.now().Sub(idEpoch).Milliseconds()
		switch {
		case ms > g.lastMs:
			g.lastMs, g.seq = ms, 0
		case g.seq < idSeqMax:
			g.seq++
		default:
			time.Sleep(100 * time.Microsecond) // sequence used up, or clock behind
			continue
		}
		return g.lastMs<<(idNodeBits+idSeqBits) | g.node<<idSeqBits | g.seq
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
