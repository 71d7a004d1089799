package settings

import (
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"

	"feedservice/dataloader"
	feedconfig "feedservice/feed/config"
	"feedservice/internal/ratelimit"
	"feedservice/store"
)

// A setting that does not parse stops the server with the variable's name,
// instead of quietly running on the default.
// parseConfig is the settings of args and the environment; a word of args
// that is not a flag is an error.
func parseConfig(args []string) (Settings, error) {
	c, words, err := Parse(args)
	if err == nil && len(words) > 0 {
		err = fmt.Errorf("unexpected argument %q", words[0])
	}
	return c, err
}

func TestConfigRefusesUnparseableEnvironment(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"INBOX_CAP", "abc", "INBOX_CAP"},
		{"GRAPHIQL", "maybe", "GRAPHIQL"},
		{"INBOX_TTL", "7days", "INBOX_TTL"},
		{"FEED_MODE", "sideways", "sideways"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			_, err := parseConfig(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s=%s: error %v, want one naming %s", tc.name, tc.value, err, tc.want)
			}
		})
	}
}

// The same values well formed are taken, and a flag wins over the environment.
func TestConfigReadsEnvironmentAndFlags(t *testing.T) {
	t.Setenv("INBOX_CAP", "50")
	t.Setenv("INBOX_TTL", "2h")
	t.Setenv("GRAPHIQL", "false")
	c, err := parseConfig([]string{"-inbox-cap", "70"})
	if err != nil {
		t.Fatal(err)
	}
	if c.InboxCap != 70 || c.InboxTTL.String() != "2h0m0s" || c.GraphiQL {
		t.Fatalf("got cap %d ttl %s graphiql %v, want 70 2h0m0s false", c.InboxCap, c.InboxTTL, c.GraphiQL)
	}
}

// TestLoaderWaitBounds: -loader-wait takes up to dataloader.MaxWait and
// refuses a nanosecond more, zero and a negative wait.
func TestLoaderWaitBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LoaderWait != dataloader.DefaultWait {
		t.Fatalf("default loader wait %s, want %s", c.LoaderWait, dataloader.DefaultWait)
	}
	c, err = parseConfig([]string{"-loader-wait", dataloader.MaxWait.String()})
	if err != nil || c.LoaderWait != dataloader.MaxWait {
		t.Fatalf("-loader-wait %s: %v (wait %s)", dataloader.MaxWait, err, c.LoaderWait)
	}
	for _, bad := range []string{(dataloader.MaxWait + 1).String(), "0s", "-1ms"} {
		if _, err := parseConfig([]string{"-loader-wait", bad}); err == nil || !strings.Contains(err.Error(), "-loader-wait") {
			t.Errorf("-loader-wait %s: %v, want a -loader-wait error", bad, err)
		}
	}
	t.Setenv("LOADER_WAIT", (dataloader.MaxWait + 1).String())
	if _, err := parseConfig(nil); err == nil {
		t.Errorf("LOADER_WAIT=%s accepted", dataloader.MaxWait+1)
	}
}

// TestRedisPoolBounds: -redis-pool-size takes 1 and refuses 0;
// -redis-pool-timeout takes a nanosecond and refuses 0. The client's pool
// is that size plus one connection for each fan-out worker's blocking read.
func TestRedisPoolBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.RedisPoolSize != DefaultRedisPoolSize || c.RedisPoolTimeout != DefaultRedisPoolTimeout {
		t.Fatalf("default pool %d, %s; want %d, %s", c.RedisPoolSize, c.RedisPoolTimeout, DefaultRedisPoolSize, DefaultRedisPoolTimeout)
	}
	t.Setenv("REDIS_POOL_SIZE", "1")
	t.Setenv("REDIS_POOL_TIMEOUT", "1ns")
	c, err = parseConfig([]string{"-fanout-workers", "3"})
	if err != nil || c.RedisPoolSize != 1 || c.RedisPoolTimeout != 1 {
		t.Fatalf("REDIS_POOL_SIZE=1 REDIS_POOL_TIMEOUT=1ns: %v (pool %d, %s)", err, c.RedisPoolSize, c.RedisPoolTimeout)
	}
	if p := c.RedisPool(); p.Size != 4 || p.Timeout != 1 {
		t.Fatalf("pool of size 1 and 3 fan-out workers: %+v, want 4 connections, 1ns", p)
	}
	for _, bad := range [][]string{{"-redis-pool-size", "0"}, {"-redis-pool-size", "-1"}, {"-redis-pool-timeout", "0s"}, {"-redis-pool-timeout", "-1ms"}} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s %s: %v, want a %s error", bad[0], bad[1], err, bad[0])
		}
	}
}

