package resolvers

//go:generate go tool gqlgen generate
