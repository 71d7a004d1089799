// Package resolvers maps the GraphQL schema onto the feed engine. Each
// resolver checks its arguments and the viewer, makes one engine call, and
// maps the answer; none talks to Redis or SQL.
package resolvers

import (
	"feedservice/feed"
	"feedservice/graph"
)

// Resolver is the root of all resolvers.
type Resolver struct {
	Engine *feed.Engine
}

func (r *Resolver) Query() graph.QueryResolver               { return &queryResolver{r} }
func (r *Resolver) Mutation() graph.MutationResolver         { return &mutationResolver{r} }
func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }
func (r *Resolver) User() graph.UserResolver                 { return &userResolver{r} }
func (r *Resolver) Post() graph.PostResolver                 { return &postResolver{r} }
func (r *Resolver) UserEdge() graph.UserEdgeResolver         { return &userEdgeResolver{r} }
func (r *Resolver) RelatedUserEdge() graph.RelatedUserEdgeResolver {
	return &relatedUserEdgeResolver{r}
}
func (r *Resolver) FeedConnection() graph.FeedConnectionResolver {
	return &feedConnectionResolver{r}
}

func (r *Resolver) HomeConnection() graph.HomeConnectionResolver {
	return &homeConnectionResolver{r}
}
func (r *Resolver) SuggestedUser() graph.SuggestedUserResolver { return &suggestedUserResolver{r} }
func (r *Resolver) PromotedPost() graph.PromotedPostResolver   { return &promotedPostResolver{r} }
func (r *Resolver) PromotePostPayload() graph.PromotePostPayloadResolver {
	return &promotePostPayloadResolver{r}
}

type (
	homeConnectionResolver     struct{ *Resolver }
	suggestedUserResolver      struct{ *Resolver }
	promotedPostResolver       struct{ *Resolver }
	promotePostPayloadResolver struct{ *Resolver }
	queryResolver              struct{ *Resolver }
	mutationResolver           struct{ *Resolver }
	subscriptionResolver       struct{ *Resolver }
	userResolver               struct{ *Resolver }
	postResolver               struct{ *Resolver }
	userEdgeResolver           struct{ *Resolver }
	relatedUserEdgeResolver    struct{ *Resolver }
	feedConnectionResolver     struct{ *Resolver }
)
