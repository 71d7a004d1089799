// Package keyspace names every Redis key of the engine.
package keyspace

import (
	"strconv"
	"strings"

	"feedservice/store"
)

// Keys names every Redis key of the engine. Every key starts with
// Config.KeyPrefix; the keys of one user carry the hash tag {u<id>} so that
// they share a Redis Cluster slot, and every multi-key operation (a Lua
// script, a RENAME) touches the keys of one user only.
type Keys struct{ prefix string }

// New names the keys that start with prefix.
func New(prefix string) Keys { return Keys{prefix: prefix} }

// Prefix is what every key starts with.
func (k Keys) Prefix() string { return k.prefix }

func (k Keys) user(id int64) string { return "{u" + strconv.FormatInt(id, 10) + "}" }

// inbox is user id's home-feed inbox: a sorted set of original post ids
// scored by the entry's sort key (the id of its first arrival), plus one
// marker member "~<floor>" at score -1: entries below floor are not kept
// (MySQL serves them; floor 0 means MySQL has nothing older). At most
// Config.InboxCap entries; TTL Config.InboxTTL, refreshed by a read once a
// tenth of it has run out. A missing key is an inactive reader, whose inbox
// is rebuilt on the next read.
func (k Keys) Inbox(id int64) string { return k.prefix + "feed:" + k.user(id) }

// inboxSources is a hash beside the inbox: for each entry that did not come
// from its author alone, the sources that brought it, "user:event,...",
// where event is the id of the post or repost, and the one whose event is
// the entry's score written as "user" alone (see timeline's
// formatSources). Same TTL as the inbox.
func (k Keys) InboxSources(id int64) string { return k.prefix + "feedsrc:" + k.user(id) }

// ActiveInboxShards is how many keys the index of active inboxes
// (ActiveInboxes) is spread over: a fan-out batch reads it with one
// ZMSCORE per shard, and no one Cluster node holds it all.
const ActiveInboxShards = 16

// ActiveInboxShard is the shard of the index of active inboxes that holds
// reader id.
func ActiveInboxShard(id int64) int {
	return int(((uint64(id) * 0x9E3779B97F4A7C15) >> 32) % ActiveInboxShards)
}

// activeInboxes is shard n of the index of the readers who may have an
// inbox: a sorted set of reader ids scored by the time (Unix ms) until
// which their inbox may live. It is raised before an inbox is built and
// before its TTL is refreshed, so an inbox never outlives its score; the
// fan-out's plain writes go only to the readers it names (an inbox that
// went earlier, dropped by a reset, takes a write that its reader never
// trusts: see timeline.Inboxes.Deliver). Members past their time are pruned
// by the fan-out. No TTL.
func (k Keys) ActiveInboxes(n int) string { return k.prefix + "active:{a" + strconv.Itoa(n) + "}" }

// ConnectedReaderShards is how many keys the index of connected readers
// (ConnectedReaders) is spread over; a reader is in the shard of the same
// number as in the index of active inboxes (ActiveInboxShard).
const ConnectedReaderShards = ActiveInboxShards

// ConnectedReaderShard is the shard of the index of connected readers that
// holds reader id.
func ConnectedReaderShard(id int64) int { return ActiveInboxShard(id) }

// connectedReaders is shard n of the index of the readers who have a live
// subscription open on some instance: a sorted set of reader ids scored by
// the time (Unix ms) until which the entry holds. Each instance's hub adds
// a reader when a listener of theirs opens there, removes them when their
// last one there closes, and every live.ConnectedRefreshEvery raises the
// scores of all its readers to live.ConnectedValidity from now in one
// pipeline, pruning the members past their time from the shards it writes.
// Readers take a member past its time for absent. The fan-out of a new
// entry writes the inboxes of the readers it names first. At most the
// readers connected within ConnectedValidity; TTL ConnectedValidity, set
// again by each write, so a shard no instance writes goes.
func (k Keys) ConnectedReaders(n int) string {
	return k.prefix + "connected:{c" + strconv.Itoa(n) + "}"
}

// inboxTemp is where a rebuild writes before it swaps the inbox in.
func (k Keys) InboxTemp(id int64) string { return k.prefix + "feed:" + k.user(id) + ":tmp" }

