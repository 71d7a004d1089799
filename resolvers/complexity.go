package resolvers

import (
	"feedservice/feed"
	"feedservice/graph"
)

// Complexity prices the fields that return many objects, for the complexity
// limit: a connection costs 1 plus its page size (first, or last, or the
// default page) times what each of its entries selects; a list costs 1 plus
// its most entries times the same. Every other field costs 1 plus its
// children (gqlgen's default).
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Feed = connectionCost
	c.User.Timeline = connectionCost
	c.User.Followers = connectionCost
	c.User.Following = connectionCost
	c.Query.Nodes = func(child int, ids []string) int { return 1 + len(ids)*child }
	c.FeedItem.Reposters = func(child int) int { return 1 + feed.MaxReposters*child }
	return c
}

// connectionCost counts a page as its size; a size past MaxPageSize is
// priced at MaxPageSize, so that its client hears the clearer page-size
// error from the resolver instead.
func connectionCost(child int, first *int, _ *string, last *int, _ *string) int {
	size := feed.DefaultPageSize
	switch {
	case first != nil:
		size = *first
	case last != nil:
		size = *last
	}
	return 1 + min(max(size, 0), feed.MaxPageSize)*child
}
