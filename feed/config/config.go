// Package config holds the engine's settings (Config), their defaults, and
// the limits of the public API.
package config

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Limits of the public API. Each is checked at its edge by a test.
const (
	DefaultPageSize     = 20  // entries of a connection page when neither first nor last is given
	MaxPageSize         = 100 // the largest first or last
	MaxPostChars        = 500 // a post body's length after trimming, in Unicode code points
	MinUsernameChars    = 3
	MaxUsernameChars    = 30
	MinPasswordChars    = 10
	MaxPasswordChars    = 200
	MaxDisplayNameChars = 50
	// MaxCombiningMarksPerChar is how many combining marks (Unicode's
	// category M) a display name may stack on one visible character:
	// Vietnamese stacks two, Hebrew with its points and cantillation up to
	// four, an emoji keycap two; "a" with 40 acute accents drew a column
	// over the names around it.
	MaxCombiningMarksPerChar = 4
	MaxListNameChars         = 100 // a list's name after trimming, in Unicode code points
	MaxBioChars              = 300
	MaxReposters             = 10  // reposters listed on one feed entry
	MaxNodesPerRequest       = 100 // ids one nodes() call may ask for
	// MaxHomeInsertEvery is the largest Config.HomeInsertEvery: past it
	// the inserted kinds would not show on a page of MaxPageSize.
	MaxHomeInsertEvery = 100
	// The bounds of the suggested users of one viewer (package home):
	// the work is at most SuggestFollowees * SuggestPerFollowee index
	// entries, once per HomeCandidatesTTL.
	SuggestFollowees     = 50  // the viewer's most recent followees looked at
	SuggestPerFollowee   = 100 // the most recent followees of each of them looked at
	SuggestMinFollowedBy = 2   // followees that must follow an account before it is suggested
	MaxSuggestions       = 10  // suggested users kept per viewer
	MaxPromotedPosts     = 10  // promoted posts shown, the most recently promoted
	// MaxListOffset is the largest offset of a followers or following
	// page jump: past the longest list this service expects (a celebrity's
	// tens of millions), small enough that an offset cannot overflow a rank.
	MaxListOffset = 100_000_000
	// UnreadCountCeiling bounds Config.MaxUnreadCount: a count reads up to
	// that many inbox entries (or pulled rows) on every red dot, and
	// UnreadCountCost prices it at a default page.
	UnreadCountCeiling = 9999
)

