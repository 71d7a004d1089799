package feed

import "strconv"

// Redis keys. Every key starts with Config.KeyPrefix; keys of one user carry
// the hash tag {u<id>} so that they share a Redis Cluster slot.
type keys struct{ prefix string }

// idNode is a string holding the token of the instance that leases node n
// of the id layout (see ids.go). TTL: nodeLeaseTTL, renewed while it lives.
func (k keys) idNode(n int) string { return k.prefix + "idnode:" + strconv.Itoa(n) }
