// Package localtier holds the benchmark that chose the library of the
// feed engine's local cache tier (feed/cache/tier.go): otter, ristretto and
// hashicorp/golang-lru's expirable LRU on the load the tier serves. It is
// a package of its own so that the feed package's tests do not compile the
// two libraries that lost.
package localtier