// TestStreamTrimIntervalBounds: -stream-trim-interval takes a nanosecond
// and refuses 0 (which would trim in a busy loop) and less.
func TestStreamTrimIntervalBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.StreamTrimInterval != feedconfig.DefaultStreamTrimInterval {
		t.Fatalf("default: %v, %s; want %s", err, c.StreamTrimInterval, feedconfig.DefaultStreamTrimInterval)
	}
	t.Setenv("STREAM_TRIM_INTERVAL", "1ns")
	if c, err = parseConfig(nil); err != nil || c.StreamTrimInterval != 1 {
		t.Fatalf("STREAM_TRIM_INTERVAL=1ns: %v (%s)", err, c.StreamTrimInterval)
	}
	for _, bad := range []string{"0s", "-1ms"} {
		if _, err := parseConfig([]string{"-stream-trim-interval", bad}); err == nil || !strings.Contains(err.Error(), "-stream-trim-interval") {
			t.Errorf("-stream-trim-interval %s: %v, want a -stream-trim-interval error", bad, err)
		}
	}
}

// TestRateLimitWarnIntervalBounds: -rate-limit-warn-interval takes a
// nanosecond and refuses 0 (which would warn on every request) and less.
func TestRateLimitWarnIntervalBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.RateLimitWarnInterval != feedconfig.DefaultRateLimitWarnInterval {
		t.Fatalf("default: %v, %s; want %s", err, c.RateLimitWarnInterval, feedconfig.DefaultRateLimitWarnInterval)
	}
	t.Setenv("RATE_LIMIT_WARN_INTERVAL", "1ns")
	if c, err = parseConfig(nil); err != nil || c.RateLimitWarnInterval != 1 {
		t.Fatalf("RATE_LIMIT_WARN_INTERVAL=1ns: %v (%s)", err, c.RateLimitWarnInterval)
	}
	for _, bad := range []string{"0s", "-1ms"} {
		if _, err := parseConfig([]string{"-rate-limit-warn-interval", bad}); err == nil || !strings.Contains(err.Error(), "-rate-limit-warn-interval") {
			t.Errorf("-rate-limit-warn-interval %s: %v, want a -rate-limit-warn-interval error", bad, err)
		}
	}
}

// TestCacheTTLBounds: -post-cache-ttl and -user-cache-ttl default to the
// engine's defaults, read their environment variables, and refuse 0 (a
// copy that expires at once) and less.
func TestCacheTTLBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.PostCacheTTL != feedconfig.DefaultPostCacheTTL || c.UserCacheTTL != feedconfig.DefaultUserCacheTTL {
		t.Fatalf("defaults: %v, %s, %s; want %s, %s", err, c.PostCacheTTL, c.UserCacheTTL, feedconfig.DefaultPostCacheTTL, feedconfig.DefaultUserCacheTTL)
	}
	t.Setenv("POST_CACHE_TTL", "2h")
	t.Setenv("USER_CACHE_TTL", "3m")
	if c, err = parseConfig(nil); err != nil || c.PostCacheTTL != 2*time.Hour || c.UserCacheTTL != 3*time.Minute {
		t.Fatalf("POST_CACHE_TTL=2h USER_CACHE_TTL=3m: %v (%s, %s)", err, c.PostCacheTTL, c.UserCacheTTL)
	}
	for _, flag := range []string{"-post-cache-ttl", "-user-cache-ttl"} {
		for _, bad := range []string{"0s", "-1ms"} {
			if _, err := parseConfig([]string{flag, bad}); err == nil || !strings.Contains(err.Error(), flag) {
				t.Errorf("%s %s: %v, want a %s error", flag, bad, err, flag)
			}
		}
	}
}