// Config holds the engine's settings; the server fills it from flags and
// the environment.
type Config struct {
	// KeyPrefix starts every Redis key, so that tests and tenants can share a server.
	KeyPrefix string
	// TokenSecret signs bearer tokens (HS256).
	TokenSecret []byte
	// TokenTTL is how long a bearer token stays valid.
	TokenTTL time.Duration
	// BcryptCost is the work factor of password hashes.
	BcryptCost int
	// NodeID is this instance's part of every id it makes (0-31); negative
	// means lease a free one from Redis.
	NodeID int

	// Mode says how home feeds are built: ModePull, ModePush or ModeHybrid.
	Mode Mode
	// CelebrityFollowers is the follower count from which an author's posts
	// are not fanned out but merged at read time (hybrid mode).
	CelebrityFollowers int
	// InboxCap is the most entries an inbox (or an author's outbox) keeps
	// once trimmed; an inbox trims when it grows past it by
	// InboxCap/inboxTrimSlackDivisor.
	InboxCap int
	// InboxTTL is how long an unread inbox lives; a read refreshes it once a
	// tenth of it has run out (see timeline.inboxTTLRefreshDivisor).
	InboxTTL time.Duration
	// FollowingReadMax is the most followees a read takes whole from the
	// reader's followee set, in the round trip that finds their inbox; a
	// reader who follows more is asked about the ids each page needs
	// (SMISMEMBER), one round trip more.
	FollowingReadMax int
	// JumpCacheFollowers is the length from which a followers or following
	// list's page jumps are read from its ordered copy in Redis, not from
	// MySQL's offset index (see package jumps).
	JumpCacheFollowers int
	// JumpCacheTTL is how long such a copy lives after the last jump.
	JumpCacheTTL time.Duration
	// FanoutBatchSize is the most followers one fan-out task serves.
	FanoutBatchSize int
	// FanoutWorkers is how many fan-out workers this instance runs; 0 runs
	// none (an API-only instance).
	FanoutWorkers int
	// Dispatch runs the outbox dispatcher on this instance (one instance at a
	// time dispatches, by lease; any may try).
	Dispatch bool
	// StreamTrimInterval is how often the dispatching instance (the lease
	// holder) drops the fan-out stream's entries that every consumer group
	// acknowledged.
	StreamTrimInterval time.Duration
	// StreamReplicas is how many replicas of the stream's master must
	// hold an entry before it counts as added (see fanout/streamappend.go): all
	// of them when the master has fewer; negative waits for none.
	StreamReplicas int
	// StreamReplicaTimeout is the longest an append waits for them; past
	// it the append fails and is tried again.
	StreamReplicaTimeout time.Duration
	// RateLimitWarnInterval is the least time between two warnings that a
	// cache read or write failed because Redis did (the server gives its
	// rate limiter the same interval); the ones between are counted in the
	// next.
	RateLimitWarnInterval time.Duration
	// PostCacheTTL is how long the Redis copy of a post lives after it was
	// written (see package cache); a read does not extend it.
	PostCacheTTL time.Duration
	// MaxUnreadCount caps the unread count: past it the red dot shows this
	// number, and counting stops there, so a long-absent reader costs no
	// more. 1 to UnreadCountCeiling.
	MaxUnreadCount int
	// RepostListMax is the most live reposts a post's copy lists (see
	// package cache): a feed entry that is a repost of a post older than the
	// inbox window is placed from that list. A post reposted more often
	// keeps no list, and such an entry is placed from MySQL.
	RepostListMax int
	// FoldsRunning bounds the folds of celebrities' posts into inboxes
	// (hybrid mode) that one instance runs at once, after the pages that
	// merged them: a burst of pages (a celebrity's post brings every
	// connected follower to read) must not queue thousands. A page that
	// finds every slot taken folds nothing; a later page folds.
	FoldsRunning int
	// RebuildsRunning bounds the rebuilds of inboxes that one instance runs
	// at once in the background, after the pages of returning readers,
	// which answer from a read of MySQL of the page's size: a burst of
	// returning readers gets its pages first, and their inboxes as the
	// rebuilds that wait their turn (MaxWaitingRebuilds) reach them.
	RebuildsRunning int
	// RebuildDepth is how many entries the rebuild of an inbox writes: the
	// reader's newest RebuildDepth, at most InboxCap. The fan-out fills the
	// inbox up to InboxCap from there; the pages below its floor read
	// MySQL, as below a full inbox's.
	RebuildDepth int
	// MaxListsPerUser is the most lists one user may keep; createList is
	// refused past it. 1 to ListsPerUserCeiling.
	MaxListsPerUser int
	// MaxListMembers is the most members one list may hold; addToList is
	// refused past it (a list feed merges its members' posts, so it bounds
	// a list page's work). 1 to ListMembersCeiling.
	MaxListMembers int
	// UserCacheTTL is how long the Redis copies of a user's info and counts
	// live after they were written; a read does not extend them.
	UserCacheTTL time.Duration
	// LocalCacheMaxEntries bounds each local tier (users, posts, followee-set copies) of this
	// process in entries; 0 means the default, negative turns the local
	// tiers off (the server maps LOCAL_CACHE_MAX_ENTRIES=0 to it).
	LocalCacheMaxEntries int
	// LocalCacheMaxBytes bounds each local tier in bytes, as estimated
	// from the values' fields.
	LocalCacheMaxBytes int64
	// LocalCacheTTL is how long a local copy serves before it is read
	// again from below: the bound of staleness for an instance that missed
	// an invalidation message.
	LocalCacheTTL time.Duration
	// HomeInsertEvery puts an inserted entry (a promoted post, a suggested
	// user) in every Nth place of the home connection: N-1 feed entries,
	// then one insert. 0 turns them off; 2 to MaxHomeInsertEvery.
	HomeInsertEvery int
	// HomeCandidatesTTL is how long a viewer's suggested users (and the
	// promoted posts they dismissed) are kept in Redis before they are
	// worked out again from MySQL.
	HomeCandidatesTTL time.Duration
	// BlockResetInterval bounds how often a block or unblock by others
	// resets a user's inbox and followee set: at most once per interval
	// (see timeline.Inboxes.ResetOther). 0 means the default; negative resets
	// at every change (the server maps BLOCK_RESET_INTERVAL=0 to it).
	BlockResetInterval time.Duration
	// TracerProvider makes the spans of the write path across instances
	// (see package fanout); nil makes none.
	TracerProvider trace.TracerProvider
}

// Mode is a way of building home feeds. All modes give the same feeds.
type Mode string

const (
	// ModePull reads every feed from MySQL at read time (fan-in).
	ModePull Mode = "pull"
	// ModePush fans every post out to its author's followers' inboxes.
	ModePush Mode = "push"
	// ModeHybrid fans out ordinary authors' posts and merges celebrities'
	// at read time.
	ModeHybrid Mode = "hybrid"
)

