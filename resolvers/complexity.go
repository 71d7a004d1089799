package resolvers

import (
	"feedservice/feed/config"
	"feedservice/graph"
)

// UnreadCountCost is the price of FeedConnection.unreadCount: a count reads
// the viewer's row and up to Config.MaxUnreadCount inbox keys (999 by
// default; an operator who raises it toward config.UnreadCountCeiling makes
// a count dearer than priced), priced like a default page
// (config.DefaultPageSize) of one field each. It is computed once per
// response (dataloader.Loaders.UnreadCount), so aliases do not repeat it;
// each is priced all the same, with the feed page it reads.
const UnreadCountCost = 20

// The price of a page of a user's list (followers, following, timeline,
// and the viewer's blockedUsers and mutedUsers) beside its fields, which a list of users multiplies: a page of followers
// for each of 100 followers is 100 reads. Measured against the app's feed
// page of 100 (which the default complexity limit was set by; see
// BenchmarkPricing in api/), a page read costs about 100 of its units and
// each entry (a row, and the user or post it names) about 20; priced as
// plain fields, followers of 100 followers, 30 each, cost 9,300 and took
// the time of 80,000.
const (
	// PageReadCost is one page read: a MySQL query or a Redis round trip.
	PageReadCost = 100
	// ListEntryCost is each entry of the page, on top of what it selects.
	ListEntryCost = 20
)

// TextBytesPerUnit is the bytes of answer one unit of price stands for in
// the price of a text field (textCost): the default complexity limit of
// 10,000 units then buys about 4 MB of text, the default cap on one answer
// (MAX_RESPONSE_BYTES). Priced at 1, a post body of 2,000 bytes made a
// 4 KB document of 9,801 units answer 19.7 MB.
const TextBytesPerUnit = 400

// utf8MaxBytes is the most bytes UTF-8 spends on one code point.
const utf8MaxBytes = 4

// textCost prices a text field of at most maxChars code points: 1, and a
// unit for each TextBytesPerUnit of the most bytes it can hold.
func textCost(maxChars int) func(int) int {
	cost := 1 + maxChars*utf8MaxBytes/TextBytesPerUnit
	return func(int) int { return cost }
}

// Complexity prices the fields that return many objects, for the complexity
// limit: a connection costs 1 plus its page size (first, or last, or the
// default page; never less than one entry) times what each of its entries
// selects; a list costs 1 plus its most entries times the same. The unread
// count costs UnreadCountCost, and so does unreadCountCapped, which reads
// the same count: asked alone, it must not buy the count for less. A long text field costs by the most bytes it
// holds (textCost): a post body 6, a bio 4. Every other field costs 1 plus
// its children (gqlgen's default). The pages of a user's lists cost more
// (userListCost). Each subscription field is priced as its query twin,
// since every event runs it again: unreadCount and unreadBadge (the count
// with its cap) as the count, feedItemAdded as a feed page of one entry.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Post.Body = textCost(config.MaxPostChars)
	c.User.Bio = textCost(config.MaxBioChars)
	c.User.DisplayName = textCost(config.MaxDisplayNameChars)
	c.User.Username = textCost(config.MaxUsernameChars)
	c.Query.Feed = connectionCost
	c.Query.Home = connectionCost
	c.HomeConnection.UnreadCount = func(int) int { return UnreadCountCost }
	c.HomeConnection.UnreadCountCapped = func(int) int { return UnreadCountCost }
	c.User.Timeline = userListCost
	c.User.Followers = relationCost
	c.User.Following = relationCost
	c.Query.BlockedUsers = userListCost
	c.Query.MutedUsers = userListCost
	c.Query.FollowRequests = userListCost
	// A list's pages are MySQL reads of the owner's rows: its feed is the
	// pull path's merge of the members' posts.
	c.Query.Lists = userListCost
	c.List.Members = userListCost
	c.List.Feed = userListCost
	c.List.Name = textCost(config.MaxListNameChars)
	c.Query.Nodes = func(child int, ids []string) int { return 1 + len(ids)*child }
	c.FeedItem.Reposters = func(child int) int { return 1 + config.MaxReposters*child }
	c.FeedConnection.UnreadCount = func(int) int { return UnreadCountCost }
	c.FeedConnection.UnreadCountCapped = func(int) int { return UnreadCountCost }
	c.Subscription.UnreadCount = func(int) int { return UnreadCountCost }
	c.Subscription.UnreadBadge = func(int) int { return UnreadCountCost }
	c.Subscription.FeedItemAdded = func(child int) int { return connectionCost(child, new(1), nil, nil, nil) }
	return c
}

// connectionCost counts a page as its size; a size past MaxPageSize is
// priced at MaxPageSize, so that its client hears the clearer page-size
// error from the resolver instead. A page of 0 (or less) is priced as one
// entry: the connection's own fields, pageInfo and unreadCount, are work
// however few entries it holds.
func connectionCost(child int, first *int, _ *string, last *int, _ *string) int {
	return 1 + pageSize(first, last)*child
}

// pageSize is the entries a page may hold, as connectionCost counts them.
func pageSize(first, last *int) int {
	size := config.DefaultPageSize
	switch {
	case first != nil:
		size = *first
	case last != nil:
		size = *last
	}
	return min(max(size, 1), config.MaxPageSize)
}

// userListCost prices a page of a user's timeline, followers or following,
// or of the viewer's blocked or muted users:
// the read (PageReadCost) and each entry (ListEntryCost) on top of what
// connectionCost counts.
func userListCost(child int, first *int, _ *string, last *int, _ *string) int {
	return 1 + PageReadCost + pageSize(first, last)*(ListEntryCost+child)
}

// relationCost prices a followers or following page, a page jump (offset)
// included, as userListCost: a jump reads one page, whatever its offset.
func relationCost(child int, first *int, after *string, last *int, before *string, _ *int) int {
	return userListCost(child, first, after, last, before)
}