// TestLocalCacheBounds: the local tier's settings have their defaults,
// LOCAL_CACHE_MAX_ENTRIES=0 turns the tier off (the engine's -1), and
// the settings that cannot be 0 or negative are refused.
func TestLocalCacheBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.LocalCacheMaxEntries != feedconfig.DefaultLocalCacheMaxEntries || c.LocalCacheMaxBytes != feedconfig.DefaultLocalCacheMaxBytes || c.LocalCacheTTL != feedconfig.DefaultLocalCacheTTL {
		t.Fatalf("defaults: %v, %d entries, %d bytes, %s", err, c.LocalCacheMaxEntries, c.LocalCacheMaxBytes, c.LocalCacheTTL)
	}
	t.Setenv("LOCAL_CACHE_MAX_ENTRIES", "0")
	if c, err = parseConfig(nil); err != nil || c.LocalCacheMaxEntries != 0 || localCacheEntries(c.LocalCacheMaxEntries) >= 0 {
		t.Fatalf("LOCAL_CACHE_MAX_ENTRIES=0: %v, %d (engine %d), want the tier off", err, c.LocalCacheMaxEntries, localCacheEntries(c.LocalCacheMaxEntries))
	}
	for _, bad := range [][]string{
		{"-local-cache-max-entries", "-1"},
		{"-local-cache-max-bytes", "0"},
		{"-local-cache-ttl", "0s"},
		{"-local-cache-ttl", "-1ms"},
	} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want a %s error", bad, err, bad[0])
		}
	}
}

// TestConfigReplicaDSNs: MYSQL_REPLICA_DSNS takes a comma list of DSNs
// beside MYSQL_DSN; empty is none; an entry that does not parse, an empty
// entry, or replicas without MYSQL_DSN stop the server with the setting's
// name; REPLICA_MAX_LAG must be more than 0.
func TestConfigReplicaDSNs(t *testing.T) {
	const primary = "root@tcp(127.0.0.1:3310)/feed"
	t.Setenv("MYSQL_DSN", primary)
	c, err := parseConfig(nil)
	if err != nil || len(c.MySQLReplicaDSNs) != 0 || c.ReplicaMaxLag != store.DefaultReplicaMaxLag {
		t.Fatalf("default: replicas %q lag %s (%v), want none and %s", c.MySQLReplicaDSNs, c.ReplicaMaxLag, err, store.DefaultReplicaMaxLag)
	}
	t.Setenv("MYSQL_REPLICA_DSNS", " root@tcp(127.0.0.1:3311)/feed , root@tcp(127.0.0.1:3312)/feed")
	c, err = parseConfig(nil)
	if err != nil || len(c.MySQLReplicaDSNs) != 2 || c.MySQLReplicaDSNs[1] != "root@tcp(127.0.0.1:3312)/feed" {
		t.Fatalf("two replicas: %q (%v)", c.MySQLReplicaDSNs, err)
	}
	for _, tc := range []struct{ primary, list, want string }{
		{primary, "root@tcp(127.0.0.1:3311)/feed,not a dsn", "entry 2"},
		{primary, "root@tcp(127.0.0.1:3311)/feed,,root@tcp(127.0.0.1:3312)/feed", "entry 2 is empty"},
		{"", "root@tcp(127.0.0.1:3311)/feed", "need -mysql-dsn"},
	} {
		t.Setenv("MYSQL_DSN", tc.primary)
		t.Setenv("MYSQL_REPLICA_DSNS", tc.list)
		_, err := parseConfig(nil)
		if err == nil || !strings.Contains(err.Error(), "MYSQL_REPLICA_DSNS") || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("MYSQL_DSN=%q MYSQL_REPLICA_DSNS=%q: error %v, want one naming MYSQL_REPLICA_DSNS and %q", tc.primary, tc.list, err, tc.want)
		}
	}
	t.Setenv("MYSQL_DSN", primary)
	t.Setenv("MYSQL_REPLICA_DSNS", "")
	for _, bad := range []string{"0s", "-1s"} {
		if _, err := parseConfig([]string{"-replica-max-lag", bad}); err == nil || !strings.Contains(err.Error(), "-replica-max-lag") {
			t.Fatalf("-replica-max-lag %s: %v, want an error naming it", bad, err)
		}
	}
	if c, err := parseConfig([]string{"-replica-max-lag", "1ns"}); err != nil || c.ReplicaMaxLag != time.Nanosecond {
		t.Fatalf("-replica-max-lag 1ns: %v (%s)", err, c.ReplicaMaxLag)
	}
}

