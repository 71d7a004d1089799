package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
)

func TestParseModeTakesTheThreeModes(t *testing.T) {
	for _, m := range []Mode{ModePull, ModePush, ModeHybrid} {
		got, err := ParseMode(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = (%q, %v)", m, got, err)
		}
	}
	for _, s := range []string{"", "Push", "push ", "fanout", "hybrid,push"} {
		got, err := ParseMode(s)
		if err == nil || got != "" {
			t.Errorf("ParseMode(%q) = (%q, %v), want an error and no mode", s, got, err)
			continue
		}
		if !strings.Contains(err.Error(), `"`+s+`"`) {
			t.Errorf("ParseMode(%q)'s error %q does not name the value", s, err)
		}
	}
}

// zeroMeans lists the settings whose zero value is a setting of its own,
// which WithDefaults must leave alone.
var zeroMeans = map[string]string{
	"KeyPrefix":       "no prefix",
	"TokenSecret":     "the server's to give",
	"NodeID":          "node 0",
	"FanoutWorkers":   "an API-only instance",
	"Dispatch":        "no dispatcher here",
	"HomeInsertEvery": "no inserted entries",
}

// defaults is what WithDefaults gives each other setting of a zero Config.
var defaults = map[string]any{
	"TokenTTL":              DefaultTokenTTL,
	"BcryptCost":            DefaultBcryptCost,
	"Mode":                  DefaultMode,
	"CelebrityFollowers":    DefaultCelebrityFollowers,
	"InboxCap":              DefaultInboxCap,
	"InboxTTL":              DefaultInboxTTL,
	"FollowingReadMax":      DefaultFollowingReadMax,
	"JumpCacheFollowers":    DefaultJumpCacheFollowers,
	"JumpCacheTTL":          DefaultJumpCacheTTL,
	"FanoutBatchSize":       DefaultFanoutBatchSize,
	"StreamTrimInterval":    DefaultStreamTrimInterval,
	"StreamReplicas":        DefaultStreamReplicas,
	"StreamReplicaTimeout":  DefaultStreamReplicaTimeout,
	"RateLimitWarnInterval": DefaultRateLimitWarnInterval,
	"PostCacheTTL":          DefaultPostCacheTTL,
	"RepostListMax":         DefaultRepostListMax,
	"MaxUnreadCount":        DefaultMaxUnreadCount,
	"FoldsRunning":          DefaultFoldsRunning,
	"RebuildsRunning":       DefaultRebuildsRunning,
	"RebuildDepth":          DefaultRebuildDepth,
	"MaxListsPerUser":       DefaultMaxListsPerUser,
	"MaxListMembers":        DefaultMaxListMembers,
	"UserCacheTTL":          DefaultUserCacheTTL,
	"LocalCacheMaxEntries":  DefaultLocalCacheMaxEntries,
	"LocalCacheMaxBytes":    int64(DefaultLocalCacheMaxBytes),
	"LocalCacheTTL":         DefaultLocalCacheTTL,
	"HomeCandidatesTTL":     DefaultHomeCandidatesTTL,
	"BlockResetInterval":    DefaultBlockResetInterval,
	"TracerProvider":        noop.NewTracerProvider(),
}

// Every setting of a zero Config either gets its default or is one whose
// zero means something; a new setting must be put in one of the two lists.
func TestWithDefaultsFillsEveryZeroSetting(t *testing.T) {
	got := reflect.ValueOf(Config{}.WithDefaults())
	typ := got.Type()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		field := got.Field(i)
		want, hasDefault := defaults[name]
		_, zeroKept := zeroMeans[name]
		switch {
		case hasDefault == zeroKept:
			t.Errorf("setting %s: put it in defaults or in zeroMeans (not both)", name)
		case zeroKept && !field.IsZero():
			t.Errorf("setting %s: zero (%s) became %v", name, zeroMeans[name], field.Interface())
		case hasDefault && !reflect.DeepEqual(field.Interface(), want):
			t.Errorf("setting %s: zero became %v, want the default %v", name, field.Interface(), want)
		}
	}
	for name := range defaults {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("defaults names %s, which Config does not have", name)
		}
	}
}

// namedTracer is a tracer provider told apart from WithDefaults' own.
type namedTracer struct {
	noop.TracerProvider
	name string
}

