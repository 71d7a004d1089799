package dataloader

import (
	"context"
	"slices"

	"feedservice/models"
)

// PrimeHome loads and primes, as PrimeFeed does, what a home page shows:
// the feed page it was read from, the promoted posts (and their authors)
// and the suggested users, in the same calls.
func (l *Loaders) PrimeHome(ctx context.Context, conn *models.HomeConnection, page *models.FeedConnection) error {
	if err := FillPosts(ctx, l.engine, page.Edges); err != nil {
		return err
	}
	all := &models.FeedConnection{Edges: slices.Clone(page.Edges)}
	users := &models.FeedItem{}
	for _, edge := range conn.Edges {
		switch n := edge.Node.(type) {
		case *models.SuggestedUser:
			users.ReposterIDs = append(users.ReposterIDs, n.UserID)
		case *models.PromotedPost:
			if n.LoadedPost != nil {
				all.Edges = append(all.Edges, &models.FeedEdge{Node: &models.FeedItem{LoadedPost: n.LoadedPost}})
			}
		}
	}
	all.Edges = append(all.Edges, &models.FeedEdge{Node: users})
	return l.prime(ctx, all.Edges)
}