// TestConfigRelayAppliedRetention: RELAY_APPLIED_RETENTION defaults to
// the store's and may not go below its least, which outlasts a round of
// the relay.
func TestConfigRelayAppliedRetention(t *testing.T) {
	if c, err := parseConfig(nil); err != nil || c.RelayAppliedRetention != store.DefaultRelayAppliedRetention {
		t.Fatalf("default: %s (%v), want %s", c.RelayAppliedRetention, err, store.DefaultRelayAppliedRetention)
	}
	for _, bad := range []string{"0s", "10s"} {
		if _, err := parseConfig([]string{"-relay-applied-retention", bad}); err == nil || !strings.Contains(err.Error(), "-relay-applied-retention") {
			t.Fatalf("-relay-applied-retention %s: %v, want an error naming it", bad, err)
		}
	}
	t.Setenv("RELAY_APPLIED_RETENTION", "2h")
	if c, err := parseConfig(nil); err != nil || c.RelayAppliedRetention != 2*time.Hour {
		t.Fatalf("RELAY_APPLIED_RETENTION=2h: %s (%v)", c.RelayAppliedRetention, err)
	}
}

// checkIntBounds: flag defaults to def, reads env, and takes 1 to max,
// refusing 0, -1 and max+1 with an error that names it.
func checkIntBounds(t *testing.T, flag, env string, def, max int, get func(Settings) int) {
	t.Helper()
	c, err := parseConfig(nil)
	if err != nil || get(c) != def {
		t.Fatalf("default: %v, %d; want %d", err, get(c), def)
	}
	t.Setenv(env, "7")
	if c, err = parseConfig(nil); err != nil || get(c) != 7 {
		t.Fatalf("%s=7: %v, %d", env, err, get(c))
	}
	for _, ok := range []int{1, max} {
		if c, err := parseConfig([]string{"-" + flag, strconv.Itoa(ok)}); err != nil || get(c) != ok {
			t.Errorf("-%s %d: %v, %d", flag, ok, err, get(c))
		}
	}
	for _, bad := range []int{0, -1, max + 1} {
		if _, err := parseConfig([]string{"-" + flag, strconv.Itoa(bad)}); err == nil || !strings.Contains(err.Error(), "-"+flag) {
			t.Errorf("-%s %d: %v, want a -%s error", flag, bad, err, flag)
		}
	}
}

// TestRepostListMaxBounds: -repost-list-max defaults to the engine's
// default, reads REPOST_LIST_MAX, and takes 1 to MaxRepostListMax.
func TestRepostListMaxBounds(t *testing.T) {
	checkIntBounds(t, "repost-list-max", "REPOST_LIST_MAX", feedconfig.DefaultRepostListMax, MaxRepostListMax,
		func(c Settings) int { return c.RepostListMax })
}

// TestFoldsRunningBounds: -folds-running defaults to the engine's
// default, reads FOLDS_RUNNING, and takes 1 to MaxFoldsRunning.
func TestFoldsRunningBounds(t *testing.T) {
	checkIntBounds(t, "folds-running", "FOLDS_RUNNING", feedconfig.DefaultFoldsRunning, MaxFoldsRunning,
		func(c Settings) int { return c.FoldsRunning })
}

// TestRebuildsRunningBounds: -rebuilds-running defaults to the engine's
// default, reads REBUILDS_RUNNING, and takes 1 to MaxRebuildsRunning.
func TestRebuildsRunningBounds(t *testing.T) {
	checkIntBounds(t, "rebuilds-running", "REBUILDS_RUNNING", feedconfig.DefaultRebuildsRunning, MaxRebuildsRunning,
		func(c Settings) int { return c.RebuildsRunning })
}

