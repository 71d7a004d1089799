package feed

import "strings"

// clusterSlots is the number of hash slots of Redis Cluster.
const clusterSlots = 16384

// slotOf is the Redis Cluster hash slot of a key or shard channel: CRC16
// (XMODEM) of its hash tag (the text between the first "{" and the next
// "}", when not empty) or of the whole name, modulo 16384. The hub groups
// its sharded channels by it, one connection per slot.
func slotOf(key string) int {
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
	return int(crc) % clusterSlots
}
