package resolvers

//go:generate go run feedservice/internal/fastexec/cmd/gqlgen
