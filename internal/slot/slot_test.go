package slot

import "testing"

// The values of CLUSTER KEYSLOT, with the examples of the Redis Cluster
// specification.
func TestOfKnownKeys(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int
	}{
		{"123456789", 0x31C3}, // CRC16 of "123456789" is 0x31C3 (12739)
		{"foo", 12182},
		{"bar", 5061},
		{"", 0},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"user1000", 3443},
		{"foo{}{bar}", 8363},    // an empty tag: the whole key
		{"foo{{bar}}zap", 4015}, // the tag is "{bar"
		{"{bar", 4015},          // no closing brace: the whole key
		{"foo{bar}{zap}", 5061}, // the first tag only: "bar"
		{"{}", 15257},           // an empty tag: the whole key
	} {
		if got := Of(c.key); got != c.want {
			t.Errorf("Of(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

// The hash-tag rule, stated as equalities between keys.
func TestOfHashTags(t *testing.T) {
	for _, c := range []struct{ key, hashed string }{
		{"{user1000}.following", "user1000"},
		{"{user1000}.followers", "user1000"},
		{"feed:{u42}", "u42"},
		{"foo{{bar}}zap", "{bar"},
		{"foo{bar}{zap}", "bar"},
		{"a}{b}", "b"},
	} {
		if Of(c.key) != Of(c.hashed) {
			t.Errorf("Of(%q) = %d, want Of(%q) = %d", c.key, Of(c.key), c.hashed, Of(c.hashed))
		}
	}
}
