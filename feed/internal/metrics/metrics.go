// Package metrics holds the engine's Prometheus metrics and their labels.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Read paths, the label of feed_reads_total.
const (
	ReadInbox        = "inbox"         // served from the inbox (and celebrities' outboxes)
	ReadRebuild      = "rebuild"       // the inbox was missing and was rebuilt first
	ReadPull         = "pull"          // pull mode: fan-in from MySQL
	ReadPullFallback = "pull_fallback" // Redis failed: served from MySQL
)

// Where a page read stopped because it made no progress, the label of
// feed_page_no_progress_total. Each is a guard that should never count.
const (
	NoProgressCursor = "cursor" // a page's far cursor did not move past the request's: it claims no further page
	NoProgressMerge  = "merge"  // a merge round read nothing beyond its bound: the pass returns what it has
)

// Metrics are the engine's Prometheus metrics, in a registry of its own so
// that several engines (tests) can live in one process.
type Metrics struct {
	Registry *prometheus.Registry
	Reads    *prometheus.CounterVec
	Rebuilds prometheus.Counter
	// RebuildsWaiting are the background rebuilds of returning readers'
	// inboxes that wait for a slot; RebuildsDropped those that found the
	// waiting line full (the reader's next page asks again).
	RebuildsWaiting prometheus.Gauge
	RebuildsDropped prometheus.Counter
	// InboxesUnindexed are the inboxes a read found without their reader
	// in the index of active inboxes (Redis lost part of its keys), and
	// rebuilt.
	InboxesUnindexed prometheus.Counter
	Dispatched       prometheus.Counter
	FanoutTasks      prometheus.Counter
	FanoutEntries    prometheus.Counter
	OutboxLag        prometheus.Gauge
	OutboxLagSecs    prometheus.Gauge
	StreamLag        prometheus.Gauge
	StreamPending    prometheus.Gauge
	StreamLength     prometheus.Gauge
	EventsHandled    *prometheus.CounterVec
	HandlerFailure   prometheus.Counter
	EventsDropped    *prometheus.CounterVec
	NoProgress       *prometheus.CounterVec
	// LiveUnreadable counts the pub/sub messages the hub could not parse,
	// by channel kind (reader, author, celebrities, inboxes, invalidate).
	LiveUnreadable *prometheus.CounterVec
	// LiveReaders are the readers with a live subscription open on this
	// instance, as the hub last wrote them into the index of connected
	// readers.
	LiveReaders prometheus.Gauge

	PasswordHashes *prometheus.CounterVec
	UnreadCounts   prometheus.Counter

	// cacheLookups counts the keys looked up in a cache tier, by tier
	// (local, redis), kind (post, user; outbox in the local tier only) and
	// result (hit, miss, error); a user is one lookup of its two keys.
	CacheLookups *prometheus.CounterVec
	// cacheFillSeconds is how long filling a batch's misses took (the load
	// from the tier below and the write back), by tier and kind.
	CacheFillSeconds *prometheus.HistogramVec
	// followingFallback counts questions about a reader's followees that
	// MySQL answered (the followee set missing, or Redis failing).
	FollowingFallback prometheus.Counter
	// BlockResetsBounded counts blocks and unblocks by others that found
	// a user's inbox reset within BlockResetInterval and so patched or
	// deferred instead (timeline.Inboxes.ResetOther).
	BlockResetsBounded prometheus.Counter
	// followingReads counts warm reads of a reader's followee set by
	// result: "sent" (its members crossed the wire) or "unchanged" (this
	// instance's copy was at the set's version); followingSent and
	// followingUnchanged are its two series.
	FollowingReads                    *prometheus.CounterVec
	FollowingSent, FollowingUnchanged prometheus.Counter
	// relationListBuilds counts builds of a relation list's copy for page
	// jumps (package jumps).
	RelationListBuilds prometheus.Counter
	// repostListMisses counts feed entries, reposts of posts older than
	// the inbox window, that MySQL placed: the post's copy keeps no list
	// of its reposts (more than RepostListMax).
	RepostListMisses prometheus.Counter
	// folds counts hybrid mode's folds of celebrities' posts into inboxes
	// after a page, by outcome: folded, stale (the followee set changed
	// meanwhile), rebuilding, missing (no inbox), or skipped (every slot
	// taken, or the reader's fold running).
	Folds *prometheus.CounterVec
}