// TestRebuildDepthBounds: -rebuild-depth defaults to the engine's
// default, reads REBUILD_DEPTH, and takes 1 and more (past -inbox-cap, the
// engine rebuilds a whole inbox: feed/config's test).
func TestRebuildDepthBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.RebuildDepth != feedconfig.DefaultRebuildDepth {
		t.Fatalf("default: %v, %d; want %d", err, c.RebuildDepth, feedconfig.DefaultRebuildDepth)
	}
	t.Setenv("REBUILD_DEPTH", "7")
	if c, err = parseConfig(nil); err != nil || c.RebuildDepth != 7 {
		t.Fatalf("REBUILD_DEPTH=7: %v, %d", err, c.RebuildDepth)
	}
	for _, ok := range []int{1, 5000} {
		if c, err := parseConfig([]string{"-rebuild-depth", strconv.Itoa(ok)}); err != nil || c.RebuildDepth != ok {
			t.Errorf("-rebuild-depth %d: %v, %d", ok, err, c.RebuildDepth)
		}
	}
	for _, bad := range []int{0, -1} {
		if _, err := parseConfig([]string{"-rebuild-depth", strconv.Itoa(bad)}); err == nil || !strings.Contains(err.Error(), "-rebuild-depth") {
			t.Errorf("-rebuild-depth %d: %v, want a -rebuild-depth error", bad, err)
		}
	}
}

// TestGOGCBounds: -gogc defaults to DefaultGOGC, reads Go's own GOGC
// variable, takes MinGOGC to MaxGOGC and refuses "off"; TuneRuntime sets
// the collector's target and gives back the old one.
func TestGOGCBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.GOGC != DefaultGOGC {
		t.Fatalf("default: %v, %d; want %d", err, c.GOGC, DefaultGOGC)
	}
	for _, ok := range []int{MinGOGC, MaxGOGC} {
		if c, err := parseConfig([]string{"-gogc", strconv.Itoa(ok)}); err != nil || c.GOGC != ok {
			t.Errorf("-gogc %d: %v, %d", ok, err, c.GOGC)
		}
	}
	for _, bad := range []int{MinGOGC - 1, MaxGOGC + 1, -1} {
		if _, err := parseConfig([]string{"-gogc", strconv.Itoa(bad)}); err == nil || !strings.Contains(err.Error(), "-gogc") {
			t.Errorf("-gogc %d: %v, want a -gogc error", bad, err)
		}
	}
	t.Setenv("GOGC", "250")
	if c, err = parseConfig(nil); err != nil || c.GOGC != 250 {
		t.Fatalf("GOGC=250: %v, %d", err, c.GOGC)
	}
	c.GOGC = 321
	restore := c.TuneRuntime()
	if now := debug.SetGCPercent(321); now != 321 {
		t.Errorf("after TuneRuntime with 321 the collector's target was %d", now)
	}
	restore()
	if now := debug.SetGCPercent(-1); now == 321 {
		t.Errorf("restore left the target at 321")
	}
	restore() // back to what it was before the test
	t.Setenv("GOGC", "off")
	if _, err := parseConfig(nil); err == nil || !strings.Contains(err.Error(), "GOGC") {
		t.Errorf("GOGC=off: %v, want an error naming GOGC", err)
	}
}