// inboxSourcesTemp is where a rebuild writes the sources.
func (k Keys) InboxSourcesTemp(id int64) string { return k.prefix + "feedsrc:" + k.user(id) + ":tmp" }

// following is the set of the ids user id follows, beside their inbox,
// plus the marker member "~" so that an empty set is told from a missing
// one. It lets a warm read (the followed celebrities, whether an entry's
// source is still followed, viewerIsFollowing) skip MySQL. Built and
// swapped in with the inbox, same TTL, refreshed with it on read; changed
// by follow, unfollow and removeFollower after their commit and again by
// their stream events. Missing: MySQL answers.
func (k Keys) Following(id int64) string { return k.prefix + "following:" + k.user(id) }

// followingVersion is a token that every write of user id's followee set
// replaces (a random one from the writer, in the same script), with the
// set's TTL. A reader that keeps a copy of the set uses it only while the
// token it read the copy with is the one there: see followeeCopies.
func (k Keys) FollowingVersion(id int64) string { return k.prefix + "following:" + k.user(id) + ":v" }

// followingTemp is where a rebuild writes the followee set.
func (k Keys) FollowingTemp(id int64) string { return k.prefix + "following:" + k.user(id) + ":tmp" }

// recentWrite is "1" while user id's lag-tolerant reads must stay on the
// MySQL primary after a write of theirs (see package replicas); a string with
// TTL 2 x ReplicaMaxLag, set only when replicas are configured.
func (k Keys) RecentWrite(id int64) string { return k.prefix + "wrote:" + k.user(id) }

// rebuildLock is held (a token, TTL rebuildLockTTL) while a rebuild of user
// id's inbox runs, so that one runs at a time across instances.
func (k Keys) RebuildLock(id int64) string { return k.prefix + "rebuild:" + k.user(id) }

// BlockReset is held (TTL Config.BlockResetInterval) after a block or
// unblock by another user reset user id's inbox: until it expires, such
// changes patch the followee set instead (see timeline.Inboxes.ResetOther).
func (k Keys) BlockReset(id int64) string { return k.prefix + "blockreset:" + k.user(id) }

// BlockResetsDue is a sorted set of the users whose inbox reset an unblock
// deferred (see BlockReset), scored by when it is due (Unix ms).
func (k Keys) BlockResetsDue() string { return k.prefix + "blockresets:due" }

// outbox is author id's recent posts: a sorted set of "post" or
// "repost:original" members scored by post id, with the same "~<floor>"
// marker as an inbox. At most Config.InboxCap entries, TTL Config.InboxTTL,
// refreshed on read; rebuilt from MySQL when missing.
func (k Keys) Outbox(id int64) string { return k.prefix + "posts:" + k.user(id) }

// outboxAdds is the order in which the members of author id's outbox came:
// a sorted set of the outbox's members scored by their add sequence (the
// count in OutboxVersion when each was added; 0 for those a rebuild wrote).
// It lets a reader fold into their inbox only what came since they last
// folded (see timeline's fold.go), whatever the posts' ids. Trimmed with
// the outbox; the outbox's TTL.
func (k Keys) OutboxAdds(id int64) string { return k.prefix + "posts:" + k.user(id) + ":adds" }

// outboxVersion is the version of author id's outbox: "<epoch>:<n>", where
// the epoch is a random token (24 hex digits) that a rebuild's swap draws,
// and also a write that finds the outbox missing, and n counts the writes
// since (an addition or a removal raises it, in the script that makes it).
// So an instance's copy of the outbox taken at a version is the outbox as
// long as the version is there (package outbox's copies.go), and a fold's mark of
// the same epoch knows which members came since (OutboxAdds). TTL
// Config.InboxTTL, set by each write and refreshed with the outbox;
// missing: no copy is trusted.
func (k Keys) OutboxVersion(id int64) string { return k.prefix + "posts:" + k.user(id) + ":v" }

// outboxTemp is where a rebuild writes an outbox before it swaps it in.
func (k Keys) OutboxTemp(id int64) string { return k.prefix + "posts:" + k.user(id) + ":tmp" }