// Settings given are kept, and so are the negative values that mean
// something of their own (waiting for no replica, local tiers off, a reset
// at every change).
func TestWithDefaultsKeepsGivenSettings(t *testing.T) {
	tracer := namedTracer{name: "given"}
	given := Config{
		KeyPrefix:             "tenant:",
		TokenSecret:           []byte("s"),
		TokenTTL:              time.Minute,
		BcryptCost:            4,
		NodeID:                3,
		Mode:                  ModePull,
		CelebrityFollowers:    7,
		InboxCap:              9,
		InboxTTL:              time.Minute,
		FollowingReadMax:      11,
		JumpCacheFollowers:    13,
		JumpCacheTTL:          time.Minute,
		FanoutBatchSize:       17,
		FanoutWorkers:         2,
		Dispatch:              true,
		StreamTrimInterval:    time.Minute,
		StreamReplicas:        -1,
		StreamReplicaTimeout:  time.Minute,
		RateLimitWarnInterval: time.Minute,
		PostCacheTTL:          time.Minute,
		RepostListMax:         19,
		FoldsRunning:          26,
		RebuildsRunning:       27,
		RebuildDepth:          8,
		MaxListsPerUser:       24,
		MaxListMembers:        25,
		MaxUnreadCount:        21,
		UserCacheTTL:          time.Minute,
		LocalCacheMaxEntries:  -1,
		LocalCacheMaxBytes:    23,
		LocalCacheTTL:         time.Minute,
		HomeInsertEvery:       3,
		HomeCandidatesTTL:     time.Minute,
		BlockResetInterval:    -1,
		TracerProvider:        tracer,
	}
	got := given.WithDefaults()
	if !reflect.DeepEqual(got, given) {
		t.Errorf("WithDefaults changed given settings:\n got %+v\nwant %+v", got, given)
	}
	// Every setting is given above, so that a new one is tested here too.
	v := reflect.ValueOf(given)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("setting %s is not given in this test", v.Type().Field(i).Name)
		}
	}
}

// A negative count or duration where only a positive one makes sense is
// taken as unset.
func TestWithDefaultsReplacesNegativeSizesAndDurations(t *testing.T) {
	got := Config{
		TokenTTL:              -time.Second,
		CelebrityFollowers:    -1,
		InboxCap:              -1,
		InboxTTL:              -time.Second,
		FollowingReadMax:      -1,
		JumpCacheFollowers:    -1,
		JumpCacheTTL:          -time.Second,
		FanoutBatchSize:       -1,
		StreamTrimInterval:    -time.Second,
		StreamReplicaTimeout:  -time.Second,
		RateLimitWarnInterval: -time.Second,
		PostCacheTTL:          -time.Second,
		RepostListMax:         -1,
		MaxListsPerUser:       -1,
		MaxListMembers:        -1,
		MaxUnreadCount:        -1,
		UserCacheTTL:          -time.Second,
		LocalCacheMaxBytes:    -1,
		LocalCacheTTL:         -time.Second,
		HomeCandidatesTTL:     -time.Second,
	}.WithDefaults()
	v := reflect.ValueOf(got)
	for name, want := range defaults {
		if name == "Mode" || name == "BcryptCost" || name == "TracerProvider" ||
			name == "StreamReplicas" || name == "LocalCacheMaxEntries" || name == "BlockResetInterval" {
			continue // not set negative above
		}
		if field := v.FieldByName(name).Interface(); !reflect.DeepEqual(field, want) {
			t.Errorf("setting %s: negative became %v, want the default %v", name, field, want)
		}
	}
}

// A rebuild depth past the inbox's cap rebuilds a whole inbox; one at or
// under it is kept, and none given is the default, or the cap when that
// is smaller.
func TestRebuildDepthIsAtMostTheInboxCap(t *testing.T) {
	for _, c := range []struct{ cap, depth, want int }{
		{800, 0, DefaultRebuildDepth}, {800, 5000, 800}, {800, 800, 800}, {800, 1, 1}, {70, 0, 70}, {70, 71, 70},
	} {
		if got := (Config{InboxCap: c.cap, RebuildDepth: c.depth}).WithDefaults().RebuildDepth; got != c.want {
			t.Errorf("inbox cap %d, rebuild depth %d: %d, want %d", c.cap, c.depth, got, c.want)
		}
	}
}