// ParseMode reads a FEED_MODE value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModePull, ModePush, ModeHybrid:
		return m, nil
	}
	return "", fmt.Errorf("feed mode %q: want pull, push or hybrid", s)
}

// Defaults of Config.
const (
	DefaultTokenTTL           = 30 * 24 * time.Hour
	DefaultBcryptCost         = 10
	DefaultMode               = ModeHybrid
	DefaultCelebrityFollowers = 10000
	DefaultInboxCap           = 800
	DefaultInboxTTL           = 7 * 24 * time.Hour
	DefaultFanoutBatchSize    = 1000
	// DefaultJumpCacheFollowers: under it a jump through MySQL's offset
	// index is as fast, and the copy would cost memory for nothing.
	DefaultJumpCacheFollowers = 10000
	DefaultJumpCacheTTL       = time.Hour
	DefaultFollowingReadMax   = 1000
	DefaultFanoutWorkers      = 4
	// DefaultStreamReplicas: one replica holding an entry is what a
	// failover of the stream's master needs (it promotes a replica).
	DefaultStreamReplicas = 1
	// DefaultStreamReplicaTimeout is ample for a replica in the same
	// data centre (it acknowledges within a millisecond or so) and short
	// enough that a stalled replica delays the fan-out only briefly.
	DefaultStreamReplicaTimeout = 500 * time.Millisecond
	// DefaultRateLimitWarnInterval keeps a Redis outage to one warning of
	// each kind (failed cache reads and writes; in the server, unchecked
	// rate limits) every ten seconds, however many requests come
	// meanwhile.
	DefaultRateLimitWarnInterval = 10 * time.Second
	// DefaultPostCacheTTL keeps a post's copy for a day: a post is read
	// mostly in the day after it is written, and its copy changes only
	// with its repost count and its deletion.
	DefaultPostCacheTTL = 24 * time.Hour
	// DefaultMaxUnreadCount is the red dot's "999+" of most apps.
	DefaultMaxUnreadCount = 999
	// DefaultRepostListMax lists the reposts of all but the most reposted
	// posts, at about 10 bytes each in the copy.
	DefaultRepostListMax = 200
	// DefaultFoldsRunning lets 32 folds run at once: each is one script of
	// some hundred microseconds on Redis, after its page has answered.
	DefaultFoldsRunning = 32
	// DefaultRebuildsRunning lets 4 rebuilds run at once: each is one MySQL
	// statement of about twice InboxCap rows and one write of InboxCap
	// entries, and waits on MySQL more than it computes. On the bench's
	// graph (2 cores, MySQL and Redis beside the server) 2 at once rebuilt
	// about 25 inboxes a second behind a burst of returning readers, 4
	// about 33, with the readers' pages no slower.
	DefaultRebuildsRunning = 4
	// DefaultRebuildDepth rebuilds an inbox of 240 entries, twelve pages of
	// 20: a returning reader's first ten pages, and their look-ahead, come
	// from it. On the bench's graph a rebuild of InboxCap (800) had 4,995
	// returning readers answered at p50 67 ms and p99 204 ms (8 clients),
	// its rebuilds sharing the CPU with the answers, and 240 at 43 and 128
	// ms; but deep pages are the slower the higher an inbox's floor (634
	// pages 2-10 a second against 816), more of their entries placed
	// through MySQL (docs/performance.md).
	DefaultRebuildDepth = 240
	// DefaultMaxListsPerUser and DefaultMaxListMembers are the peers'
	// limits (Mastodon's and Twitter's are of this order): enough for
	// every reader's use, few enough that a list feed's merge stays small.
	DefaultMaxListsPerUser = 100
	DefaultMaxListMembers  = 1000
	// ListsPerUserCeiling and ListMembersCeiling bound the two settings: a
	// list feed's page reads its members' ids whole, and the lists page
	// counts members per list.
	ListsPerUserCeiling = 10_000
	ListMembersCeiling  = 10_000
	// DefaultUserCacheTTL keeps a user's copies for an hour: users are many
	// and their counts move, so the memory goes to the ones active now.
	DefaultUserCacheTTL = time.Hour
	// DefaultLocalCacheMaxEntries holds the users (or the posts) that a
	// busy instance's pages show within a second many times over; at
	// about 300 to 700 bytes each it fits DefaultLocalCacheMaxBytes.
	DefaultLocalCacheMaxEntries = 100_000
	// DefaultLocalCacheMaxBytes keeps the two tiers within 128 MiB of a
	// server's memory at most.
	DefaultLocalCacheMaxBytes = 64 << 20
	// DefaultLocalCacheTTL is the bound of a local copy's staleness after
	// a lost invalidation message (docs/architecture.md, "Cache tiers").
	DefaultLocalCacheTTL = time.Second
	// DefaultHomeInsertEvery makes every fifth home entry an insert.
	DefaultHomeInsertEvery = 5
	// DefaultHomeCandidatesTTL works a viewer's suggestions out again
	// every ten minutes at most: a follow graph moves slowly.
	DefaultHomeCandidatesTTL = 10 * time.Minute
	// DefaultBlockResetInterval lets others' blocks and unblocks reset a
	// user's inbox once a minute at most.
	DefaultBlockResetInterval = time.Minute
	// PromotedCacheTTL bounds how long an instance may show the promoted
	// posts of before a change whose cache drop failed.
	PromotedCacheTTL = time.Minute
	// DefaultStreamTrimInterval is how often the dispatching instance trims
	// the fan-out stream by default.
	DefaultStreamTrimInterval = time.Second
)

