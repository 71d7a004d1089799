package feed

import "github.com/prometheus/client_golang/prometheus"

// Read paths, the label of feed_reads_total.
const (
	readInbox        = "inbox"         // served from the inbox (and celebrities' outboxes)
	readRebuild      = "rebuild"       // the inbox was missing and was rebuilt first
	readPull         = "pull"          // pull mode: fan-in from MySQL
	readPullFallback = "pull_fallback" // Redis failed: served from MySQL
)

// Where a page read stopped because it made no progress, the label of
// feed_page_no_progress_total. Each is a guard that should never count.
const (
	noProgressCursor = "cursor" // a page's far cursor did not move past the request's: it claims no further page
	noProgressMerge  = "merge"  // a merge round read nothing beyond its bound: the pass returns what it has
)

// metrics are the engine's Prometheus metrics, in a registry of its own so
// that several engines (tests) can live in one process.
type metrics struct {
	registry       *prometheus.Registry
	reads          *prometheus.CounterVec
	rebuilds       prometheus.Counter
	dispatched     prometheus.Counter
	fanoutTasks    prometheus.Counter
	fanoutEntries  prometheus.Counter
	outboxLag      prometheus.Gauge
	outboxLagSecs  prometheus.Gauge
	streamLag      prometheus.Gauge
	streamPending  prometheus.Gauge
	streamLength   prometheus.Gauge
	eventsHandled  *prometheus.CounterVec
	handlerFailure prometheus.Counter
	noProgress     *prometheus.CounterVec

	rateLimited       *prometheus.CounterVec
	rateLimitFallback prometheus.Counter
	passwordHashes    *prometheus.CounterVec
	unreadCounts      prometheus.Counter

	// cacheLookups counts the keys looked up in a cache tier, by tier
	// (local, redis), kind (post, user; outbox in the local tier only) and
	// result (hit, miss, error); a user is one lookup of its two keys.
	cacheLookups *prometheus.CounterVec
	// cacheFillSeconds is how long filling a batch's misses took (the load
	// from the tier below and the write back), by tier and kind.
	cacheFillSeconds *prometheus.HistogramVec
	// followingFallback counts questions about a reader's followees that
	// MySQL answered (the followee set missing, or Redis failing).
	followingFallback prometheus.Counter
	// followingReads counts warm reads of a reader's followee set by
	// result: "sent" (its members crossed the wire) or "unchanged" (this
	// instance's copy was at the set's version); followingSent and
	// followingUnchanged are its two series.
	followingReads                    *prometheus.CounterVec
	followingSent, followingUnchanged prometheus.Counter
	// relationListBuilds counts builds of a relation list's copy for page
	// jumps (jumps.go).
	relationListBuilds prometheus.Counter
	// repostListMisses counts feed entries, reposts of posts older than
	// the inbox window, that MySQL placed: the post's copy keeps no list
	// of its reposts (more than RepostListMax).
	repostListMisses prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_reads_total", Help: "Feed page reads by the path that served them.",
		}, []string{"path"}),
		rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_inbox_rebuilds_total", Help: "Inboxes rebuilt from MySQL.",
		}),
		dispatched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_outbox_dispatched_total", Help: "Outbox events moved to the fan-out stream.",
		}),
		fanoutTasks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_fanout_tasks_total", Help: "Fan-out tasks run (one per batch of followers).",
		}),
		fanoutEntries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_fanout_entries_total", Help: "Inbox changes applied by fan-out (to inboxes that exist).",
		}),
		outboxLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_outbox_lag_events", Help: "Committed outbox events not yet dispatched.",
		}),
		outboxLagSecs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_outbox_lag_seconds", Help: "Age of the oldest undispatched outbox event.",
		}),
		streamLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_lag_entries", Help: "Stream entries the workers' group has not read yet.",
		}),
		streamPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_pending_entries", Help: "Stream entries read but not yet acknowledged.",
		}),
		streamLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feed_stream_length_entries", Help: "Entries in the fan-out stream after this instance's last trim.",
		}),
		eventsHandled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_events_handled_total", Help: "Stream messages handled by kind.",
		}, []string{"kind"}),
		handlerFailure: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_event_failures_total", Help: "Stream messages whose handling failed (they are retried).",
		}),
		noProgress: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_page_no_progress_total", Help: "Page reads cut short because they made no progress, by where: cursor or merge.",
		}, []string{"at"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_rate_limited_total", Help: "Actions refused with RATE_LIMITED, by limit.",
		}, []string{"limit"}),
		rateLimitFallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_rate_limit_fallback_total", Help: "Actions checked against this instance's in-process budget because Redis failed.",
		}),
		passwordHashes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_password_hashes_total", Help: "bcrypt evaluations (the CPU of sign-up and log-in), by use: hash or compare.",
		}, []string{"use"}),
		unreadCounts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_unread_counts_total", Help: "Unread counts computed for queries and markFeedRead (each reads up to 999 unread entries).",
		}),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_cache_lookups_total", Help: "Posts, users and celebrities' outboxes looked up in a cache tier, by tier (local: this process; redis), kind (post, user; outbox: local only) and result (hit, miss; error: Redis failed and MySQL answered).",
		}, []string{"tier", "kind", "result"}),
		cacheFillSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "feed_cache_fill_seconds", Help: "Time to fill one batch's misses of a tier from the tiers below it, by tier and kind.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"tier", "kind"}),
		followingFallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_following_fallbacks_total", Help: "Questions about a reader's followees that MySQL answered: their followee set in Redis was missing or Redis failed.",
		}),
		followingReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feed_following_reads_total", Help: "Reads of a reader's followee set that found it whole in Redis, by result: sent (its members came back) or unchanged (this instance's copy was at its version, so only the version came back).",
		}, []string{"result"}),
		relationListBuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_relation_list_builds_total", Help: "Builds of a followers or following list's copy in Redis for page jumps.",
		}),
		repostListMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feed_repost_list_misses_total", Help: "Feed entries, reposts of posts older than the inbox window, placed from MySQL because the post's cached copy keeps no list of its reposts (more than RepostListMax).",
		}),
	}
	m.registry.MustRegister(m.reads, m.rebuilds, m.dispatched, m.fanoutTasks, m.fanoutEntries,
		m.outboxLag, m.outboxLagSecs, m.streamLag, m.streamPending, m.streamLength, m.eventsHandled, m.handlerFailure,
		m.noProgress, m.rateLimited, m.rateLimitFallback, m.passwordHashes, m.unreadCounts,
		m.cacheLookups, m.cacheFillSeconds, m.followingFallback, m.followingReads, m.relationListBuilds, m.repostListMisses)
	// The Redis tier's series exist from the start, at zero: a dashboard
	// shows a cache that never missed as such, not as no data.
	for _, kind := range []string{kindPost, kindUser} {
		for _, tier := range []string{tierLocal, tierRedis} {
			m.cacheFillSeconds.WithLabelValues(tier, kind)
			m.cacheLookups.WithLabelValues(tier, kind, "hit")
			m.cacheLookups.WithLabelValues(tier, kind, "miss")
		}
		m.cacheLookups.WithLabelValues(tierRedis, kind, "error")
	}
	m.followingSent, m.followingUnchanged = m.followingReads.WithLabelValues("sent"), m.followingReads.WithLabelValues("unchanged")
	return m
}

// Registry is the registry of the engine's metrics, for /metrics.
func (e *Engine) Registry() *prometheus.Registry { return e.metrics.registry }