// outboxLock is held while author id's outbox is rebuilt.
func (k Keys) OutboxLock(id int64) string { return k.prefix + "rebuild:posts:" + k.user(id) }

// cachedPost is the Redis copy of post id (decimal id, no hash tag: a
// batch reads many posts, one GET each, pipelined): a string holding the
// post in the binary encoding of cache/encoding.go, deleted ones as a tombstone
// (DeletedAt set). Written only by setIfNewerScript; TTL
// Config.PostCacheTTL, not refreshed on read.
func (k Keys) CachedPost(id int64) string {
	return k.prefix + "cache:post:" + strconv.FormatInt(id, 10)
}

// cachedUserInfo is the Redis copy of what of user id changes rarely:
// username, display name, bio, created_at (never the password hash). A
// string in the binary encoding of cache/encoding.go, written only by
// setIfNewerScript; TTL Config.UserCacheTTL, not refreshed on read.
func (k Keys) CachedUserInfo(id int64) string { return k.prefix + "cache:user:" + k.user(id) + ":info" }

// cachedUserCounts is the Redis copy of what of user id changes often: the
// follower, following and post counts and the feed read marker. Encoding,
// writer and TTL as cachedUserInfo.
func (k Keys) CachedUserCounts(id int64) string {
	return k.prefix + "cache:user:" + k.user(id) + ":counts"
}

// cachedLists is the Redis copy of user id's lists: a string holding, in
// JSON, each list's id, name, creation time and members (most recently
// added first; at most Config.MaxListsPerUser lists of
// Config.MaxListMembers). Written only by a fill whose version
// (CachedListsVersion) is still the one it read before it read MySQL;
// deleted by every change of the lists. TTL Config.UserCacheTTL, not
// refreshed on read.
func (k Keys) CachedLists(id int64) string { return k.prefix + "cache:lists:" + k.user(id) }

// cachedListsVersion counts the changes of user id's lists: an integer
// that every change moves up in the script that deletes the copy
// (CachedLists), so that a fill that read MySQL before the change does not
// write. TTL Config.UserCacheTTL, set again by each change.
func (k Keys) CachedListsVersion(id int64) string { return k.CachedLists(id) + ":v" }

// celebrities is a set of the ids of authors whose posts are merged at read
// time, not fanned out (hybrid mode). Small: a handful of authors. No TTL;
// rebuilt from MySQL when missing.
func (k Keys) Celebrities() string { return k.prefix + "celebrities" }

// stream is the fan-out stream (Redis Streams) that the dispatcher fills
// and the workers' consumer group reads. Entries every group acknowledged
// are trimmed every Config.StreamTrimInterval (fanout/streamtrim.go), so it holds
// about the events in flight; capped at about streamMaxLen as a backstop.
func (k Keys) Stream() string { return k.prefix + "fanout" }

// dispatcherLease is held by the one instance dispatching the outbox.
func (k Keys) DispatcherLease() string { return k.prefix + "dispatcher" }

// relayLease is held by the one instance running the relay of the sharded
// layout (store.ApplyRelays).
func (k Keys) RelayLease() string { return k.prefix + "relay" }

// readerChannel is the pub/sub channel of user id's feed: "add <post>
// <key>" when an entry enters their inbox, "change" when their unread count
// may have changed otherwise (an entry left or moved, the read marker
// moved), "follow <user>", "unfollow <user>" or "hide [<user>]" when whose
// posts reach them changed (livemsg.Message).
func (k Keys) ReaderChannel(id int64) string { return k.prefix + "dots:" + k.user(id) }

// inboxesChannel is the pub/sub channel of the fan-out's batches
// (livemsg.Batch): "add <post> <key> <reader> <reader>..." when an entry
// entered the inboxes of those readers, "change <reader>..." when an entry
// of theirs moved or left. One message a batch instead of one a reader on each reader's
// channel: every instance subscribes to it and hands each message to the
// listeners it has of the readers named (see live.Hub). Classic, not
// sharded, on a Redis Cluster too.
func (k Keys) InboxesChannel() string { return k.prefix + "inboxes:changed" }