// TestSettingsLineNamesEverySetting: the start-up "settings" line has a key
// for every field of Settings (found by reflection, so a new setting cannot be
// left out of describe), under the field's name in any case; durations are
// written as the flags take them, never in nanoseconds; and no secret is in
// it, only whether it is set.
func TestSettingsLineNamesEverySetting(t *testing.T) {
	c, err := parseConfig([]string{"-token-secret", "a-token-secret-of-32-bytes-or-more!", "-operator-token", "an-operator-secret",
		"-mysql-dsn", "feed:db-password@tcp(127.0.0.1:3306)/feed", "-mysql-replica-dsns", "feed:replica-password@tcp(127.0.0.1:3311)/feed"})
	if err != nil {
		t.Fatal(err)
	}
	settings := c.Describe()
	values := map[string]any{}
	for i := 0; i+1 < len(settings); i += 2 {
		key, ok := settings[i].(string)
		if !ok {
			t.Fatalf("settings[%d] is %v, not a key", i, settings[i])
		}
		if _, dup := values[strings.ToLower(key)]; dup {
			t.Errorf("key %s appears twice", key)
		}
		values[strings.ToLower(key)] = settings[i+1]
	}
	var fields func(v reflect.Value)
	fields = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Anonymous {
				fields(v.Field(i))
				continue
			}
			// The engine's Config names two settings as the engine does, and
			// holds the tracer the server makes, which is no setting.
			key := map[string]string{"Mode": "feedMode", "FanoutBatchSize": "fanoutBatch"}[f.Name]
			if f.Name == "TracerProvider" {
				continue
			}
			if key == "" {
				key = f.Name
			}
			logged, ok := values[strings.ToLower(key)]
			if !ok {
				t.Errorf("setting %s is missing from the settings line (Settings.Describe)", f.Name)
				continue
			}
			if d, isDuration := v.Field(i).Interface().(time.Duration); isDuration {
				s, isText := logged.(string)
				if back, err := time.ParseDuration(s); !isText || err != nil || back != d {
					t.Errorf("setting %s = %v is logged as %#v, not as a duration the flags take", f.Name, d, logged)
				}
			}
		}
	}
	fields(reflect.ValueOf(c))
	for key, rate := range map[string]ratelimit.Rate{"mutationrate": c.MutationRate, "authrate": c.AuthRate} {
		s, _ := values[key].(string)
		if back, err := ratelimit.ParseRate(s); err != nil || back != rate {
			t.Errorf("%s = %v is logged as %#v, not as a rate the flags take", key, rate, values[key])
		}
	}
	line := fmt.Sprint(settings...)
	for _, secret := range []string{"a-token-secret", "an-operator-secret", "db-password", "replica-password"} {
		if strings.Contains(line, secret) {
			t.Errorf("the settings line shows a secret (%s): %s", secret, line)
		}
	}
	if values["operatortoken"] != "set" || values["tokensecret"] != "set" {
		t.Errorf("operatorToken %v, tokenSecret %v, want set and set", values["operatortoken"], values["tokensecret"])
	}
	c.OperatorToken = ""
	if got := c.Describe(); !slices.Contains(got, any("unset")) {
		t.Errorf("an empty operator token is not shown as unset: %v", got)
	}
}

// TestFormatDuration: the settings line's durations, without zero units.
func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour: "168h", time.Hour: "1h", 90 * time.Minute: "1h30m", 10 * time.Minute: "10m",
		20 * time.Second: "20s", 10 * time.Second: "10s", 50 * time.Millisecond: "50ms", 1500 * time.Millisecond: "1.5s",
		time.Hour + 5*time.Second: "1h0m5s", 0: "0s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestBlockResetIntervalSetting: BLOCK_RESET_INTERVAL has its default, 0
// makes every block reset the other user (the engine's negative), a
// flag sets it, and a negative one is refused with the flag's name.
func TestBlockResetIntervalSetting(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.BlockResetInterval != feedconfig.DefaultBlockResetInterval || blockResetInterval(c.BlockResetInterval) != feedconfig.DefaultBlockResetInterval {
		t.Fatalf("default: %v, %s", err, c.BlockResetInterval)
	}
	t.Setenv("BLOCK_RESET_INTERVAL", "0")
	if c, err = parseConfig(nil); err != nil || c.BlockResetInterval != 0 || blockResetInterval(c.BlockResetInterval) >= 0 {
		t.Fatalf("BLOCK_RESET_INTERVAL=0: %v, %s (engine %s), want every block to reset", err, c.BlockResetInterval, blockResetInterval(c.BlockResetInterval))
	}
	if c, err = parseConfig([]string{"-block-reset-interval", "90s"}); err != nil || c.BlockResetInterval != 90*time.Second {
		t.Fatalf("-block-reset-interval 90s: %v, %s", err, c.BlockResetInterval)
	}
	if _, err := parseConfig([]string{"-block-reset-interval", "-1ms"}); err == nil || !strings.Contains(err.Error(), "-block-reset-interval") {
		t.Fatalf("-block-reset-interval -1ms: %v, want a -block-reset-interval error", err)
	}
}

// TestAllowedOriginsParse: origins as browsers send them pass; an entry
// that could never match one is refused at start.
func TestAllowedOriginsParse(t *testing.T) {
	good := "http://localhost:3000, https://app.example,*"
	if got, err := parseOrigins(good); err != nil || !slices.Equal(got, []string{"http://localhost:3000", "https://app.example", "*"}) {
		t.Fatalf("%q: %v %v", good, got, err)
	}
	for _, bad := range []string{"app.example", "https://app.example/", "https://app.example/path", "ftp://app.example", "https://", "https://app.example?x", "https://u@app.example"} {
		t.Setenv("ALLOWED_ORIGINS", bad)
		if _, err := parseConfig(nil); err == nil || !strings.Contains(err.Error(), "-allowed-origins") {
			t.Errorf("ALLOWED_ORIGINS=%q: %v, want an -allowed-origins error", bad, err)
		}
	}
}

