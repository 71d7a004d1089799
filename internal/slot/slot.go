// Package slot is Redis Cluster's key to hash slot mapping, shared by the
// pub/sub hub (which groups its sharded channels by slot) and the tests'
// slot check.
package slot

import "strings"

// Slots is the number of hash slots of Redis Cluster.
const Slots = 16384

// Of is the Redis Cluster hash slot of a key or shard channel: CRC16
// (XMODEM: polynomial 0x1021, initial value 0) of the key, modulo Slots.
//
// The hash-tag rule: when the key holds a "{" and, after it, a "}" with at
// least one byte between them, only the bytes between the first "{" and
// the first "}" after it are hashed, so "{user1000}.following" and
// "{user1000}.followers" share a slot. An empty tag ("foo{}{bar}") hashes
// the whole key; "foo{{bar}}zap" hashes "{bar"; "foo{bar}{zap}" hashes
// "bar".
func Of(key string) int {
	if start := strings.IndexByte(key, '{'); start >= 0 {
		if end := strings.IndexByte(key[start+1:], '}'); end > 0 {
			key = key[start+1 : start+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % Slots
}
