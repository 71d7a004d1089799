package resolvers

import (
	"feedservice/feed"
	"feedservice/graph"
)

// UnreadCountCost is the price of FeedConnection.unreadCount: a count reads
// the viewer's row and up to feed.MaxUnreadCount inbox keys, priced like a
// default page (feed.DefaultPageSize) of one field each. It is computed once
// per response (dataloader.Loaders.UnreadCount), so aliases do not repeat
// it; each is priced all the same, with the feed page it reads.
const UnreadCountCost = 20

// Complexity prices the fields that return many objects, for the complexity
// limit: a connection costs 1 plus its page size (first, or last, or the
// default page; never less than one entry) times what each of its entries
// selects; a list costs 1 plus its most entries times the same. The unread
// count costs UnreadCountCost. Every other field costs 1 plus its children
// (gqlgen's default).
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Feed = connectionCost
	c.Query.Home = connectionCost
	c.HomeConnection.UnreadCount = func(int) int { return UnreadCountCost }
	c.User.Timeline = connectionCost
	c.User.Followers = relationCost
	c.User.Following = relationCost
	c.Query.Nodes = func(child int, ids []string) int { return 1 + len(ids)*child }
	c.FeedItem.Reposters = func(child int) int { return 1 + feed.MaxReposters*child }
	c.FeedConnection.UnreadCount = func(int) int { return UnreadCountCost }
	return c
}

// connectionCost counts a page as its size; a size past MaxPageSize is
// priced at MaxPageSize, so that its client hears the clearer page-size
// error from the resolver instead. A page of 0 (or less) is priced as one
// entry: the connection's own fields, pageInfo and unreadCount, are work
// however few entries it holds.
func connectionCost(child int, first *int, _ *string, last *int, _ *string) int {
	size := feed.DefaultPageSize
	switch {
	case first != nil:
		size = *first
	case last != nil:
		size = *last
	}
	return 1 + min(max(size, 1), feed.MaxPageSize)*child
}

// relationCost prices a followers or following page, a page jump (offset)
// included, as connectionCost: a jump reads one page, whatever its offset.
func relationCost(child int, first *int, after *string, last *int, before *string, _ *int) int {
	return connectionCost(child, first, after, last, before)
}