// authorChannel is the pub/sub channel of author id's posts that are not
// fanned out (a celebrity's, or everyone's in pull mode): "add <post> <key>"
// for a post or repost, "change" for a deletion. Instances subscribe to it
// for the connected readers who follow the author.
func (k Keys) AuthorChannel(id int64) string { return k.prefix + "author:" + k.user(id) }

// AuthorOfChannel is the author whose channel (AuthorChannel) channel is.
func (k Keys) AuthorOfChannel(channel string) (int64, bool) {
	rest, ok := strings.CutPrefix(channel, k.prefix+"author:{u")
	if !ok || !strings.HasSuffix(rest, "}") {
		return 0, false
	}
	id, err := strconv.ParseInt(strings.TrimSuffix(rest, "}"), 10, 64)
	return id, err == nil
}

// celebritiesChannel announces that the set of celebrities changed, so
// that every instance re-subscribes its readers to the right authors.
func (k Keys) CelebritiesChannel() string { return k.prefix + "celebrities:changed" }

// cacheInvalidateChannel is the pub/sub channel on which an instance names
// the users and posts it changed ("user 1 2", "post 3"), so that every
// instance drops its local copies of them, and the users who logged out
// ("logout 1"), so that every instance closes their websockets
// (livemsg.Invalidation). Every hub subscribes to it.
func (k Keys) CacheInvalidateChannel() string { return k.prefix + "cache:invalidate" }

// idNode is a string holding the token of the instance that leases node n
// of the id layout (see package ids). TTL nodeLeaseTTL, renewed while it lives.
func (k Keys) IDNode(n int) string { return k.prefix + "idnode:" + strconv.Itoa(n) }

// homeCandidates is user id's inserted home entries: a sorted set whose
// members pack the kind into the item id (kind<<53 | id: integers, so a listpack holds each in a few bytes), scored by
// the count of the viewer's followees who follow a suggested user (0 for
// the other kinds), plus the member 0 so that an empty set is told from a
// missing one. At most MaxSuggestions + MaxPromotedPosts + 1 members; TTL
// Config.HomeCandidatesTTL. Missing: worked out again from MySQL.
func (k Keys) HomeCandidates(id int64) string { return k.prefix + "home:" + k.user(id) }

// homeEpoch is a counter of user id's dismissals, in the slot of their
// home inserts: a set worked out from MySQL is kept only if no dismissal
// came in between (keepInsertsScript). TTL 2 x Config.HomeCandidatesTTL.
func (k Keys) HomeEpoch(id int64) string { return k.HomeCandidates(id) + ":epoch" }

// promoted is the promoted post ids (the same packing), plus the member 0;
// at most MaxPromotedPosts; TTL PromotedCacheTTL, dropped by every change.
func (k Keys) Promoted() string { return k.prefix + "home:promoted" }

// relationList is the ordered copy of user id's followers or following
// list (store.RelationList 1 or 2) that page jumps read (package jumps): a
// sorted set of the other users' ids scored by the follow id, so that rank
// 0 of ZREVRANGE is the newest follow. Kept only for lists of at least
// Config.JumpCacheFollowers entries (about 60 bytes a member past the
// listpack size: some 60 MB for a million followers); TTL
// Config.JumpCacheTTL, refreshed by each jump.
func (k Keys) RelationList(list store.RelationList, id int64) string {
	return k.prefix + "rel:" + strconv.Itoa(int(list)) + ":" + k.user(id)
}

// relationListTemp is where a build writes the copy before it swaps it in.
func (k Keys) RelationListTemp(list store.RelationList, id int64) string {
	return k.RelationList(list, id) + ":tmp"
}

// relationListLock is held (a token, TTL relationListLockTTL) while the
// copy is built, so that one build runs at a time across instances.
func (k Keys) RelationListLock(list store.RelationList, id int64) string {
	return k.RelationList(list, id) + ":lock"
}

// relationListPending is a list of the other users' ids whose relation
// changed while the copy was built, for the builder to settle; TTL
// relationListLockTTL.
func (k Keys) RelationListPending(list store.RelationList, id int64) string {
	return k.RelationList(list, id) + ":pending"
}