// TestWriteFlagsListsEverySetting: -h lists every flag Parse takes exactly
// once, with its environment variable, the common ones first in the order
// of commonFlags and the others after them in alphabetical order.
func TestWriteFlagsListsEverySetting(t *testing.T) {
	var out strings.Builder
	WriteFlags(&out)
	var listed []string
	for _, line := range strings.Split(out.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ = strings.Cut(name, " ")
			listed = append(listed, name)
		}
	}
	fs, _ := newFlagSet(new(Settings), new(environment))
	var every []string
	fs.VisitAll(func(f *flag.Flag) { every = append(every, f.Name) })
	if len(listed) != len(every) {
		t.Errorf("-h lists %d flags, Parse takes %d", len(listed), len(every))
	}
	for _, name := range every {
		if n := strings.Count(" "+strings.Join(listed, " ")+" ", " "+name+" "); n != 1 {
			t.Errorf("-%s is listed %d times", name, n)
		}
	}
	if !slices.Equal(listed[:min(len(commonFlags), len(listed))], commonFlags) {
		t.Errorf("-h lists first %v, want the common settings %v", listed[:min(len(commonFlags), len(listed))], commonFlags)
	}
	if rest := listed[min(len(commonFlags), len(listed)):]; !slices.IsSorted(rest) {
		t.Errorf("the other settings are not in alphabetical order: %v", rest)
	}
	if !strings.Contains(out.String(), "(INBOX_CAP)") || !strings.Contains(out.String(), "(COMPLEXITY_RATE)") {
		t.Errorf("-h does not name the flags' environment variables:\n%s", out.String())
	}
}

// TestEngineTakesEverySetting: Engine fills every field of the engine's
// configuration (found by reflection, so that a new engine setting cannot
// be left out), maps the settings whose 0 means "none" to the engine's
// negative, and refuses a feed mode that is none.
func TestEngineTakesEverySetting(t *testing.T) {
	c, err := parseConfig([]string{"-key-prefix", "p:", "-stream-replicas", "0", "-block-reset-interval", "0", "-local-cache-max-entries", "0"})
	if err != nil {
		t.Fatal(err)
	}
	tracer := noop.NewTracerProvider()
	engine, err := c.Engine([]byte("secret"), tracer)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(engine)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Engine leaves %s unset", v.Type().Field(i).Name)
		}
	}
	if engine.StreamReplicas >= 0 || engine.BlockResetInterval >= 0 || engine.LocalCacheMaxEntries >= 0 {
		t.Errorf("0 in STREAM_REPLICAS, BLOCK_RESET_INTERVAL, LOCAL_CACHE_MAX_ENTRIES gives the engine %d, %s, %d; want negatives (none)",
			engine.StreamReplicas, engine.BlockResetInterval, engine.LocalCacheMaxEntries)
	}
	// The rest is the settings' own Config, which the flags wrote into:
	// one list of the engine's settings, nothing copied by name.
	want := c.Config
	want.TokenSecret, want.TracerProvider = []byte("secret"), tracer
	want.StreamReplicas, want.BlockResetInterval, want.LocalCacheMaxEntries = engine.StreamReplicas, engine.BlockResetInterval, engine.LocalCacheMaxEntries
	if !reflect.DeepEqual(engine, want) {
		t.Errorf("Engine gives %+v, want the settings' Config %+v", engine, want)
	}
	config := reflect.TypeFor[feedconfig.Config]()
	settings := reflect.TypeFor[Settings]()
	for i := range settings.NumField() {
		if f := settings.Field(i); !f.Anonymous {
			if _, dup := config.FieldByName(f.Name); dup {
				t.Errorf("Settings declares %s, which feed/config.Config has: write its flag into Config", f.Name)
			}
		}
	}
	c.Mode = "sideways"
	if _, err := c.Engine(nil, nil); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("feed mode sideways: %v, want an error naming it", err)
	}
}