// WithDefaults fills the zero settings with their defaults.
func (c Config) WithDefaults() Config {
	if c.TracerProvider == nil {
		c.TracerProvider = noop.NewTracerProvider()
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = DefaultTokenTTL
	}
	if c.BcryptCost == 0 {
		c.BcryptCost = DefaultBcryptCost
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.CelebrityFollowers <= 0 {
		c.CelebrityFollowers = DefaultCelebrityFollowers
	}
	if c.InboxCap <= 0 {
		c.InboxCap = DefaultInboxCap
	}
	if c.InboxTTL <= 0 {
		c.InboxTTL = DefaultInboxTTL
	}
	if c.FollowingReadMax <= 0 {
		c.FollowingReadMax = DefaultFollowingReadMax
	}
	if c.JumpCacheFollowers <= 0 {
		c.JumpCacheFollowers = DefaultJumpCacheFollowers
	}
	if c.JumpCacheTTL <= 0 {
		c.JumpCacheTTL = DefaultJumpCacheTTL
	}
	if c.FanoutBatchSize <= 0 {
		c.FanoutBatchSize = DefaultFanoutBatchSize
	}
	if c.StreamTrimInterval <= 0 {
		c.StreamTrimInterval = DefaultStreamTrimInterval
	}
	if c.StreamReplicas == 0 {
		c.StreamReplicas = DefaultStreamReplicas
	}
	if c.StreamReplicaTimeout <= 0 {
		c.StreamReplicaTimeout = DefaultStreamReplicaTimeout
	}
	if c.BlockResetInterval == 0 {
		c.BlockResetInterval = DefaultBlockResetInterval
	}
	if c.LocalCacheMaxEntries == 0 {
		c.LocalCacheMaxEntries = DefaultLocalCacheMaxEntries
	}
	if c.LocalCacheMaxBytes <= 0 {
		c.LocalCacheMaxBytes = DefaultLocalCacheMaxBytes
	}
	if c.LocalCacheTTL <= 0 {
		c.LocalCacheTTL = DefaultLocalCacheTTL
	}
	if c.RateLimitWarnInterval <= 0 {
		c.RateLimitWarnInterval = DefaultRateLimitWarnInterval
	}
	if c.PostCacheTTL <= 0 {
		c.PostCacheTTL = DefaultPostCacheTTL
	}
	if c.HomeCandidatesTTL <= 0 {
		c.HomeCandidatesTTL = DefaultHomeCandidatesTTL
	}
	if c.MaxUnreadCount <= 0 {
		c.MaxUnreadCount = DefaultMaxUnreadCount
	}
	if c.FoldsRunning <= 0 {
		c.FoldsRunning = DefaultFoldsRunning
	}
	if c.RebuildsRunning <= 0 {
		c.RebuildsRunning = DefaultRebuildsRunning
	}
	if c.RebuildDepth <= 0 {
		c.RebuildDepth = DefaultRebuildDepth
	}
	c.RebuildDepth = min(c.RebuildDepth, c.InboxCap)
	if c.RepostListMax <= 0 {
		c.RepostListMax = DefaultRepostListMax
	}
	if c.UserCacheTTL <= 0 {
		c.UserCacheTTL = DefaultUserCacheTTL
	}
	if c.MaxListsPerUser <= 0 {
		c.MaxListsPerUser = DefaultMaxListsPerUser
	}
	if c.MaxListMembers <= 0 {
		c.MaxListMembers = DefaultMaxListMembers
	}
	return c
}