func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_reads_total", Help: "Feed page reads by the path that served them.",
		}, []string{"path"}),
		Rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_inbox_rebuilds_total", Help: "Inboxes rebuilt from MySQL.",
		}),
		RebuildsWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_inbox_rebuilds_waiting", Help: "Rebuilds of returning readers' inboxes waiting for one of REBUILDS_RUNNING slots on this instance.",
		}),
		RebuildsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_inbox_rebuilds_dropped_total", Help: "Rebuilds of returning readers' inboxes not queued, the waiting line being full; the reader's next page asks again.",
		}),
		InboxesUnindexed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_inboxes_unindexed_total", Help: "Inboxes a read found whose reader the index of active inboxes had lost (Redis lost part of its keys): read as missing, and rebuilt.",
		}),
		Dispatched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_outbox_dispatched_total", Help: "Outbox events moved to the fan-out stream.",
		}),
		FanoutTasks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_fanout_tasks_total", Help: "Fan-out tasks run (one per batch of followers).",
		}),
		FanoutEntries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_fanout_entries_total", Help: "Inbox changes applied by fan-out (to inboxes that exist).",
		}),
		OutboxLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_outbox_lag_events", Help: "Committed outbox events not yet dispatched.",
		}),
		OutboxLagSecs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_outbox_lag_seconds", Help: "Age of the oldest undispatched outbox event.",
		}),
		StreamLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_lag_entries", Help: "Stream entries the workers' group has not read yet.",
		}),
		StreamPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_pending_entries", Help: "Stream entries read but not yet acknowledged.",
		}),
		StreamLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_length_entries", Help: "Entries in the fan-out stream after this instance's last trim.",
		}),
		EventsHandled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_events_handled_total", Help: "Stream messages handled by kind.",
		}, []string{"kind"}),
		HandlerFailure: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_event_failures_total", Help: "Stream messages whose handling failed (they are retried).",
		}),
		EventsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_events_dropped_total", Help: "Stream messages no handler can read (a payload that does not decode, an unknown kind), acknowledged without effect, by kind.",
		}, []string{"kind"}),
		LiveUnreadable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_live_messages_unreadable_total", Help: "Pub/sub messages the hub could not parse, taken for lost ones (listeners recount, local copies dropped), by channel kind.",
		}, []string{"channel"}),
		LiveReaders: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_live_readers", Help: "Readers with a live subscription open on this instance, as of the hub's last refresh of the index of connected readers (whose fan-out writes come first).",
		}),
		NoProgress: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_page_no_progress_total", Help: "Page reads cut short because they made no progress, by where: cursor or merge.",
		}, []string{"at"}),
		PasswordHashes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_password_hashes_total", Help: "bcrypt evaluations (the CPU of sign-up and log-in), by use: hash or compare.",
		}, []string{"use"}),
		UnreadCounts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_unread_counts_total", Help: "Unread counts computed for queries and markFeedRead (each reads up to -max-unread-count unread entries, 999 by default).",
		}),
		CacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_cache_lookups_total", Help: "Posts, users and celebrities' outboxes looked up in a cache tier, by tier (local: this process; redis), kind (post, user; outbox: local only) and result (hit, miss; error: Redis failed and MySQL answered).",
		}, []string{"tier", "kind", "result"}),
		CacheFillSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "feed_cache_fill_seconds", Help: "Time to fill one batch's misses of a tier from the tiers below it, by tier and kind.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"tier", "kind"}),
		FollowingFallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_following_fallbacks_total", Help: "Questions about a reader's followees that MySQL answered: their followee set in Redis was missing or Redis failed.",
		}),
		BlockResetsBounded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_block_resets_bounded_total", Help: "Blocks and unblocks by others that did not reset a user's inbox, because one did within BLOCK_RESET_INTERVAL.",
		}),
		FollowingReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_following_reads_total", Help: "Reads of a reader's followee set that found it whole in Redis, by result: sent (its members came back) or unchanged (this instance's copy was at its version, so only the version came back).",
		}, []string{"result"}),
		RelationListBuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_relation_list_builds_total", Help: "Builds of a followers or following list's copy in Redis for page jumps.",
		}),
		RepostListMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_repost_list_misses_total", Help: "Feed entries, reposts of posts older than the inbox window, placed from MySQL because the post's cached copy keeps no list of its reposts (more than RepostListMax).",
		}),
		Folds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_folds_total", Help: "Folds of followed celebrities' posts into a reader's inbox after a hybrid page, by outcome: folded, stale (the followee set changed meanwhile), rebuilding, missing (no inbox), skipped (no slot free); below counts the celebrities a fold left to the merge, their outbox not reaching down to the inbox's floor.",
		}, []string{"outcome"}),
	}
	m.Registry.MustRegister(m.Reads, m.Rebuilds, m.RebuildsWaiting, m.RebuildsDropped, m.InboxesUnindexed, m.Dispatched, m.FanoutTasks, m.FanoutEntries,
		m.OutboxLag, m.OutboxLagSecs, m.StreamLag, m.StreamPending, m.StreamLength, m.EventsHandled, m.HandlerFailure, m.EventsDropped,
		m.LiveUnreadable, m.LiveReaders, m.NoProgress, m.PasswordHashes, m.UnreadCounts,
		m.CacheLookups, m.CacheFillSeconds, m.FollowingFallback, m.BlockResetsBounded, m.FollowingReads, m.RelationListBuilds, m.RepostListMisses, m.Folds)
	// The Redis tier's series exist from the start, at zero: a dashboard
	// shows a cache that never missed as such, not as no data.
	for _, kind := range []string{KindPost, KindUser} {
		for _, tier := range []string{TierLocal, TierRedis} {
			m.CacheFillSeconds.WithLabelValues(tier, kind)
			m.CacheLookups.WithLabelValues(tier, kind, "hit")
			m.CacheLookups.WithLabelValues(tier, kind, "miss")
		}
		m.CacheLookups.WithLabelValues(TierRedis, kind, "error")
	}
	m.FollowingSent, m.FollowingUnchanged = m.FollowingReads.WithLabelValues("sent"), m.FollowingReads.WithLabelValues("unchanged")
	return m
}

// Cache tier and kind labels of feed_cache_lookups_total and
// feed_cache_fill_seconds.
const (
	TierLocal  = "local" // this process's copies
	TierRedis  = "redis"
	KindPost   = "post"
	KindUser   = "user"
	KindOutbox = "outbox" // celebrities' outboxes, in the local tier only
	KindLists  = "lists"  // a user's lists with their members
)