// TestHelpPrintsNoSecret: with every secret setting in the environment,
// -h says each is set and prints none of their values (they were shown as
// defaults).
func TestHelpPrintsNoSecret(t *testing.T) {
	secrets := map[string]string{
		"TOKEN_SECRET":       "token-secret-value-0123456789abcdef",
		"OPERATOR_TOKEN":     "operator-token-value",
		"MYSQL_DSN":          "feed:dsn-password@tcp(127.0.0.1:3320)/feed",
		"MYSQL_SHARD_DSNS":   "feed:shard-password@tcp(127.0.0.1:3321)/feed,feed:shard-password@tcp(127.0.0.1:3322)/feed",
		"MYSQL_REPLICA_DSNS": "feed:replica-password@tcp(127.0.0.1:3311)/feed",
	}
	for name, value := range secrets {
		t.Setenv(name, value)
	}
	var out strings.Builder
	WriteFlags(&out)
	for name, value := range secrets {
		for _, part := range append(strings.Split(value, ","), "-password@", "-value") {
			if strings.Contains(out.String(), part) {
				t.Errorf("-h shows %s's value (%q):\n%s", name, part, out.String())
			}
		}
	}
	for _, flag := range []string{"-token-secret", "-operator-token", "-mysql-dsn", "-mysql-shards", "-mysql-replica-dsns"} {
		if !regexp.MustCompile(`(?m)^  ` + flag + ` value\n.*\(default set\)`).MatchString(out.String()) {
			t.Errorf("-h does not say %s is set:\n%s", flag, out.String())
		}
	}
	c, err := parseConfig(nil)
	if err != nil || string(c.TokenSecret) != secrets["TOKEN_SECRET"] || c.MySQLDSN != secrets["MYSQL_DSN"] || len(c.MySQLShardDSNs) != 2 {
		t.Fatalf("the secrets are not the settings: %v", err)
	}
}

// TestShardDSNsChecked: data nodes need their head as MYSQL_DSN, and a
// number of them that divides store.MaxShards, checked before anything
// connects.
func TestShardDSNsChecked(t *testing.T) {
	node := func(i int) string { return fmt.Sprintf("root@tcp(127.0.0.1:%d)/feed", 3321+i) }
	nodes := func(n int) string {
		var list []string
		for i := range n {
			list = append(list, node(i))
		}
		return strings.Join(list, ",")
	}
	for _, tc := range []struct {
		head, list, want string
	}{
		{"", nodes(4), "data nodes need -mysql-dsn"},
		{"root@tcp(127.0.0.1:3320)/feed", nodes(3), "3 data nodes; the sharded layout takes a number that divides 16"},
		{"root@tcp(127.0.0.1:3320)/feed", nodes(1), "1 data nodes"},
		{"root@tcp(127.0.0.1:3320)/feed", nodes(4), ""},
		{"root@tcp(127.0.0.1:3320)/feed", nodes(16), ""},
	} {
		t.Setenv("MYSQL_DSN", tc.head)
		t.Setenv("MYSQL_SHARD_DSNS", tc.list)
		_, err := parseConfig(nil)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "MYSQL_SHARD_DSNS")) {
			t.Errorf("MYSQL_DSN=%q and %d data nodes: %v, want %q", tc.head, strings.Count(tc.list, ",")+1, err, tc.want)
		}
	}
}

// TestMaxUnreadCountBounds: -max-unread-count defaults to the engine's
// default, reads MAX_UNREAD_COUNT, and takes 1 to UnreadCountCeiling.
func TestMaxUnreadCountBounds(t *testing.T) {
	checkIntBounds(t, "max-unread-count", "MAX_UNREAD_COUNT", feedconfig.DefaultMaxUnreadCount, feedconfig.UnreadCountCeiling,
		func(c Settings) int { return c.MaxUnreadCount })
}

// TestListLimitsBounds: -max-lists-per-user and -max-list-members default
// to the engine's defaults (100 and 1,000), read their variables, and take
// 1 to their ceilings.
func TestListLimitsBounds(t *testing.T) {
	checkIntBounds(t, "max-lists-per-user", "MAX_LISTS_PER_USER", feedconfig.DefaultMaxListsPerUser, feedconfig.ListsPerUserCeiling,
		func(c Settings) int { return c.MaxListsPerUser })
	checkIntBounds(t, "max-list-members", "MAX_LIST_MEMBERS", feedconfig.DefaultMaxListMembers, feedconfig.ListMembersCeiling,
		func(c Settings) int { return c.MaxListMembers })
}
